//! Where a zoom's frames go: the frame folder (created, its stale frames removed), the GIF
//! written atomically, and the [`FrameWriter`] thread that encodes both while the main thread
//! watches for signals.

use crate::cli::{OutputFile, check_interrupt_with, os_message, usage};
use anyhow::{Context, Result, bail};
use std::{
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
};

/// A frame folder this run created (`None`: it existed before), removed when dropped if it
/// is still empty: an error or a signal before the first frame (no device, a GIF that cannot
/// be created) leaves no empty folder behind. A folder with anything in it is kept
/// (`remove_dir` removes only empty folders).
pub(super) struct CreatedDir<'a>(Option<&'a Path>);

impl<'a> CreatedDir<'a> {
    /// Creates the frame folder `dir` if it is missing (`None`: no `-o`).
    ///
    /// # Errors
    /// A [`crate::cli::UsageError`] if `dir` is an existing file; an error naming the folder
    /// if it cannot be created.
    pub(super) fn create(dir: Option<&'a Path>) -> Result<Self> {
        let Some(dir) = dir else {
            return Ok(CreatedDir(None));
        };
        if dir.exists() && !dir.is_dir() {
            usage!(
                "frame folder `{}` is not allowed: it is an existing file",
                dir.display()
            );
        }
        let created = !dir.exists();
        std::fs::create_dir_all(dir).map_err(|e| {
            anyhow::anyhow!(
                "cannot create the frame folder `{}`: {}",
                dir.display(),
                os_message(&e)
            )
        })?;
        Ok(CreatedDir(created.then_some(dir)))
    }
}

