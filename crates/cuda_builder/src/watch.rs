//! Rebuilding a kernels crate when its sources change (feature `watch`), for hot reloading
//! during development: [`CudaBuilder::watch`] builds once, then watches every file the build
//! read ([`Artifact::inputs`]: the crate's sources and manifest, and those of its path
//! dependencies such as `cuda_std`) through the `notify` crate, and rebuilds after a change.
//! A change to the kernels crate's own sources only is rebuilt without the nested cargo, by
//! rerunning the rustc command cargo ran for the crate, and linked against the library code
//! the last link took (the `replay` and `link` modules); anything else goes through cargo.
//!
//! ```no_run
//! # fn main() -> Result<(), cuda_builder::BuildError> {
//! let (first, _watcher) = cuda_builder::CudaBuilder::new("kernels").watch(|rebuild| {
//!     match &rebuild.result {
//!         Ok(artifact) => println!("new PTX: {}", artifact.ptx_path.display()),
//!         // The compiler's messages; keep using the previous module.
//!         Err(e) => eprintln!("rebuild failed, keeping the old kernels:\n{e}"),
//!     }
//! })?;
//! println!("first PTX: {}", first.ptx_path.display());
//! // ... the watcher rebuilds in its own thread until `_watcher` is dropped.
//! # Ok(())
//! # }
//! ```

use crate::{Artifact, BuildError, CudaBuilder};
use notify::{EventKind, RecursiveMode, Watcher as _};
use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    sync::mpsc,
    thread::JoinHandle,
    time::{Duration, Instant},
};

/// How long the watcher waits after a change for more changes before it rebuilds: editors
/// often save in several writes (truncate, write, rename). The wait ends at once when the
/// last event was a changed file being closed after writing (an in-place save is complete).
pub const DEBOUNCE: Duration = Duration::from_millis(25);

/// One rebuild after a change, handed to the callback of [`CudaBuilder::watch`].
#[derive(Debug)]
pub struct Rebuild {
    /// The watched files that changed (canonical paths).
    pub changed: Vec<PathBuf>,
    /// When the first of those changes was noticed.
    pub noticed: Instant,
    /// How long the build took (from its start, after [`DEBOUNCE`]).
    pub build_time: Duration,
    /// The new artifact, or the build's error with the compiler's messages.
    pub result: Result<Artifact, BuildError>,
}

/// A running watcher: rebuilds in its own thread until dropped (dropping waits for a build
/// in progress to finish).
#[derive(Debug)]
pub struct Watcher {
    stop: mpsc::Sender<Message>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.stop.send(Message::Stop);
        if let Some(thread) = self.thread.take() {
            // A panic in the user's callback ends the thread; nothing more to report here.
            let _ = thread.join();
        }
    }
}

enum Message {
    Event(notify::Result<notify::Event>),
    Stop,
}

impl CudaBuilder {
    /// Builds the kernels crate once, then watches the build's inputs and rebuilds with the
    /// same settings whenever one changes, calling `on_rebuild` (on the watcher's thread)
    /// with each result. A failed rebuild is reported and watching goes on; a later change
    /// triggers the next attempt. Files a rebuild newly reads are watched from then on.
    ///
    /// # Errors
    /// The first build's [`BuildError`]; [`BuildError::Io`] if the watch cannot be set up.
    pub fn watch(
        self,
        mut on_rebuild: impl FnMut(Rebuild) + Send + 'static,
    ) -> Result<(Artifact, Watcher), BuildError> {
        let mut session = crate::replay::Session::default();
        let first = self.clone().build_with(Some(&mut session))?;
        let (tx, rx) = mpsc::channel();
        let events = tx.clone();
        let mut notifier = notify::recommended_watcher(move |e| {
            let _ = events.send(Message::Event(e));
        })
        .map_err(|e| notify_error(Path::new("."), e))?;
        let mut watched = Watched::default();
        watched.add(&mut notifier, &first.inputs)?;
        let builder = self;
        let thread = std::thread::Builder::new()
            .name("cuda_builder watch".into())
            .spawn(move || {
                // The notifier lives (and watches) as long as this thread.
                let mut notifier = notifier;
                while let Some((changed, noticed)) = next_change(&rx, &watched) {
                    let start = Instant::now();
                    session.changed(changed.clone());
                    let result = builder.clone().build_with(Some(&mut session));
                    let build_time = start.elapsed();
                    if let Ok(artifact) = &result {
                        // A watch that cannot be added only means fewer files are watched.
                        let _ = watched.add(&mut notifier, &artifact.inputs);
                    }
                    on_rebuild(Rebuild {
                        changed,
                        noticed,
                        build_time,
                        result,
                    });
                }
            })
            .map_err(|e| BuildError::Io(PathBuf::from("watch thread"), e))?;
        Ok((
            first,
            Watcher {
                stop: tx,
                thread: Some(thread),
            },
        ))
    }
}

fn notify_error(path: &Path, e: notify::Error) -> BuildError {
    BuildError::Io(path.to_path_buf(), std::io::Error::other(e))
}

