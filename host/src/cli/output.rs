//! Output files: `OutputFile`, the one writer of every PNG and GIF (a temporary file renamed
//! into place, or a character device or FIFO written through), and the checks on its path.

use super::{check_interrupt, usage};
use anyhow::{Context, Result, bail};
use std::{
    io::Write,
    path::{Path, PathBuf},
    time::Duration,
};

/// An output file, written so that an error leaves no partial file where one can be avoided.
///
/// A regular file (or a new name) is written atomically: a temporary file in the destination's
/// folder (beside a symbolic link's target), renamed over the destination only once complete
/// (the temporary file is removed when dropped; a process killed by a signal can leave a
/// `.ferrocuda-*.png.part` behind, never a truncated `.png`). A character device or a FIFO
/// (`/dev/null`, a named pipe), named directly or through a link, is written through in place,
/// as a shell's `>` does, and is never replaced, renamed over or removed; what was written to it
/// before an error stays written. Other special files (block devices, sockets) are refused by
/// [`check_output_path`].
pub struct OutputFile {
    path: PathBuf,
    what: &'static str,
    sink: Sink,
}

/// Where an [`OutputFile`]'s bytes go.
enum Sink {
    /// The temporary file that replaces the destination on [`OutputFile::persist`].
    Replace(tempfile::NamedTempFile),
    /// The character device or FIFO itself.
    WriteThrough(std::fs::File),
}

impl OutputFile {
    /// A PNG output file: checks the name and the destination ([`check_output_path`]) and
    /// opens it (before any rendering work).
    ///
    /// # Errors
    /// A usage error (exit status 2) naming the path and what is allowed when the name does
    /// not end in `.png` or [`check_output_path`] refuses it; an error naming the path and
    /// the operating system's error when the file cannot be opened.
    pub fn create(path: &Path) -> Result<Self> {
        let is_png = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("png"));
        if !is_png {
            usage!(
                "output file `{}` is not allowed: it must end in .png",
                path.display()
            );
        }
        Self::open(path, "output file", ".png.part")
    }

    /// Checks `path` ([`check_output_path`]) and opens it: a temporary file named
    /// `.ferrocuda-*<suffix>` in the destination's folder, or the character device or FIFO
    /// itself (waiting, as a shell's `>` does, until a FIFO has a reader; a caught signal
    /// stops the wait). Errors name the file as "the `what` `path`".
    ///
    /// # Errors
    /// As [`OutputFile::create`].
    pub fn open(path: &Path, what: &'static str, suffix: &str) -> Result<Self> {
        let sink = match check_output_path(path)? {
            OutputTarget::Replace(target) => {
                let temp = temp_beside(&target, what, suffix)?;
                return Ok(Self {
                    path: target,
                    what,
                    sink: Sink::Replace(temp),
                });
            }
            OutputTarget::WriteThrough(special) => {
                Sink::WriteThrough(open_write_through(&special, what)?)
            }
        };
        Ok(Self {
            path: path.to_path_buf(),
            what,
            sink,
        })
    }

    /// Checks, before any work, that `path` can be written as [`OutputFile::open`] writes
    /// it, and leaves nothing behind: [`check_output_path`], then, for a file that is
    /// replaced, a temporary file created beside it and removed at once (so that a folder
    /// without write permission is named now, not after the work). A character device or
    /// FIFO is not opened (opening a FIFO waits for a reader).
    ///
    /// # Errors
    /// As [`OutputFile::open`].
    pub fn check(path: &Path, what: &'static str, suffix: &str) -> Result<()> {
        if let OutputTarget::Replace(target) = check_output_path(path)? {
            drop(temp_beside(&target, what, suffix)?);
        }
        Ok(())
    }

    /// Writes `bytes` into the file and puts it in place ([`OutputFile::persist`]).
    ///
    /// # Errors
    /// Naming the destination and the operating system's error (e.g. "No space left on
    /// device") when the write fails; then as [`OutputFile::persist`]. The temporary file is
    /// removed.
    pub fn write_bytes(self, bytes: &[u8]) -> Result<()> {
        let mut file = self.file();
        file.write_all(bytes).map_err(|e| {
            anyhow::anyhow!(
                "cannot write the {} `{}`: {}",
                self.what,
                self.path.display(),
                os_message(&e)
            )
        })?;
        self.persist()
    }

    /// The open file to write to: the temporary file, or the device or FIFO.
    pub fn file(&self) -> &std::fs::File {
        match &self.sink {
            Sink::Replace(temp) => temp.as_file(),
            Sink::WriteThrough(file) => file,
        }
    }

    /// The error for a failed write of this file: "cannot write the {what} `{path}`: {why}".
    pub fn write_error(&self, why: &str) -> anyhow::Error {
        anyhow::anyhow!(
            "cannot write the {} `{}`: {why}",
            self.what,
            self.path.display()
        )
    }

    /// Puts the finished file in place: syncs the temporary file to disk (`sync_all`: a full
    /// disk or an I/O error shows here at the latest) and renames it over the destination. A
    /// device or FIFO was written in place and is only closed.
    ///
    /// # Errors
    /// Naming the destination and the operating system's error when the sync or the rename
    /// fails; the temporary file is removed.
    pub fn persist(self) -> Result<()> {
        let Sink::Replace(mut temp) = self.sink else {
            return Ok(());
        };
        let (what, path) = (self.what, &self.path);
        let synced = temp.flush().and_then(|()| temp.as_file().sync_all());
        if let Err(e) = synced {
            // `temp` is dropped here, which removes the temporary file.
            bail!(
                "cannot write the {what} `{}`: {}",
                path.display(),
                os_message(&e)
            );
        }
        temp.persist(path).map_err(|e| {
            // `e.file` is dropped with the error, which removes the temporary file.
            anyhow::anyhow!(
                "cannot write the {what} `{}`: {}",
                path.display(),
                os_message(&e.error)
            )
        })?;
        Ok(())
    }
}