impl Drop for CreatedDir<'_> {
    fn drop(&mut self) {
        if let Some(dir) = self.0 {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// Refuses, before anything is written, a GIF path that cannot be written beside the frames
/// (see [`check_gif_beside_frames`]) or does not end in `.gif`.
pub(super) fn check_paths(dir: Option<&Path>, gif: Option<&Path>) -> Result<()> {
    if let (Some(dir), Some(gif)) = (dir, gif) {
        check_gif_beside_frames(dir, gif)?;
    }
    if let Some(gif) = gif {
        check_gif_name(gif)?;
    }
    Ok(())
}

/// Refuses a GIF file name not ending in `.gif`.
fn check_gif_name(path: &Path) -> Result<()> {
    let is_gif = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gif"));
    if !is_gif {
        usage!(
            "GIF file `{}` is not allowed: it must end in .gif",
            path.display()
        );
    }
    Ok(())
}

/// Refuses, before any rendering, a GIF path that is the frame folder or a folder above it
/// (`-o X --gif X`, `-o a.gif/fr --gif a.gif`). A GIF inside the frame folder is fine: frames
/// are `frame_NNNNN.png`, the GIF ends in `.gif`, so they cannot collide.
fn check_gif_beside_frames(dir: &Path, gif: &Path) -> Result<()> {
    let (d, g) = (lexical_absolute(dir), lexical_absolute(gif));
    if d == g {
        usage!(
            "--gif `{}` is not allowed: it is the frame folder given by -o `{}`",
            gif.display(),
            dir.display()
        );
    }
    if d.starts_with(&g) {
        usage!(
            "--gif `{}` is not allowed: the frame folder -o `{}` lies inside it",
            gif.display(),
            dir.display()
        );
    }
    Ok(())
}

/// `path` made absolute (from the current folder) with `.` and `..` resolved by name, without
/// touching the file system (symbolic links are not followed).
fn lexical_absolute(path: &Path) -> PathBuf {
    use std::path::Component;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for c in absolute.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Removes `frame_NNNNN.png` files numbered `frames` or more from `dir` (left by an earlier
/// zoom with more frames, they would be mistaken for this one's); returns how many.
pub(super) fn remove_stale_frames(dir: &std::path::Path, frames: u32) -> Result<u32> {
    let mut removed = 0;
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("reading the frame folder `{}`", dir.display()))?;
    for entry in entries {
        let entry =
            entry.with_context(|| format!("reading the frame folder `{}`", dir.display()))?;
        let name = entry.file_name();
        let index = name
            .to_str()
            .and_then(|n| n.strip_prefix("frame_"))
            .and_then(|n| n.strip_suffix(".png"))
            .filter(|n| n.len() == 5 && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<u32>().ok());
        if index.is_some_and(|i| i >= frames) {
            std::fs::remove_file(entry.path()).with_context(|| {
                format!("removing the stale frame `{}`", entry.path().display())
            })?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Where a zoom's frames go: PNG files in the frame folder and/or the GIF, each encoded by
/// the [`FrameWriter`]'s thread while this one waits, stopped by a signal at once.
pub(super) struct Frames<'a> {
    // Declared before `gif`, so dropped before it (and its temporary file).
    writer: FrameWriter,
    gif: Option<GifOut>,
    dir: Option<&'a Path>,
    /// Whether a GIF was asked for (for [`Frames::written`]).
    has_gif: bool,
    /// PNG frames written so far.
    frames_written: u32,
}

impl<'a> Frames<'a> {
    /// Opens the GIF (its temporary file) and starts the writer's thread for frames of
    /// `width × height` pixels.
    ///
    /// # Errors
    /// The GIF cannot be created.
    pub(super) fn open(
        dir: Option<&'a Path>,
        gif: Option<&Path>,
        width: u32,
        height: u32,
        fps: u32,
    ) -> Result<Self> {
        let (gif_out, gif_stream) = match gif {
            Some(path) => {
                let (out, stream) = GifOut::create(path, fps)?;
                (Some(out), Some(stream))
            }
            None => (None, None),
        };
        let writer = FrameWriter::spawn(width, height, gif_stream);
        Ok(Self {
            writer,
            gif: gif_out,
            dir,
            has_gif: gif.is_some(),
            frames_written: 0,
        })
    }

    /// What was written so far, for the message of a stopped zoom.
    pub(super) fn written(&self) -> String {
        written_note(self.dir, self.has_gif, self.frames_written)
    }

    /// Writes frame `k`'s colours: `frame_{k:05}.png` (replaced atomically) and/or a GIF frame.
    ///
    /// # Errors
    /// [`crate::cli::Interrupted`]; an error naming the file that could not be written.
    pub(super) fn write(&mut self, k: u32, rgb: Vec<u8>) -> Result<()> {
        let rgb = Arc::new(rgb);
        if let Some(dir) = self.dir {
            let path = dir.join(format!("frame_{k:05}.png"));
            let out = OutputFile::create(&path)?;
            let file = out.file().try_clone().context("opening the frame file")?;
            self.writer
                .run(FrameJob::Png(file, Arc::clone(&rgb)), || self.written())?
                .map_err(|why| out.write_error(&why))?;
            out.persist()?;
            self.frames_written += 1;
        }
        if let Some(gif) = &self.gif {
            self.writer
                .run(FrameJob::Gif(rgb), || self.written())?
                .map_err(|why| gif.frame_error(why))?;
        }
        Ok(())
    }

    /// Ends the GIF (its trailer) and renames it into place, unless a signal was caught.
    ///
    /// # Errors
    /// [`crate::cli::Interrupted`]; an error naming the GIF if it could not be written.
    pub(super) fn finish(self) -> Result<()> {
        check_interrupt_with(|| self.written())?;
        let written = || written_note(self.dir, self.has_gif, self.frames_written);
        if let Some(gif) = self.gif {
            self.writer
                .run(FrameJob::GifEnd, written)?
                .map_err(|why| gif.frame_error(why))?;
            gif.finish()?;
        }
        Ok(())
    }
}

/// What a zoom has written: `frames` PNG frames in `dir`, and no GIF (it is renamed into
/// place only at the end).
fn written_note(dir: Option<&Path>, has_gif: bool, frames: u32) -> String {
    let frames_note = match (dir, frames) {
        (Some(dir), n) if n > 0 => format!("{n} frames written to `{}`", dir.display()),
        _ => "no frame written".to_owned(),
    };
    if has_gif {
        format!("{frames_note}; no GIF written")
    } else {
        frames_note
    }
}

/// An animated GIF written through an [`OutputFile`] (a temporary file renamed into
/// place by [`GifOut::finish`], or a device or FIFO written through); dropped early (error,
/// Ctrl-C), it removes the temporary file. Its frames are encoded by a [`GifStream`] on the
/// [`FrameWriter`]'s thread.
pub(super) struct GifOut {
    path: PathBuf,
    out: OutputFile,
    error: Arc<Mutex<Option<String>>>,
}

/// The GIF encoder of a [`GifOut`] and its frame delay, owned by the [`FrameWriter`]'s thread.
pub(super) struct GifStream {
    encoder: image::codecs::gif::GifEncoder<std::io::BufWriter<RecordingFile>>,
    delay: image::Delay,
}

/// A file whose first write error is recorded: the GIF encoder writes its trailer (and the
/// buffer flushes) when dropped, where errors are otherwise lost.
struct RecordingFile {
    file: std::fs::File,
    error: Arc<Mutex<Option<String>>>,
}

impl RecordingFile {
    fn record<T>(&self, r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r {
            let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
            slot.get_or_insert_with(|| os_message(e));
        }
        r
    }
}

impl std::io::Write for RecordingFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.file.write(buf);
        self.record(r)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.file.flush();
        self.record(r)
    }
}

impl GifOut {
    pub(super) fn create(path: &std::path::Path, fps: u32) -> Result<(Self, GifStream)> {
        check_gif_name(path)?;
        let out = OutputFile::open(path, "GIF file", ".gif.part")?;
        let error = Arc::new(Mutex::new(None));
        let file = RecordingFile {
            file: out.file().try_clone().context("opening the GIF file")?,
            error: Arc::clone(&error),
        };
        let mut encoder =
            image::codecs::gif::GifEncoder::new_with_speed(std::io::BufWriter::new(file), 10);
        encoder
            .set_repeat(image::codecs::gif::Repeat::Infinite)
            .context("starting the GIF")?;
        let stream = GifStream {
            encoder,
            delay: image::Delay::from_numer_denom_ms(1000, fps),
        };
        Ok((
            Self {
                path: path.to_path_buf(),
                out,
                error,
            },
            stream,
        ))
    }

    /// The error for a frame (or the trailer) that could not be written: the file's own
    /// error (a full disk) where there was one, else the encoder's `why`.
    pub(super) fn frame_error(&self, why: String) -> anyhow::Error {
        let why = self
            .error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .unwrap_or(why);
        anyhow::anyhow!("cannot write the GIF file `{}`: {why}", self.path.display())
    }

    /// Checks every write and the final flush (the trailer was written by
    /// [`FrameJob::GifEnd`]), syncs and renames the temporary file into place; on failure it
    /// is removed and the error names the path and the operating system's error.
    pub(super) fn finish(self) -> Result<()> {
        if let Some(e) = self.error.lock().unwrap_or_else(|p| p.into_inner()).take() {
            bail!("cannot write the GIF file `{}`: {e}", self.path.display());
        }
        self.out.persist()
    }
}

impl GifStream {
    fn add_frame(&mut self, width: u32, height: u32, rgb: &[u8]) -> Result<(), String> {
        let rgba: Vec<u8> = rgb
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect();
        let buffer = image::RgbaImage::from_raw(width, height, rgba)
            .ok_or("frame buffer size does not match the frame")?;
        let frame = image::Frame::from_parts(buffer, 0, 0, self.delay);
        self.encoder.encode_frame(frame).map_err(|e| e.to_string())
    }
}

/// What the [`FrameWriter`]'s thread does next.
pub(super) enum FrameJob {
    /// Encode the frame's colours as a PNG into the (temporary) frame file.
    Png(std::fs::File, Arc<Vec<u8>>),
    /// Add the frame's colours to the GIF.
    Gif(Arc<Vec<u8>>),
    /// Write the GIF's trailer and flush it (dropping its encoder).
    GifEnd,
}

/// How often a thread waiting for the [`FrameWriter`] checks for a caught signal.
const SIGNAL_POLL: std::time::Duration = std::time::Duration::from_millis(10);

/// Encodes a zoom's frames, PNG files and GIF frames, on a thread of its own while the main
/// thread waits for each job, checking for a caught signal every [`SIGNAL_POLL`]: a signal
/// during a large frame's encoding (seconds for an 8192² GIF frame) stops the zoom at once,
/// as a render is stopped, and the encoding ends with the process. The output files stay
/// with the main thread, so their temporary files are removed on the way out. One job at a
/// time: a frame's colours are held once, as before.
pub(super) struct FrameWriter {
    jobs: std::sync::mpsc::Sender<FrameJob>,
    done: std::sync::mpsc::Receiver<Result<(), String>>,
}

impl FrameWriter {
    /// Starts the thread for frames of `width × height` pixels (`gif`: the GIF's encoder).
    pub(super) fn spawn(width: u32, height: u32, gif: Option<GifStream>) -> Self {
        let (jobs, job_rx) = std::sync::mpsc::channel::<FrameJob>();
        let (done_tx, done) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut gif = gif;
            for job in job_rx {
                let result = match job {
                    FrameJob::Png(file, rgb) => crate::cli::encode_png(&file, width, height, &rgb),
                    FrameJob::Gif(rgb) => match &mut gif {
                        Some(g) => g.add_frame(width, height, &rgb),
                        None => Err("no GIF was opened".to_owned()),
                    },
                    FrameJob::GifEnd => {
                        drop(gif.take());
                        Ok(())
                    }
                };
                if done_tx.send(result).is_err() {
                    break;
                }
            }
        });
        Self { jobs, done }
    }

    /// Runs `job` and waits for it: its own result (`Err`: why it failed), or
    /// [`crate::cli::Interrupted`] (with `written`) as soon as a signal is caught.
    ///
    /// # Errors
    /// [`crate::cli::Interrupted`]; an error if the thread is gone (it panicked).
    pub(super) fn run(
        &self,
        job: FrameJob,
        written: impl Fn() -> String,
    ) -> Result<Result<(), String>> {
        use std::sync::mpsc::RecvTimeoutError;
        let gone = || anyhow::anyhow!("the frame writer's thread stopped");
        self.jobs.send(job).map_err(|_| gone())?;
        loop {
            match self.done.recv_timeout(SIGNAL_POLL) {
                Ok(result) => return Ok(result),
                Err(RecvTimeoutError::Timeout) => check_interrupt_with(&written)?,
                Err(RecvTimeoutError::Disconnected) => return Err(gone()),
            }
        }
    }
}
