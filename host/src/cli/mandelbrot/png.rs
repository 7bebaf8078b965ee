//! The PNG encoder a render's bands are streamed into.

use super::args::PngCompression;
use anyhow::{Context, Result, bail};
use std::time::{Duration, Instant};

/// The sink's error when the PNG encoder has stopped (its own error is reported instead).
#[derive(Debug, thiserror::Error)]
#[error("the PNG encoder stopped")]
pub(super) struct EncoderStopped;

/// Encodes the RGB rows received on `rx` (top first, whole rows) as a `width × height` PNG
/// into `file` at compression `level`; returns the time spent encoding.
///
/// `mtpng` compresses the rows in parallel on rayon's thread pool, 256 KiB pieces at a time
/// (the "Up" filter on every row), each piece its own IDAT chunk as soon as it is ready
/// ("streaming"), so memory stays bounded by the pieces in flight, not the image. The pieces
/// form one valid zlib stream: each piece is deflated with the previous piece's last 32 KiB
/// as its dictionary and ends on a byte boundary (a sync flush), and their Adler-32 checksums
/// are combined, so threads never split one deflate block. Rows arrive band by band while
/// the next bands render; `rx`'s bound (one band) keeps the renderer from running ahead.
/// On an H200 machine (16 cores), 32768² full view, 256-row bands: end to end 1.31–1.55 s
/// and 55.1 MB with "Up", 1.56–1.79 s and 56.6 MB with libpng's adaptive choice per row
/// With 1024-row bands, "None" made this discrete-colour view smaller (45.3 MB) in about
/// the same time, but smooth colouring's gradients are what filters are for; "Sub" gave
/// 58.5 MB. png's single-threaded `Fast` level took 3.05–3.31 s in the same session.
pub(super) fn encode_png(
    file: std::fs::File,
    width: u32,
    height: u32,
    level: PngCompression,
    rx: std::sync::mpsc::Receiver<Vec<u8>>,
) -> Result<Duration> {
    let mut busy = Duration::ZERO;
    let mut options = mtpng::encoder::Options::new();
    options
        .set_compression_level(level.level())
        .and_then(|()| options.set_streaming(true))
        .and_then(|()| options.set_filter_mode(mtpng::Mode::Fixed(mtpng::Filter::Up)))
        .context("setting the PNG encoder's options")?;
    let mut header = mtpng::Header::new();
    header
        .set_size(width, height)
        .and_then(|()| header.set_color(mtpng::ColorType::Truecolor, 8))
        .context("describing the PNG image")?;
    // No BufWriter: the encoder hands the file whole IDAT chunks.
    let mut encoder = mtpng::encoder::Encoder::new(file, &options);
    encoder
        .write_header(&header)
        .context("writing the PNG header")?;
    let mut received = 0u64;
    for rgb in rx {
        let t = Instant::now();
        encoder
            .write_image_rows(&rgb)
            .context("encoding PNG rows")?;
        received += rgb.len() as u64;
        busy += t.elapsed();
    }
    if received != 3 * u64::from(width) * u64::from(height) {
        // Rendering stopped early (error or Ctrl-C): the caller reports why.
        bail!("rendering stopped before the image was complete");
    }
    let t = Instant::now();
    encoder.finish().context("finishing the PNG")?;
    Ok(busy + t.elapsed())
}
