//! CUDA graphs: work queued on a stream once, captured, and replayed with one launch.
//!
//! Each kernel launched on a stream costs the host a driver call and the GPU a launch
//! latency; a graph replays a whole sequence (kernels, copies, event waits) with one call
//! (CUDA C Programming Guide, "CUDA Graphs").
//!
//! ```no_run
//! # use cust::prelude::*;
//! # fn main() -> CudaResult<()> {
//! # let _ctx = cust::quick_init()?;
//! let stream = Stream::new(StreamFlags::NON_BLOCKING, None)?;
//! let graph = stream.capture(|s| {
//!     // Queue work on `s` as usual: launches, async copies. Nothing runs yet.
//!     Ok(())
//! })?;
//! graph.launch()?; // runs the captured work on `stream`, as often as wanted
//! stream.synchronize()?;
//! # Ok(())
//! # }
//! ```

use crate::{
    error::{CudaError, CudaResult},
    stream::Stream,
};
use cudarc::driver::{CudaGraph, sys};
use std::{fmt, marker::PhantomData};

/// A captured, instantiated graph, replayed on the stream it was captured on
/// ([`Stream::capture`]). It holds the device addresses of every buffer the capture used, so
/// it borrows them as the capture's closure did (`'a`): no buffer can be freed, and none that
/// the captured work writes can be read or changed on the host, while the graph exists.
/// Dropping it waits for its replays. Not `Sync`: the driver does not synchronise access to
/// a graph.
pub struct Graph<'a> {
    inner: CudaGraph,
    stream: Stream,
    borrows: PhantomData<&'a mut ()>,
}

impl fmt::Debug for Graph<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph").finish_non_exhaustive()
    }
}

impl Drop for Graph<'_> {
    /// Waits for the stream, so that every replay has finished before the graph's borrows of
    /// its buffers end.
    fn drop(&mut self) {
        // An error here is the replays' own, already reported by whatever waits next.
        let _ = self.stream.synchronize();
    }
}

impl Graph<'_> {
    /// Queues one replay of the captured work on the capturing stream.
    ///
    /// # Errors
    /// A driver error (e.g. a kernel of the previous replay failed).
    pub fn launch(&self) -> CudaResult<()> {
        self.inner
            .launch()
            .map_err(CudaError::driver("launching a CUDA graph"))
    }

    /// Uploads the graph's resources to the device now, so that the first
    /// [`launch`](Graph::launch) does not pay for them.
    ///
    /// # Errors
    /// A driver error.
    pub fn upload(&self) -> CudaResult<()> {
        self.inner
            .upload()
            .map_err(CudaError::driver("uploading a CUDA graph"))
    }

    /// The stream the graph replays on.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }
}

impl Stream {
    /// Captures the work `record` queues on this stream into a [`Graph`] instead of running
    /// it (thread-local capture mode). Queue the work on the stream passed to `record`, and
    /// do nothing there that waits for the GPU (synchronising, host copies of results):
    /// those calls fail during a capture. First waits for all work queued on the context;
    /// while the capture is open, cudarc's cross-stream ordering of buffers is paused for the
    /// whole context, so other threads should not queue work on it meanwhile.
    ///
    /// # Errors
    /// - `record`'s error (the capture is ended and dropped first);
    /// - [`CudaError::NoGraph`] if the driver ended the capture without a graph (a capture
    ///   of nothing gives a graph that does nothing);
    /// - a driver error: e.g. `CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED` on a context's
    ///   default stream, which cannot be captured (use [`Stream::new`]).
    pub fn capture<'a>(
        &self,
        record: impl FnOnce(&Stream) -> CudaResult<()> + 'a,
    ) -> CudaResult<Graph<'a>> {
        // cudarc orders each buffer's uses across streams with events; inside a capture,
        // waiting on an event recorded outside it is an error
        // (CUDA_ERROR_STREAM_CAPTURE_ISOLATION). So: finish all work queued so far on this
        // context, then pause the event bookkeeping while the capture is open. The graph's
        // own uses of the buffers are ordered on this stream, and dropping the graph waits
        // for its replays, before the borrows of the buffers end.
        let ctx = self.context().clone();
        ctx.synchronize().map_err(CudaError::driver(
            "finishing queued work before a graph capture",
        ))?;
        let tracking = ctx.is_event_tracking();
        if tracking {
            // SAFETY: turned back on below, before returning; buffers allocated while it is
            // off get no events (allocating inside a capture is not supported here).
            unsafe { ctx.disable_event_tracking() };
        }
        let begun = self
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(CudaError::driver(
                "starting a graph capture (the default stream cannot be captured: use \
                 Stream::new)",
            ));
        let (recorded, ended) = match begun {
            Ok(()) => {
                let recorded = record(self);
                (recorded, self.end_capture(sys::CUgraphInstantiate_flags(0)))
            }
            Err(e) => (Err(e), Ok(None)),
        };
        if tracking {
            // SAFETY: restores the state found above.
            unsafe { ctx.enable_event_tracking() };
        }
        recorded?;
        match ended.map_err(CudaError::driver("ending a graph capture"))? {
            Some(inner) => Ok(Graph {
                inner,
                stream: self.clone(),
                borrows: PhantomData,
            }),
            None => Err(CudaError::NoGraph),
        }
    }
}