/// Encodes `rgb` (`width × height` pixels, 3 bytes each, rows top first) as a PNG into
/// `file`, every buffered byte written; the error says why (the operating system's words
/// for a write error, e.g. "No space left on device").
pub fn encode_png(file: &std::fs::File, width: u32, height: u32, rgb: &[u8]) -> Result<(), String> {
    let mut file = std::io::BufWriter::new(file);
    let encoder = image::codecs::png::PngEncoder::new(&mut file);
    image::ImageEncoder::write_image(encoder, rgb, width, height, image::ExtendedColorType::Rgb8)
        .map_err(|e| match &e {
        image::ImageError::IoError(io) => os_message(io),
        other => other.to_string(),
    })?;
    // The last buffered bytes: an error here (a full disk) would be lost at drop.
    file.into_inner().map_err(|e| os_message(e.error()))?;
    Ok(())
}

/// A new temporary file `.ferrocuda-*<suffix>` in `target`'s folder, with the usual mode
/// (0666 less the umask), removed when dropped.
///
/// # Errors
/// Naming `target` as "the `what` `target`", the folder and the operating system's error.
fn temp_beside(target: &Path, what: &str, suffix: &str) -> Result<tempfile::NamedTempFile> {
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".ferrocuda-").suffix(suffix);
    // tempfile creates files owner-only (0600); an output file should get the usual mode
    // (0666 less the umask).
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    builder.tempfile_in(dir).map_err(|e| {
        anyhow::anyhow!(
            "cannot write the {what} `{}`: cannot create a file in folder `{}`: {}",
            target.display(),
            dir.display(),
            os_message(&e)
        )
    })
}

/// Opens a character device or FIFO for writing, in place (no create, no truncation). Opening
/// a FIFO blocks until it has a reader; the open runs on a helper thread so that a caught
/// signal still stops the wait (that thread stays blocked in `open` and ends with the process).
///
/// # Errors
/// [`Interrupted`](super::Interrupted) after a caught signal; otherwise the operating system's error, naming
/// `path` as "the `what` `path`".
fn open_write_through(path: &Path, what: &str) -> Result<std::fs::File> {
    let (tx, rx) = std::sync::mpsc::channel();
    let owned = path.to_path_buf();
    std::thread::spawn(move || {
        // The receiver is gone only after a signal, when nobody waits for this file.
        let _ = tx.send(std::fs::OpenOptions::new().write(true).open(owned));
    });
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(opened) => {
                return opened.map_err(|e| {
                    anyhow::anyhow!(
                        "cannot write the {what} `{}`: {}",
                        path.display(),
                        os_message(&e)
                    )
                });
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => check_interrupt()?,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                unreachable!("the opening thread sends before it ends")
            }
        }
    }
}

/// Reads the file `path` given to `flag` (e.g. `--kfr`), at most `max` bytes: a wrong path
/// such as `/dev/zero` cannot make the program read without end.
///
/// # Errors
/// The file cannot be read (`cannot read {flag} `path`: ` and the operating system's
/// message), or it holds more than `max` bytes: a usage error `{flag} `path` is not allowed:
/// {rule} at most {max} bytes ({max_text}), this one is N bytes` (`more than that` for a
/// file whose size is not known, such as a device).
pub(crate) fn read_bounded(
    flag: &str,
    path: &std::path::Path,
    max: u64,
    rule: &str,
    max_text: &str,
) -> Result<Vec<u8>> {
    use std::io::Read as _;
    let shown = path.display();
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(max + 1).read_to_end(&mut bytes))
        .map_err(|e| anyhow::anyhow!("cannot read {flag} `{shown}`: {}", os_message(&e)))?;
    if bytes.len() as u64 > max {
        let size = std::fs::metadata(path)
            .ok()
            .filter(|m| m.is_file())
            .map_or_else(
                || "more than that".to_owned(),
                |m| format!("{} bytes", m.len()),
            );
        usage!(
            "{flag} `{shown}` is not allowed: {rule} at most {max} bytes ({max_text}), this one \
             is {size}"
        );
    }
    Ok(bytes)
}

