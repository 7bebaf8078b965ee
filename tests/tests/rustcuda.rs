//! The device API added for Rust-CUDA kernels (issue 34 item 5), run on the GPU when one is
//! present and on the CPU emulator otherwise (`tests::probes`), against CPU references
//! computed independently: `libm` and std's methods on the host for the float traits (mpmath
//! values embedded below for the erf family's inverses and `erfcx`, which `libm` lacks), exact
//! integer sums for the atomic floats, segment arithmetic for the shuffles, hand-written
//! cross and dot products for `vek`. The `compute_NN` cfg test reads the PTX (no GPU).

use core::f64::consts::PI;
use cust::function::LaunchConfig;
use probes::rustcuda::{
    RC_ERF_FUNCTIONS, RC_FLOAT_FUNCTIONS, RC_SHUFFLE_WORDS, rc_atomic_floats, rc_erf_family_f32,
    rc_erf_family_f64, rc_float_f32, rc_float_f64, rc_only_compute_80, rc_vek, rc_warp_shuffles,
};
use tests::{PROBES, PROBES_SM80, dtoh, htod, launch_probe as launch, probes as gpu, zeros};

/// Inputs for the float traits: negatives, fractions, near and at (half-)integers, large.
fn float_inputs() -> Vec<f64> {
    let mut v = vec![
        0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-3, -7.75, 123.456, -1e4, 9.999,
    ];
    for i in 1..40 {
        let x = f64::from(i) * 0.37 - 6.0;
        v.extend([x, x * 13.1]);
    }
    v
}

/// Same bits, or both NaN.
fn same32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn same64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// `cos(π·x)` and `sin(π·x)` in `f64` with `x` reduced modulo 2 first (exact), an
/// independent reference for `cospi`/`sinpi`: the rounding of `π·r` (`|r| < 2`) makes it
/// accurate to about `7e-16` absolute.
fn cos_sin_pi(x: f64) -> (f64, f64) {
    let r = x % 2.0;
    ((PI * r).cos(), (PI * r).sin())
}

/// Runs a pair of float probes, `$k32(x32, out32)` and `$k64(x64, out64)`, each writing `$k`
/// results per argument (one thread per argument), and returns both outputs.
macro_rules! float_probes {
    ($gpu:expr, $x32:expr, $x64:expr, $k:expr, $k32:expr, $k64:expr) => {{
        let gpu = $gpu;
        let (x32, x64): (&[f32], &[f64]) = ($x32, $x64);
        let cfg = LaunchConfig::new((x64.len() as u32).div_ceil(64), 64, 0);
        let d_x32 = htod(gpu, x32);
        let mut d_out32 = zeros::<f32>(gpu, x32.len() * $k);
        launch!(gpu, gpu.module(), $k32, cfg, (&d_x32, &mut d_out32));
        let d_x64 = htod(gpu, x64);
        let mut d_out64 = zeros::<f64>(gpu, x64.len() * $k);
        launch!(gpu, gpu.module(), $k64, cfg, (&d_x64, &mut d_out64));
        (dtoh(&d_out32), dtoh(&d_out64))
    }};
}