/// The watched input files and the directories watched for them. Directories rather than
/// files: an editor that saves by renaming a new file over the old one replaces the inode a
/// file watch would follow.
#[derive(Default)]
struct Watched {
    files: BTreeSet<PathBuf>,
    dirs: BTreeSet<PathBuf>,
}

impl Watched {
    fn add(
        &mut self,
        notifier: &mut notify::RecommendedWatcher,
        inputs: &[PathBuf],
    ) -> Result<(), BuildError> {
        for input in inputs {
            let Ok(file) = input.canonicalize() else {
                continue;
            };
            if let Some(dir) = file.parent()
                && !self.dirs.contains(dir)
            {
                notifier
                    .watch(dir, RecursiveMode::NonRecursive)
                    .map_err(|e| notify_error(dir, e))?;
                self.dirs.insert(dir.to_path_buf());
            }
            self.files.insert(file);
        }
        Ok(())
    }

    /// Whether `event` is a watched file being closed after writing.
    fn closed_after_write(&self, event: &notify::Event) -> bool {
        matches!(
            event.kind,
            EventKind::Access(notify::event::AccessKind::Close(
                notify::event::AccessMode::Write
            ))
        ) && event.paths.iter().any(|p| self.files.contains(p))
    }

    /// The watched files an event touched.
    fn touched(&self, event: &notify::Event) -> Vec<PathBuf> {
        if matches!(event.kind, EventKind::Access(_)) {
            return Vec::new();
        }
        event
            .paths
            .iter()
            .filter(|p| self.files.contains(*p))
            .cloned()
            .collect()
    }
}

/// Waits for a change to a watched file, then for [`DEBOUNCE`] without further changes (or
/// only for the events already queued, after a changed file was closed after writing);
/// `None` when the watcher stops.
fn next_change(rx: &mpsc::Receiver<Message>, watched: &Watched) -> Option<(Vec<PathBuf>, Instant)> {
    let mut changed = BTreeSet::new();
    let mut noticed = None;
    let mut closed = false;
    loop {
        let message = if noticed.is_some() {
            match rx.recv_timeout(if closed { Duration::ZERO } else { DEBOUNCE }) {
                Ok(m) => m,
                Err(mpsc::RecvTimeoutError::Timeout) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => return None,
            }
        } else {
            rx.recv().ok()?
        };
        match message {
            Message::Stop => return None,
            // A watch error (e.g. an event queue overflow) may hide a change: rebuild.
            Message::Event(Err(_)) => {
                noticed.get_or_insert_with(Instant::now);
            }
            Message::Event(Ok(event)) => {
                let touched = watched.touched(&event);
                if !touched.is_empty() {
                    noticed.get_or_insert_with(Instant::now);
                    changed.extend(touched);
                    closed = false;
                } else if watched.closed_after_write(&event) {
                    closed = noticed.is_some();
                }
            }
        }
    }
    Some((changed.into_iter().collect(), noticed?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: EventKind, path: &Path) -> Message {
        Message::Event(Ok(notify::Event::new(kind).add_path(path.to_path_buf())))
    }

    fn watched(files: &[&str]) -> Watched {
        Watched {
            files: files.iter().map(PathBuf::from).collect(),
            dirs: BTreeSet::new(),
        }
    }

    #[test]
    fn changes_to_watched_files_are_gathered_until_quiet() {
        let w = watched(&["/k/src/lib.rs", "/k/Cargo.toml"]);
        let (tx, rx) = mpsc::channel();
        let modify = EventKind::Modify(notify::event::ModifyKind::Any);
        tx.send(event(modify, Path::new("/k/src/other.rs")))
            .unwrap();
        tx.send(event(modify, Path::new("/k/src/lib.rs"))).unwrap();
        tx.send(event(
            EventKind::Access(notify::event::AccessKind::Any),
            Path::new("/k/Cargo.toml"),
        ))
        .unwrap();
        tx.send(event(modify, Path::new("/k/src/lib.rs"))).unwrap();
        let (changed, _) = next_change(&rx, &w).expect("a change");
        assert_eq!(changed, [PathBuf::from("/k/src/lib.rs")]);
        // A close after writing ends the quiet wait, but is no change by itself.
        let close = EventKind::Access(notify::event::AccessKind::Close(
            notify::event::AccessMode::Write,
        ));
        tx.send(event(close, Path::new("/k/src/lib.rs"))).unwrap();
        tx.send(event(modify, Path::new("/k/Cargo.toml"))).unwrap();
        tx.send(event(close, Path::new("/k/Cargo.toml"))).unwrap();
        let (changed, _) = next_change(&rx, &w).expect("a change");
        assert_eq!(changed, [PathBuf::from("/k/Cargo.toml")]);
        // Stop ends the wait; so does a closed channel.
        tx.send(Message::Stop).unwrap();
        assert!(next_change(&rx, &w).is_none());
        drop(tx);
        assert!(next_change(&rx, &w).is_none());
    }
}