/// The operating system's wording of an I/O error (`Permission denied (os error 13)`),
/// without the temporary file's path that some crates append.
pub fn os_message(e: &std::io::Error) -> String {
    // tempfile appends ` at path "<temporary file>"` to the OS error's own message.
    let text = e.to_string();
    match text.split_once(" at path \"") {
        Some((os, _)) => os.to_owned(),
        None => text,
    }
}

/// Where an output file's bytes go, as [`check_output_path`] decides before any work.
#[derive(Debug, PartialEq, Eq)]
pub enum OutputTarget {
    /// A regular file or a new name, written atomically: a temporary file beside this path
    /// (a symbolic link's target, the link itself is kept) is renamed over it.
    Replace(PathBuf),
    /// A character device or a FIFO (named directly or through a link; the path as given),
    /// written through in place and never replaced.
    WriteThrough(PathBuf),
}

/// What ferrocuda writes to, named in the error for anything else.
const ALLOWED_OUTPUTS: &str = "an output must be a regular file or a new name (replaced \
    atomically), a character device such as /dev/null, or a FIFO (written through)";

/// Checks an output file's path before any work, naming what is wrong: an existing folder of
/// that name, a block device or socket (never written: a PNG over a disk is destroyed data),
/// a file name longer than the 255 bytes file systems allow, a read-only existing file (never
/// replaced silently), a folder that does not exist. A symbolic link is followed: the file it
/// points to is replaced, the link stays; a character device or FIFO it points to is written
/// through ([`OutputTarget::WriteThrough`]).
///
/// # Errors
/// A usage error (exit status 2) naming the path, the kind of file and what is allowed.
pub fn check_output_path(path: &Path) -> Result<OutputTarget> {
    let shown = path.display();
    if let Some(name) = path.file_name()
        && name.len() > 255
    {
        usage!(
            "output file `{shown}` is not allowed: its name is {} bytes, file systems allow 255",
            name.len()
        );
    }
    // `metadata` follows every link, so a link to a device is seen as the device.
    let existing = std::fs::metadata(path).ok();
    if let Some(meta) = &existing {
        if meta.is_dir() {
            usage!("output file `{shown}` is not allowed: it is an existing folder");
        }
        match special_file(&meta.file_type()) {
            Some(Special::WriteThrough) => return Ok(OutputTarget::WriteThrough(path.into())),
            Some(Special::Refused(kind)) => {
                let via = match std::fs::canonicalize(path) {
                    Ok(t) if t != path => format!(" (`{}`)", t.display()),
                    _ => String::new(),
                };
                usage!(
                    "output file `{shown}` is not allowed: it is a {kind}{via}, which is never \
                     written; {ALLOWED_OUTPUTS}"
                );
            }
            None => {}
        }
        if meta.permissions().readonly() {
            usage!(
                "output file `{shown}` is read-only: it is not replaced; remove it or choose \
                 another name"
            );
        }
    }
    let target = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path).with_context(|| {
            format!("output file `{shown}` is a symbolic link that points nowhere")
        })?,
        _ => path.to_path_buf(),
    };
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        usage!(
            "output file `{shown}` is not allowed: folder `{}` does not exist",
            dir.display()
        );
    }
    Ok(OutputTarget::Replace(target))
}

/// A file that is neither a regular file nor a folder.
#[derive(Debug, PartialEq, Eq)]
enum Special {
    /// A character device or FIFO: written through.
    WriteThrough,
    /// Anything else (a block device, a socket), by its name.
    Refused(&'static str),
}

/// What kind of special file `ft` is, or `None` for a regular file, folder or link.
fn special_file(ft: &std::fs::FileType) -> Option<Special> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_char_device() || ft.is_fifo() {
            return Some(Special::WriteThrough);
        }
        if ft.is_block_device() {
            return Some(Special::Refused("block device"));
        }
        if ft.is_socket() {
            return Some(Special::Refused("socket"));
        }
    }
    if ft.is_file() || ft.is_dir() || ft.is_symlink() {
        None
    } else {
        Some(Special::Refused("special file"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::exit_status;

    /// Issue 35: `/dev/null` (a character device), named directly, is written through, not
    /// replaced. Only the file's metadata is read.
    #[test]
    fn character_devices_are_written_through() {
        assert_eq!(
            check_output_path(Path::new("/dev/null")).unwrap(),
            OutputTarget::WriteThrough("/dev/null".into())
        );
    }

    /// Issue 35: a block device is refused (a usage error, exit status 2) naming the path,
    /// what it is and what is allowed; never written, never replaced. Only the file's
    /// metadata is read (the first block device in `/dev`; skipped where there is none).
    #[test]
    fn block_devices_are_refused_by_name() {
        use std::os::unix::fs::FileTypeExt;
        let block = std::fs::read_dir("/dev")
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .find(|p| std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device()));
        let Some(block) = block else {
            eprintln!("skipped: no block device in /dev");
            return;
        };
        let e = check_output_path(&block).expect_err("a block device must be refused");
        assert_eq!(exit_status(&e), (2, true), "{e}");
        let text = e.to_string();
        for needle in [
            &*block.to_string_lossy(),
            "block device",
            "regular file",
            "FIFO",
        ] {
            assert!(text.contains(needle), "does not name `{needle}`: {text}");
        }
    }
}