#[test]
fn float_traits_give_libms_bits_and_std_definitions() {
    let gpu = gpu();
    let xs = float_inputs();
    let k = RC_FLOAT_FUNCTIONS.len();
    let x32: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
    let (out32, out64) = float_probes!(&gpu, &x32, &xs, k, rc_float_f32, rc_float_f64);

    let mut failures = Vec::new();
    for (i, (&x, &y)) in xs.iter().zip(&x32).enumerate() {
        // Run-time exponent: std's powi then calls compiler-rt's __powisf2/__powidf2.
        let five = std::hint::black_box(5);
        let (s32, c32) = libm::sincosf(y);
        let (s64, c64) = libm::sincos(x);
        // Exact references (`None`: checked against a tolerance below).
        let want32: [Option<f32>; 16] = [
            Some(libm::log10f(y)),
            Some(y.fract()),
            Some(y.rem_euclid(0.75)),
            Some(y.powi(five)),
            Some(s32),
            Some(c32),
            Some(libm::asinhf(y)),
            None,
            None,
            Some(libm::erfcf(y)),
            Some(libm::frexpf(y).0),
            Some(libm::ldexpf(y, 7)),
            Some(libm::lgammaf(y)),
            Some(libm::j1f(y)),
            Some(libm::ynf(3, y.abs() + 0.5)),
            None,
        ];
        let want64: [Option<f64>; 16] = [
            Some(libm::log10(x)),
            Some(x.fract()),
            Some(x.rem_euclid(0.75)),
            Some(x.powi(five)),
            Some(s64),
            Some(c64),
            Some(libm::asinh(x)),
            None,
            None,
            Some(libm::erfc(x)),
            Some(libm::frexp(x).0),
            Some(libm::ldexp(x, 7)),
            Some(libm::lgamma(x)),
            Some(libm::j1(x)),
            Some(libm::yn(3, x.abs() + 0.5)),
            None,
        ];
        for j in 0..k {
            let (got32, got64) = (out32[i * k + j], out64[i * k + j]);
            if let Some(w) = want32[j]
                && !same32(got32, w)
            {
                failures.push(format!(
                    "f32 {}({y:e}): {got32:e}, want {w:e}",
                    RC_FLOAT_FUNCTIONS[j]
                ));
            }
            if let Some(w) = want64[j]
                && !same64(got64, w)
            {
                failures.push(format!(
                    "f64 {}({x:e}): {got64:e}, want {w:e}",
                    RC_FLOAT_FUNCTIONS[j]
                ));
            }
        }
        // Functions libm lacks: within a tolerance of an f64 reference (the f32 results are
        // rounded once from f64, so 1 ulp of the result; f64: the rounding of π·r).
        let (c, s) = cos_sin_pi(f64::from(y));
        let ncdf = |v: f64| 0.5 * libm::erfc(-v / core::f64::consts::SQRT_2);
        for (j, want, got) in [
            (7, c, f64::from(out32[i * k + 7])),
            (8, s, f64::from(out32[i * k + 8])),
            (15, ncdf(f64::from(y)), f64::from(out32[i * k + 15])),
        ] {
            let tol = 2.0 * f64::from(f32::EPSILON) * want.abs().max(1e-6);
            if (got - want).abs() > tol {
                failures.push(format!(
                    "f32 {}({y:e}): {got:e}, want {want:e} ± {tol:e} (diff {:e})",
                    RC_FLOAT_FUNCTIONS[j],
                    got - want
                ));
            }
        }
        // f64: the reference's own error (7e-16 for cospi/sinpi) dominates; norm_cdf's
        // rounding of -x/√2 costs about 2x² ulp in the lower tail (documented): relative
        // (2x² + 16) ulp.
        let (c, s) = cos_sin_pi(x);
        for (j, want, got, tol) in [
            (7, c, out64[i * k + 7], 2e-15),
            (8, s, out64[i * k + 8], 2e-15),
            (
                15,
                ncdf(x),
                out64[i * k + 15],
                ncdf(x) * (2.0 * x * x + 16.0) * f64::EPSILON,
            ),
        ] {
            if (got - want).abs() > tol {
                failures.push(format!(
                    "f64 {}({x:e}): {got:e}, want {want:e} ± {tol:e} (diff {:e})",
                    RC_FLOAT_FUNCTIONS[j],
                    got - want
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// References for the erf family, from mpmath 1.3.0, printed to 50 significant digits
// (`nstr(v, 50)`), for the exact `f64` arguments shown (those that are also `f32` values are
// checked in both precisions):
// - erfinv(x):      `mp.dps = 400; erfinv(mpf(x))`
// - erfcinv(q):     `mp.dps = 400; erfinv(1 - mpf(q))`
// - erfcx(x):       `mp.dps = 60; exp(mpf(x)**2) * erfc(mpf(x))`; for x > 1e6 (where mpmath's
//   erfc fails) `(1 - t + 3*t**2 - 15*t**3) / (x*sqrt(pi))` with `t = 1/(2*x**2)`, the
//   asymptotic series of DLMF 7.12.1, whose next term is below 1e-46 relative
// - normcdfinv(p):  `mp.dps = 400; -sqrt(2) * erfinv(1 - 2*mpf(p))`
// "inf", "-inf" and "NaN" are the limits and the values outside the domain.
/// `(argument, reference)` pairs; the reference as decimal text (`f64::from_str` rounds it).
type Refs = &'static [(f64, &'static str)];

#[rustfmt::skip]
const ERFINV_REFS: Refs = &[
    (0.0, "0"),
    (-0.0, "0"),
    (1e-300, "8.862269254527580358571256534259430638763279645551e-301"),
    (1.0000000031710769e-30, "8.8622692826305170165957229723361058923606637271033e-31"),
    (1.000000013351432e-10, "8.8622693728515650996992630632241878125997549205606e-11"),
    (0.0010000000474974513, "0.00088622719956010540198812300699496394521746043723506"),
    (0.10000000149011612, "0.088855991825306481718675317339136319598036698356117"),
    (-0.25, "-0.22531205501217810472501401395227755478211844780725"),
    (0.5, "0.47693627620446987338141835364313055980896974905947"),
    (0.5000010132789612, "0.47693740356386562501548805319780362200668263249687"),
    (0.75, "0.8134198475976185416902893598934210853247248359575"),
    (-0.8999999761581421, "-1.1630870719457722355120076609568296981873282890921"),
    (0.9900000095367432, "1.8213866009002777749885357865090168501165661361125"),
    (0.9999989867210388, "3.4570747260359500123620488726953735380512732623336"),
    (0.9999999403953552, "3.8325068569007109094582611722094130009161368970182"),
    (0.9999999999999999, "5.8635847487551679272076625858327841643555366783737"),
    (-0.9999999999990905, "-5.051254085249389967072263263258367051586352089974"),
    (1.0, "inf"),
    (-1.0, "-inf"),
    (1.5, "NaN"),
    (-1.0000001, "NaN"),
    (f64::NAN, "NaN"),
];
#[rustfmt::skip]
const ERFCINV_REFS: Refs = &[
    (0.0, "inf"),
    (5e-324, "27.2132932108129488153138238646745892327281551395"),
    (1e-310, "26.644806559364764782010368027046607747834874031684"),
    (1e-300, "26.209469960516123885520731790456089173201240382875"),
    (1e-200, "21.374783049026257632153229763307220235141081749122"),
    (1.401298464324817e-45, "10.01983426588462336796710558632490103738088076863"),
    (9.999999350456404e-39, "9.2032868853719130106852961260302668440659175569217"),
    (9.999999682655225e-21, "6.6015806247320169408081329889624737294922485483652"),
    (9.99999993922529e-09, "4.0522372446002681281468195086122145395121170791422"),
    (0.0010000000474974513, "2.3267537560644048205730247261559717708946441593006"),
    (0.10000000149011612, "1.1630871485684922657898360371079961609174711471403"),
    (0.3499999940395355, "0.6608544335175006145256662114678756353120885811932"),
    (0.5, "0.47693627620446987338141835364313055980896974905947"),
    (0.75, "0.22531205501217810472501401395227755478211844780725"),
    (1.0, "0"),
    (1.25, "-0.22531205501217810472501401395227755478211844780725"),
    (1.5, "-0.47693627620446987338141835364313055980896974905947"),
    (1.7000000476837158, "-0.73286915026505341947454041127429783152166653780664"),
    (1.899999976158142, "-1.1630870719457722355120076609568296981873282890921"),
    (1.9989999532699585, "-2.3267444692626841148700892479307244265114245192012"),
    (1.9999998807907104, "-3.7439211627767996248890304354932145636168665578618"),
    (1.9999999999999998, "-5.8050186831934533001812582703872266311644408159899"),
    (2.0, "-inf"),
    (-0.10000000149011612, "NaN"),
    (2.5, "NaN"),
    (f64::NAN, "NaN"),
];
#[rustfmt::skip]
const ERFCX_REFS: Refs = &[
    (f64::NEG_INFINITY, "inf"),
    (-27.0, "7.9745705240851931270937220946687006488981790965341e+316"),
    (-26.5, "1.9245531624185688092420160539400945859366484185762e+305"),
    (-10.0, "5.3762342836322708968252511031600271747222237491343e+43"),
    (-9.0, "3.0121946291700610967051882603353499631757157438788e+35"),
    (-3.0, "16205.988853999586625469574084050206309035724190299"),
    (-1.0, "5.0089800807622834663098245982148098146943346842357"),
    (-1.000000013351432e-10, "1.0000000001128379182260990251151586878042070391841"),
    (0.0, "1.0"),
    (1.0000000031710769e-30, "0.99999999999999999999999999999887162082932631037021"),
    (0.5, "0.61569034419292587487079342268374193678230639126563"),
    (1.0, "0.42758357615580700441075034449051518082015950316425"),
    (2.5, "0.21080636406114358064711204840670231933830795716046"),
    (5.0, "0.11070463773306862637021208649175305058894686182085"),
    (11.99899959564209, "0.046858100765829521043982071680958696870386005453375"),
    (12.0, "0.046854221014893762619588413399396659043239319157188"),
    (20.0, "0.028174348741051319318649154534470758352515732252965"),
    (26.0, "0.021683584850562906616172991687293202695795319981993"),
    (27.0, "0.020881607990420940674094490192935008940203809937"),
    (100.0, "0.0056416137829894329035564570069515507187060212444029"),
    (10000000000.0, "5.6418958354775628694525850364303380440935254628996e-11"),
    (1.0000000150474662e+30, "5.6418957505813271465424375399905492150092955394756e-31"),
    (3.0000000054977558e+38, "1.8806319417127692612227073669761184413119177464045e-39"),
    (1e+100, "5.641895835477562779758339391400087495483557530938e-101"),
    (1e+300, "5.6418958354775625732544062890220617681040000721833e-301"),
    (1.7976931348623157e+308, "3.1384087339854432127929701792227446902354785515446e-309"),
    (f64::INFINITY, "0"),
    (f64::NAN, "NaN"),
];
#[rustfmt::skip]
const NORMCDFINV_REFS: Refs = &[
    (0.0, "-inf"),
    (5e-324, "-38.467405617144346250784362168461523682416835507494"),
    (1e-300, "-37.047096299361199236547042504890222343638453723845"),
    (1.401298464324817e-45, "-14.12142661335049853871409928197908682971942190726"),
    (9.999999682655225e-21, "-9.2623400931859759317029030666519608056959461914118"),
    (9.999999747378752e-06, "-4.2648907995632870643155263427868309278418097846487"),
    (0.009999999776482582, "-2.3263478824273121913448785272763045532143199456579"),
    (0.025, "-1.9599639845400542117795841942271739679562040968375"),
    (0.10000000149011612, "-1.2815515570538296723414866827306296110707781818885"),
    (0.30000001192092896, "-0.5244004784222137027295372622106644657561673515198"),
    (0.5, "0"),
    (0.6000000238418579, "0.25334716484750904483069554987205416352533777685851"),
    (0.975, "1.959963984540053855604430649826643177289457986316"),
    (0.9990000128746033, "3.0902361298491052688238217943149103577967837717084"),
    (0.9999998807907104, "5.1665781197287531132862060301433403239280188569406"),
    (0.9999999999999999, "8.2095361516013868556307687786659849417534592032454"),
    (1.0, "inf"),
    (-0.5, "NaN"),
    (1.5, "NaN"),
    (f64::NAN, "NaN"),
];

/// `|got - want|` in units of the last place of `want` in `f64` (`2^-1074` below the normal
/// range).
fn ulps64(got: f64, want: f64) -> f64 {
    let exp = (((want.to_bits() >> 52) & 0x7ff) as i32 - 1023).max(-1022);
    (got - want).abs() / libm::ldexp(1.0, exp - 52)
}

/// `|got - want|` in units of the last place of `want` in `f32` (`2^-149` below the normal
/// range); `want` is the `f64` reference, unrounded to `f32`.
fn ulps32(got: f32, want: f64) -> f64 {
    let exp = (((want.to_bits() >> 52) & 0x7ff) as i32 - 1023).max(-126);
    (f64::from(got) - want).abs() / libm::ldexp(1.0, exp - 23)
}

/// Whether `got` is within `bound` ulps (`ulps`, measured by the caller) of the reference, or
/// is the infinity or NaN that the reference rounds to in `got`'s type (`want_rounded`).
fn within(got: f64, want_rounded: f64, ulps: f64, bound: f64) -> bool {
    if want_rounded.is_nan() || got.is_nan() {
        return want_rounded.is_nan() && got.is_nan();
    }
    if want_rounded.is_infinite() || got.is_infinite() {
        return got == want_rounded;
    }
    ulps <= bound
}

/// The erf family that `libm` lacks (`FloatExt::inv_error_function`,
/// `inv_complementary_error_function`, `scaled_complementary_error_function`,
/// `inv_norm_cdf`) on the device: the same bits as the host's calls of the same functions,
/// for every argument and function, and within the documented error of the mpmath
/// references above. `f64` bounds: the largest errors `float.rs` documents (measured over
/// many more arguments: 1.8, 1.9, 3.2 and 2.8 ulp), rounded up, plus 0.5 ulp because the
/// reference here is rounded to `f64` first; `f32` results are the `f64` ones rounded once,
/// within 0.5 ulp plus a hair.
#[test]
fn erf_family_matches_mpmath_and_the_host_bits() {
    use cuda_std::FloatExt;
    let gpu = gpu();
    // (references, f64 bound, f32 bound), in RC_ERF_FUNCTIONS order.
    let tables: [(Refs, f64, f64); 4] = [
        (ERFINV_REFS, 2.0 + 0.5, 0.5001),
        (ERFCINV_REFS, 2.0 + 0.5, 0.5001),
        (ERFCX_REFS, 3.5 + 0.5, 0.5001),
        (NORMCDFINV_REFS, 3.0 + 0.5, 0.5001),
    ];
    let k = RC_ERF_FUNCTIONS.len();
    // Every table's arguments go to every function: the bit comparison with the host covers
    // the special values of each function on the others' arguments too.
    let xs: Vec<f64> = tables
        .iter()
        .flat_map(|(refs, ..)| refs.iter().map(|&(x, _)| x))
        .collect();
    let x32: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
    let (out32, out64) = float_probes!(&gpu, &x32, &xs, k, rc_erf_family_f32, rc_erf_family_f64);

    let mut failures = Vec::new();
    for (i, (&x, &y)) in xs.iter().zip(&x32).enumerate() {
        let host32 = [
            FloatExt::inv_error_function(y),
            FloatExt::inv_complementary_error_function(y),
            FloatExt::scaled_complementary_error_function(y),
            FloatExt::inv_norm_cdf(y),
        ];
        let host64 = [
            FloatExt::inv_error_function(x),
            FloatExt::inv_complementary_error_function(x),
            FloatExt::scaled_complementary_error_function(x),
            FloatExt::inv_norm_cdf(x),
        ];
        for j in 0..k {
            let (got32, got64) = (out32[i * k + j], out64[i * k + j]);
            if !same32(got32, host32[j]) {
                failures.push(format!(
                    "f32 {}({y:e}): device {got32:e}, host {:e}",
                    RC_ERF_FUNCTIONS[j], host32[j]
                ));
            }
            if !same64(got64, host64[j]) {
                failures.push(format!(
                    "f64 {}({x:e}): device {got64:e}, host {:e}",
                    RC_ERF_FUNCTIONS[j], host64[j]
                ));
            }
        }
    }
    let mut first = 0;
    for (j, (refs, bound64, bound32)) in tables.into_iter().enumerate() {
        for (r, &(x, want)) in refs.iter().enumerate() {
            let i = first + r;
            let want: f64 = want.parse().expect("a reference parses as f64");
            let got = out64[i * k + j];
            let ulps = ulps64(got, want);
            if !within(got, want, ulps, bound64) {
                failures.push(format!(
                    "f64 {}({x:e}) = {got:e}, want {want:e}: {ulps:.2} ulp > {bound64}",
                    RC_ERF_FUNCTIONS[j]
                ));
            }
            if f64::from(x as f32).to_bits() == x.to_bits() || x.is_nan() {
                let got = out32[i * k + j];
                let ulps = ulps32(got, want);
                if !within(f64::from(got), f64::from(want as f32), ulps, bound32) {
                    failures.push(format!(
                        "f32 {}({x:e}) = {got:e}, want {want:e}: {ulps:.4} ulp > {bound32}",
                        RC_ERF_FUNCTIONS[j]
                    ));
                }
            }
        }
        first += refs.len();
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn atomic_float_types_sum_exactly_under_contention() {
    let gpu = gpu();
    let (n, block) = (1u32 << 14, 128u32);
    let blocks = n / block;
    let start_bits = 1.5f32;
    let mut f32s = htod(&gpu, &[0.0f32, 0.0, 0.0, start_bits]);
    let mut f64s = htod(&gpu, &[0.0f64, 0.0]);
    let mut per_block = zeros::<f32>(&gpu, blocks as usize);
    launch!(
        &gpu,
        gpu.module(),
        rc_atomic_floats,
        LaunchConfig::new(blocks, block, 0),
        (&mut f32s, &mut f64s, &mut per_block, n)
    );
    // Σ (i mod 64) over i < n: small integers, exact in f32 (< 2^24) in any order.
    let sum: u32 = (0..n).map(|i| i % 64).sum();
    let sum = sum as f32;
    let bits = f32::from_bits(((start_bits.to_bits() ^ 0x8000_0000) & !1) | 2);
    assert_eq!(
        dtoh(&f32s).iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        [sum, -sum, 63.0, bits].map(f32::to_bits),
        "[fetch_add, fetch_sub, fetch_max, xor/and/or]"
    );
    assert_eq!(
        dtoh(&f64s),
        [2.0 * f64::from(sum), f64::from(sum)],
        "[system fetch_add, device fetch_add]"
    );
    assert_eq!(
        dtoh(&per_block),
        vec![block as f32; blocks as usize],
        "block scope"
    );
}

/// The source lane and in-range flag of a shuffle of lane `l`, by segment arithmetic (CUDA C
/// Programming Guide, "Warp Shuffle Functions"): mode 0 idx, 1 up, 2 down, 3 xor.
fn shuffle_source(mode: usize, l: u32, arg: u32, width: u32) -> (u32, bool) {
    let segment = l / width;
    match mode {
        0 => (segment * width + arg % width, true),
        1 if l % width >= arg => (l - arg, true),
        2 if l % width + arg < width => (l + arg, true),
        3 if (l ^ arg) / width <= segment => (l ^ arg, true),
        _ => (l, false),
    }
}

#[test]
fn rust_cuda_shuffles_move_narrow_and_wide_values_and_flag_the_range() {
    let gpu = gpu();
    let lanes = 32usize;
    let in8: Vec<u8> = (0..lanes as u8).map(|l| 0xa0 ^ l.wrapping_mul(7)).collect();
    let in16: Vec<i16> = (0..lanes as i16).map(|l| -1000 - 37 * l).collect();
    let in128: Vec<u32> = (0..4 * lanes as u32)
        .map(|w| w.wrapping_mul(0x9e37_79b9) ^ 0x5bd1_e995)
        .collect();
    let (d8, d16, d128) = (htod(&gpu, &in8), htod(&gpu, &in16), htod(&gpu, &in128));
    for width in [32u32, 16, 8, 4, 1] {
        for arg in [0u32, 1, 3, 5, 17, 31] {
            let mut out = zeros::<u32>(&gpu, lanes * RC_SHUFFLE_WORDS);
            let mut checks = zeros::<u32>(&gpu, lanes * 5);
            launch!(
                &gpu,
                gpu.module(),
                rc_warp_shuffles,
                LaunchConfig::new(1, 32, 0),
                (&d8, &d16, &d128, &mut out, &mut checks, arg, width)
            );
            let (out, checks) = (dtoh(&out), dtoh(&checks));
            for l in 0..lanes {
                let active = checks[l * 5 + 4];
                assert_ne!(active & (1 << l), 0, "activemask of lane {l} lacks it");
                for mode in 0..4 {
                    let (src, in_range) = shuffle_source(mode, l as u32, arg, width);
                    let s = src as usize;
                    let want = [
                        u32::from(in8[s]),
                        in16[s] as u32,
                        in128[4 * s],
                        in128[4 * s + 1],
                        in128[4 * s + 2],
                        in128[4 * s + 3],
                        u32::from(in_range),
                    ];
                    let got = &out[l * RC_SHUFFLE_WORDS + mode * 7..][..7];
                    assert_eq!(
                        got, want,
                        "mode {mode} (idx/up/down/xor), lane {l}, arg {arg}, width {width}: \
                         [u8, i16, u128 words, in range]"
                    );
                    assert_eq!(
                        checks[l * 5 + mode],
                        1,
                        "flags of u8/i16/u128 differ, lane {l}"
                    );
                }
            }
        }
    }
}

#[test]
fn vek_vectors_compute_cross_and_dot_products() {
    let gpu = gpu();
    let n = 100u32;
    let v: Vec<f32> = (0..3 * n)
        .map(|i| (i as f32 * 0.731).sin_cos().0 * 4.0)
        .collect();
    let d_v = htod(&gpu, &v);
    let mut d_out = zeros::<f32>(&gpu, 4 * n as usize);
    launch!(
        &gpu,
        gpu.module(),
        rc_vek,
        LaunchConfig::new(1, 128, 0),
        (&d_v, &mut d_out, n)
    );
    let out = dtoh(&d_out);
    for i in 0..n as usize {
        let a = &v[3 * i..3 * i + 3];
        let j = (i + 1) % n as usize;
        let b = &v[3 * j..3 * j + 3];
        let want = [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
            a[0] * b[0] + a[1] * b[1] + a[2] * b[2],
        ];
        for (k, (&got, want)) in out[4 * i..4 * i + 4].iter().zip(want).enumerate() {
            // vek may sum in another order: a few roundings of terms up to 16.
            let tol = 64.0 * f32::EPSILON;
            assert!(
                (got - want).abs() <= tol,
                "vector {i}, component {k}: {got} vs {want}"
            );
        }
    }
}

/// `cfg(target_feature = "compute_80")` is set by `cuda_builder` for sm_80 builds and not
/// for the sm_70 baseline, so only the sm_80 variant defines the gated kernel.
#[test]
fn compute_nn_cfg_selects_kernels_by_architecture() {
    let entry = format!(".entry {}(", rc_only_compute_80.name());
    assert!(
        !PROBES.ptx.contains(&entry),
        "the sm_70 baseline PTX defines {entry}"
    );
    assert!(
        PROBES_SM80.ptx.contains(&entry),
        "the sm_80 variant's PTX lacks {entry}"
    );
    // Ungated kernels are in both.
    let float = format!(".entry {}(", rc_float_f32.name());
    assert!(PROBES.ptx.contains(&float) && PROBES_SM80.ptx.contains(&float));
}

/// The gated kernel runs from the sm_80 variant (on the emulator: the host body).
#[test]
fn the_compute_80_kernel_runs_from_the_sm80_variant() {
    let gpu = gpu();
    let Some(module) = tests::sm80_module(&gpu) else {
        return;
    };
    let mut out = zeros::<u32>(&gpu, 1);
    launch!(
        &gpu,
        &module,
        rc_only_compute_80,
        LaunchConfig::new(1, 1, 0),
        (&mut out)
    );
    assert_eq!(dtoh(&out), [80]);
}
