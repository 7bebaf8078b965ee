//! The calling thread's side of a pool render: bands arrive from the workers in any order
//! ([`Message`]) and reach the sink in image order ([`reorder`]); the [`Gate`] holds workers
//! inside the reorder window.

use super::{GpuStep, PoolError};
use crate::band::BandImage;
use crate::gpu::GpuError;
use std::{
    collections::BTreeMap,
    sync::{Condvar, Mutex, PoisonError, mpsc},
};

/// What a worker sends to the reordering thread.
pub(super) enum Message {
    /// Band number `.0` (index into `bands`), rendered.
    Band(usize, BandImage),
    /// The GPU with this ordinal failed at this step.
    Failed {
        ordinal: usize,
        step: GpuStep,
        source: GpuError,
    },
}

/// The next band the sink needs, and whether to stop; workers wait on it to stay inside the
/// reorder window.
#[derive(Default)]
pub(super) struct Gate {
    state: Mutex<GateState>,
    changed: Condvar,
}

#[derive(Default)]
struct GateState {
    /// Bands passed to the sink so far (= index of the next one it needs).
    emitted: usize,
    /// Set on an error or when rendering ends: waiting workers return.
    stop: bool,
}

impl Gate {
    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set_emitted(&self, emitted: usize) {
        self.lock().emitted = emitted;
        self.changed.notify_all();
    }

    pub(super) fn stop(&self) {
        self.lock().stop = true;
        self.changed.notify_all();
    }

    pub(super) fn stopped(&self) -> bool {
        self.lock().stop
    }

    /// Whether band `index` is inside the window (`index < emitted + window`) or the render
    /// stopped: [`Gate::wait_for`] would return at once.
    pub(super) fn admits(&self, index: usize, window: usize) -> bool {
        let state = self.lock();
        state.stop || index < state.emitted + window
    }

    /// Waits until band `index` is inside the window (`index < emitted + window`); `false`
    /// if the render stopped meanwhile.
    pub(super) fn wait_for(&self, index: usize, window: usize) -> bool {
        let mut state = self.lock();
        while !state.stop && index >= state.emitted + window {
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        !state.stop
    }
}

/// Receives bands in any order and passes them to `sink` in band order; `Ok(false)` if the
/// workers all stopped before every band arrived (only when one panicked).
pub(super) fn reorder<E>(
    band_count: usize,
    rx: &mpsc::Receiver<Message>,
    gate: &Gate,
    sink: &mut impl FnMut(BandImage) -> Result<(), E>,
) -> Result<bool, PoolError<E>> {
    let mut pending = BTreeMap::new();
    let mut emitted = 0;
    while emitted < band_count {
        // Every worker holds a sender until it stops, and reports a failure before stopping
        // with bands left, so this fails only if workers panicked.
        let Ok(message) = rx.recv() else {
            return Ok(false);
        };
        match message {
            Message::Failed {
                ordinal,
                step,
                source,
            } => {
                return Err(PoolError::Gpu {
                    ordinal,
                    step,
                    source: Box::new(source),
                });
            }
            Message::Band(index, image) => {
                pending.insert(index, image);
            }
        }
        while let Some(image) = pending.remove(&emitted) {
            sink(image).map_err(PoolError::Sink)?;
            emitted += 1;
            gate.set_emitted(emitted);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::Band;
    use std::time::Duration;

    fn image(index: usize) -> BandImage {
        BandImage {
            band: Band {
                first_row: index as u32,
                rows: 1,
            },
            counts: Vec::new(),
            norms: Vec::new(),
            rgb: vec![index as u8; 3],
            kernel: Duration::ZERO,
            copies: Default::default(),
        }
    }

    fn run_reorder(
        messages: Vec<Message>,
        band_count: usize,
    ) -> (Result<bool, PoolError<&'static str>>, Vec<u32>, usize) {
        let (tx, rx) = mpsc::channel();
        for m in messages {
            tx.send(m).unwrap();
        }
        drop(tx);
        let gate = Gate::default();
        let mut seen = Vec::new();
        let result = reorder(band_count, &rx, &gate, &mut |b: BandImage| {
            seen.push(b.band.first_row);
            Ok(())
        });
        let emitted = gate.lock().emitted;
        (result, seen, emitted)
    }

    #[test]
    fn reorder_passes_bands_in_image_order() {
        let order = [2, 0, 3, 1, 5, 4];
        let messages = order.map(|i| Message::Band(i, image(i))).into();
        let (result, seen, emitted) = run_reorder(messages, 6);
        assert!(matches!(result, Ok(true)));
        assert_eq!(seen, [0, 1, 2, 3, 4, 5]);
        assert_eq!(emitted, 6);
    }

    #[test]
    fn reorder_stops_at_a_gpu_failure() {
        let messages = vec![
            Message::Band(1, image(1)),
            Message::Band(0, image(0)),
            Message::Failed {
                ordinal: 3,
                step: GpuStep::Band {
                    index: 2,
                    band: image(2).band,
                },
                source: GpuError::NoDevice,
            },
            Message::Band(2, image(2)),
        ];
        let (result, seen, _) = run_reorder(messages, 4);
        let Err(error) = result else {
            panic!("{result:?}");
        };
        assert!(
            matches!(
                &error,
                PoolError::Gpu {
                    ordinal: 3,
                    step: GpuStep::Band {
                        index: 2,
                        band: Band {
                            first_row: 2,
                            rows: 1
                        }
                    },
                    source,
                } if matches!(**source, GpuError::NoDevice)
            ),
            "{error:?}"
        );
        // The message names the GPU and the band, with its rows.
        let message = error.to_string();
        assert!(
            message.starts_with("GPU 3, band 2 (rows 2..3): "),
            "{message}"
        );
        assert_eq!(seen, [0, 1]);
        // A failure before the first band names the setup instead.
        assert_eq!(GpuStep::Setup.to_string(), "setting up");
    }

    #[test]
    fn reorder_stops_at_a_sink_error_and_notices_missing_bands() {
        let (tx, rx) = mpsc::channel();
        for i in 0..3 {
            tx.send(Message::Band(i, image(i))).unwrap();
        }
        let gate = Gate::default();
        let result = reorder(3, &rx, &gate, &mut |b: BandImage| {
            if b.band.first_row == 1 {
                Err("full")
            } else {
                Ok(())
            }
        });
        assert!(matches!(result, Err(PoolError::Sink("full"))));
        assert_eq!(gate.lock().emitted, 1);
        // Workers gone with a band missing (only after a panic): `false`, not a hang.
        drop(tx);
        let (result, seen, _) = run_reorder(vec![Message::Band(0, image(0))], 2);
        assert!(matches!(result, Ok(false)));
        assert_eq!(seen, [0]);
    }

    #[test]
    fn gate_holds_bands_outside_the_window() {
        let gate = Gate::default();
        std::thread::scope(|scope| {
            let (tx, rx) = mpsc::channel();
            let gate = &gate;
            scope.spawn(move || tx.send(gate.wait_for(5, 2)).unwrap());
            // Band 5 with a window of 2 may start once band 3 was emitted (5 < 4 + 2).
            gate.set_emitted(3);
            assert!(
                rx.recv_timeout(Duration::from_millis(100)).is_err(),
                "started too early"
            );
            gate.set_emitted(4);
            assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(true));
            // Stopping releases a waiting worker with `false`.
            let (tx, rx) = mpsc::channel();
            scope.spawn(move || tx.send(gate.wait_for(100, 2)).unwrap());
            gate.stop();
            assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(false));
        });
        assert!(Gate::default().wait_for(0, 1), "inside the window: no wait");
    }
}
