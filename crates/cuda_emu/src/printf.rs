//! CUDA's `vprintf` on the host: C format strings over `io::ArgBuffer`'s layout (each
//! argument at the next offset aligned to its size: 4 bytes for `int`, 8 for `long long`,
//! `double`, pointers).

use std::string::String;
use std::vec::Vec;

/// The bytes of a NUL-terminated string, lossily as UTF-8.
///
/// # Safety
/// `p` is null or points to a NUL-terminated string.
pub(crate) unsafe fn c_str(p: *const u8) -> String {
    if p.is_null() {
        return String::from("(null)");
    }
    // SAFETY: the caller's contract.
    let s = unsafe { core::ffi::CStr::from_ptr(p.cast()) };
    String::from_utf8_lossy(s.to_bytes()).into_owned()
}

/// Formats `format` with the arguments at `args`; returns the text and the number of
/// arguments consumed.
///
/// # Safety
/// As `io::vprintf`: `format` is NUL-terminated; `args` holds the arguments the format
/// names, laid out by `ArgBuffer`; `%s` arguments point to NUL-terminated strings.
pub(crate) unsafe fn format(format: *const u8, args: *const u8) -> (String, i32) {
    // SAFETY: the caller's contract.
    let fmt: Vec<u8> = unsafe { core::ffi::CStr::from_ptr(format.cast()) }
        .to_bytes()
        .to_vec();
    let mut out = String::new();
    let mut offset = 0usize;
    let mut count = 0;
    let mut next = |size: usize| -> u64 {
        offset = offset.next_multiple_of(size);
        let v = if args.is_null() {
            0
        } else if size == 4 {
            // SAFETY: the caller's contract: an argument of this size is at this offset.
            u64::from(unsafe { args.add(offset).cast::<u32>().read_unaligned() })
        } else {
            // SAFETY: as above.
            unsafe { args.add(offset).cast::<u64>().read_unaligned() }
        };
        offset += size;
        v
    };
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        i += 1;
        if c != b'%' {
            let start = i - 1;
            while i < fmt.len() && fmt[i] != b'%' {
                i += 1;
            }
            out.push_str(&String::from_utf8_lossy(&fmt[start..i]));
            continue;
        }
        // %[flags][width][.precision][length]conversion
        let mut flags = Flags::default();
        while i < fmt.len() {
            match fmt[i] {
                b'-' => flags.left = true,
                b'+' => flags.plus = true,
                b' ' => flags.space = true,
                b'0' => flags.zero = true,
                b'#' => flags.alt = true,
                _ => break,
            }
            i += 1;
        }
        let mut width = 0usize;
        while i < fmt.len() && fmt[i].is_ascii_digit() {
            width = width * 10 + usize::from(fmt[i] - b'0');
            i += 1;
        }
        let mut precision = None;
        if i < fmt.len() && fmt[i] == b'.' {
            i += 1;
            let mut p = 0usize;
            while i < fmt.len() && fmt[i].is_ascii_digit() {
                p = p * 10 + usize::from(fmt[i] - b'0');
                i += 1;
            }
            precision = Some(p);
        }
        let mut long = 0;
        while i < fmt.len() && matches!(fmt[i], b'l' | b'h' | b'z' | b'j' | b't' | b'L') {
            if matches!(fmt[i], b'l' | b'z' | b'j' | b't') {
                long += 1;
            }
            i += 1;
        }
        let Some(&conv) = fmt.get(i) else { break };
        i += 1;
        // `long` is 64-bit on nvptx64 (LP64), like `long long`, `size_t` and `intmax_t`.
        let int_size = if long >= 1 { 8 } else { 4 };
        let body = match conv {
            b'%' => String::from("%"),
            b'd' | b'i' => {
                count += 1;
                let v = next(int_size);
                let v = if int_size == 4 {
                    i64::from(v as u32 as i32)
                } else {
                    v as i64
                };
                let digits = precision_digits(std::format!("{}", v.unsigned_abs()), precision);
                sign(v < 0, &flags) + &digits
            }
            b'u' | b'x' | b'X' | b'o' => {
                count += 1;
                let v = next(int_size);
                let s = match conv {
                    b'u' => std::format!("{v}"),
                    b'x' => std::format!("{v:x}"),
                    b'X' => std::format!("{v:X}"),
                    _ => std::format!("{v:o}"),
                };
                let prefix = match (flags.alt && v != 0, conv) {
                    (true, b'x') => "0x",
                    (true, b'X') => "0X",
                    (true, b'o') => "0",
                    _ => "",
                };
                String::from(prefix) + &precision_digits(s, precision)
            }
            b'c' => {
                count += 1;
                String::from(char::from(next(4) as u8))
            }
            b'p' => {
                count += 1;
                std::format!("{:#x}", next(8))
            }
            b's' => {
                count += 1;
                let p = next(8) as usize as *const u8;
                // SAFETY: the caller's contract: `%s` arguments are C strings.
                let s = unsafe { c_str(p) };
                match precision {
                    Some(p) => s.chars().take(p).collect(),
                    None => s,
                }
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                count += 1;
                let v = f64::from_bits(next(8));
                float(v, conv, precision, &flags)
            }
            other => {
                let mut s = String::from("%");
                s.push(char::from(other));
                s
            }
        };
        out.push_str(&pad(body, width, &flags, conv));
    }
    (out, count)
}

