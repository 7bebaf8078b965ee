//! The subcommands of the `ferrocuda` binary (one module each) and the argument parsers and
//! output helpers they share.

pub mod bench;
pub mod info;
pub mod mandelbrot;
pub mod mandelbrot_bench;
pub mod vector;
pub mod zoom;

use anyhow::{Context, Result, bail};
use common::{Complex, Palette};
use std::path::PathBuf;

pub fn parse_complex(s: &str) -> Result<Complex<f64>, String> {
    let (re, im) = s
        .split_once(',')
        .ok_or_else(|| format!("`{s}` is not a complex number: write RE,IM, e.g. -0.75,0.1"))?;
    let parse = |part: &str| -> Result<f64, String> {
        let v: f64 = part
            .trim()
            .parse()
            .map_err(|_| format!("`{part}` in `{s}` is not a number"))?;
        if v.is_finite() {
            Ok(v)
        } else {
            Err(format!(
                "`{part}` in `{s}` is not allowed: coordinates must be finite"
            ))
        }
    };
    Ok(Complex::new(parse(re)?, parse(im)?))
}

pub fn parse_finite(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(format!("`{s}` is not allowed: it must be a finite number")),
        Err(_) => Err(format!("`{s}` is not a number")),
    }
}

pub fn parse_palette(s: &str) -> Result<Palette, String> {
    Palette::from_name(s).ok_or_else(|| {
        format!(
            "unknown palette `{s}`; allowed: {}",
            Palette::NAMES.join(", ")
        )
    })
}

/// An output file written atomically: a temporary file in the same folder, renamed over the
/// destination only after the PNG is complete, so an error leaves no partial file (the
/// temporary file is removed when dropped; a process killed by a signal can leave a
/// `.ferrocuda-*.png.part` behind, never a truncated `.png`).
pub struct OutputFile {
    path: PathBuf,
    temp: tempfile::NamedTempFile,
}

impl OutputFile {
    /// Checks the name and that the folder is writable (before any rendering work).
    pub fn create(path: &std::path::Path) -> Result<Self> {
        let is_png = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("png"));
        if !is_png {
            bail!(
                "output file `{}` is not allowed: it must end in .png",
                path.display()
            );
        }
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => std::path::Path::new("."),
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(".ferrocuda-").suffix(".png.part");
        // tempfile creates files owner-only (0600); an image should get the usual mode
        // (0666 less the umask).
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
        let temp = builder.tempfile_in(dir).map_err(|e| {
            anyhow::anyhow!(
                "cannot write the output file `{}`: folder `{}`: {}",
                path.display(),
                dir.display(),
                e.kind()
            )
        })?;
        Ok(Self {
            path: path.to_path_buf(),
            temp,
        })
    }

    pub fn write_png(self, width: u32, height: u32, rgb: &[u8]) -> Result<()> {
        let file = std::io::BufWriter::new(self.temp.as_file());
        let encoder = image::codecs::png::PngEncoder::new(file);
        image::ImageEncoder::write_image(
            encoder,
            rgb,
            width,
            height,
            image::ExtendedColorType::Rgb8,
        )
        .with_context(|| format!("encoding the PNG for `{}`", self.path.display()))?;
        self.temp
            .persist(&self.path)
            .with_context(|| format!("cannot write the output file `{}`", self.path.display()))?;
        Ok(())
    }
}
