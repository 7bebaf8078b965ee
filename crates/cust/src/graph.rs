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
/// Not `Sync`: the driver does not synchronise access to a graph.
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
    /// it (thread-local capture mode: other threads' CUDA calls are not affected). Queue the
    /// work on the stream passed to `record`, and do nothing there that waits for the GPU
    /// (synchronising, host copies of results): those calls fail during a capture.
    ///
    /// # Errors
    /// - `record`'s error (the capture is ended and dropped first);
    /// - [`CudaError::EmptyGraph`] if `record` queued nothing;
    /// - a driver error: e.g. `CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED` on a context's
    ///   default stream, which cannot be captured (use [`Stream::new`]).
    pub fn capture<'a>(
        &self,
        record: impl FnOnce(&Stream) -> CudaResult<()> + 'a,
    ) -> CudaResult<Graph<'a>> {
        self.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(CudaError::driver(
                "starting a graph capture (the default stream cannot be captured: use \
                 Stream::new)",
            ))?;
        let recorded = record(self);
        let ended = self.end_capture(sys::CUgraphInstantiate_flags(0));
        recorded?;
        match ended.map_err(CudaError::driver("ending a graph capture"))? {
            Some(inner) => Ok(Graph {
                inner,
                stream: self.clone(),
                borrows: PhantomData,
            }),
            None => Err(CudaError::EmptyGraph),
        }
    }
}