#[derive(Default)]
struct Flags {
    left: bool,
    plus: bool,
    space: bool,
    zero: bool,
    alt: bool,
}

fn sign(negative: bool, flags: &Flags) -> String {
    String::from(if negative {
        "-"
    } else if flags.plus {
        "+"
    } else if flags.space {
        " "
    } else {
        ""
    })
}

fn precision_digits(digits: String, precision: Option<usize>) -> String {
    match precision {
        Some(p) if digits.len() < p => "0".repeat(p - digits.len()) + &digits,
        _ => digits,
    }
}

fn pad(body: String, width: usize, flags: &Flags, conv: u8) -> String {
    let len = body.chars().count();
    if len >= width {
        return body;
    }
    let fill = width - len;
    if flags.left {
        body + &" ".repeat(fill)
    } else if flags.zero && !matches!(conv, b's' | b'c' | b'p' | b'%') {
        // Zeros go after the sign or 0x prefix.
        let split = body
            .find(|c: char| !matches!(c, '-' | '+' | ' '))
            .map_or(0, |i| {
                if body[i..].starts_with("0x") || body[i..].starts_with("0X") {
                    i + 2
                } else {
                    i
                }
            });
        String::from(&body[..split]) + &"0".repeat(fill) + &body[split..]
    } else {
        " ".repeat(fill) + &body
    }
}

/// `%f`, `%e`, `%g`, `%a` as C prints them.
fn float(v: f64, conv: u8, precision: Option<usize>, flags: &Flags) -> String {
    let upper = conv.is_ascii_uppercase();
    let negative = v.is_sign_negative() && !v.is_nan();
    let a = v.abs();
    let body = if a.is_nan() {
        String::from("nan")
    } else if a.is_infinite() {
        String::from("inf")
    } else {
        match conv.to_ascii_lowercase() {
            b'f' => std::format!("{:.*}", precision.unwrap_or(6), a),
            b'e' => exp_form(a, precision.unwrap_or(6)),
            b'a' => std::format!("{a:e}"),
            _ => {
                let p = match precision.unwrap_or(6) {
                    0 => 1,
                    p => p,
                };
                let x = if a == 0.0 {
                    0
                } else {
                    // The exponent after rounding to `p` significant digits.
                    let e = exp_form(a, p - 1);
                    e.rsplit('e')
                        .next()
                        .and_then(|s| s.parse::<i32>().ok())
                        .unwrap_or(0)
                };
                let s = if x < -4 || x >= p as i32 {
                    exp_form(a, p - 1)
                } else {
                    std::format!("{:.*}", (p as i32 - 1 - x).max(0) as usize, a)
                };
                if flags.alt { s } else { strip_zeros(&s) }
            }
        }
    };
    let body = if upper {
        body.to_ascii_uppercase()
    } else {
        body
    };
    sign(negative, flags) + &body
}

/// `d.ddde±XX`.
fn exp_form(a: f64, precision: usize) -> String {
    let s = std::format!("{:.*e}", precision, a);
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    std::format!(
        "{mantissa}e{}{:02}",
        if exp < 0 { '-' } else { '+' },
        exp.abs()
    )
}

fn strip_zeros(s: &str) -> String {
    let (mantissa, exp) = match s.find('e') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let mantissa = if mantissa.contains('.') {
        mantissa.trim_end_matches('0').trim_end_matches('.')
    } else {
        mantissa
    };
    String::from(mantissa) + exp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(f: &str, words: &[u64]) -> String {
        let f = std::format!("{f}\0");
        // SAFETY: a NUL-terminated format; 8-byte words as ArgBuffer lays them out for
        // 8-byte arguments.
        unsafe { format(f.as_ptr(), words.as_ptr().cast()).0 }
    }

    #[test]
    fn c_formats() {
        assert_eq!(fmt("x=%lld y=%llu%%", &[(-5i64) as u64, 7]), "x=-5 y=7%");
        assert_eq!(
            fmt(
                "%5.2f|%-4lld|%08.3f",
                &[1.23456f64.to_bits(), 3, (-2.5f64).to_bits()]
            ),
            " 1.23|3   |-002.500"
        );
        assert_eq!(
            fmt(
                "%e %g %g %g",
                &[
                    1234.5f64.to_bits(),
                    0.0001f64.to_bits(),
                    1e-5f64.to_bits(),
                    100000.0f64.to_bits()
                ]
            ),
            "1.234500e+03 0.0001 1e-05 100000"
        );
        assert_eq!(
            fmt("%.9g %llx", &[f64::from(0.1f32).to_bits(), 255]),
            "0.100000001 ff"
        );
        // Two 4-byte ints share a word.
        assert_eq!(fmt("%d %u", &[u64::from(u32::MAX) | (7 << 32)]), "-1 7");
    }
}
