//! Collectives across the GPUs of one process through NCCL (over cudarc's `nccl` module;
//! NCCL is loaded at run time, like the driver).
//!
//! [`Communicators`] holds one NCCL communicator per GPU, all driven from one thread: each
//! collective takes one buffer per GPU (rank order) and queues NCCL's operation on every
//! rank's stream inside one NCCL group, so no rank waits for a call that has not been made.
//!
//! ```no_run
//! # use cust::{nccl::{Communicators, ReduceOp}, prelude::*};
//! # fn main() -> CudaResult<()> {
//! // NCCL_NVLS_ENABLE must be set in the environment (see `Communicators::new`).
//! let streams = (0..cust::device::Device::num_devices()?)
//!     .map(|i| {
//!         let ctx = Context::new(cust::device::Device::get_device(i)?)?;
//!         Stream::new_in(&ctx, StreamFlags::NON_BLOCKING, None)
//!     })
//!     .collect::<CudaResult<Vec<_>>>()?;
//! let comms = Communicators::new(&streams)?;
//! let mut partial: Vec<DeviceBuffer<f64>> = Vec::new(); // one per GPU, filled by kernels
//! # let _ = &mut partial;
//! comms.all_reduce_in_place(&mut partial.iter_mut().collect::<Vec<_>>(), ReduceOp::Sum)?;
//! // Each GPU's buffer now holds the sum over all GPUs, once its stream gets there.
//! # Ok(())
//! # }
//! ```

use crate::{
    error::{CudaError, CudaResult},
    stream::Stream,
};
use cudarc::{
    driver::{DevicePtr, DevicePtrMut, sys as driver_sys},
    nccl::{
        result::{self, NcclError},
        safe::{Comm, NcclType},
        sys,
    },
};
use std::{ffi::CStr, fmt};

/// The reduction of a collective ([`Communicators::all_reduce`]), NCCL's `ncclRedOp_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum (`ncclSum`).
    Sum,
    /// The product (`ncclProd`).
    Prod,
    /// The maximum (`ncclMax`).
    Max,
    /// The minimum (`ncclMin`).
    Min,
    /// The mean over ranks (`ncclAvg`).
    Avg,
}

impl ReduceOp {
    /// cudarc's value for this reduction.
    fn to_cudarc(self) -> cudarc::nccl::safe::ReduceOp {
        use cudarc::nccl::safe::ReduceOp as R;
        match self {
            Self::Sum => R::Sum,
            Self::Prod => R::Prod,
            Self::Max => R::Max,
            Self::Min => R::Min,
            Self::Avg => R::Avg,
        }
    }
}

/// The environment variable that switches NCCL's NVLink multicast (NVLS) on or off. It is
/// read by NCCL when a communicator is created; see [`Communicators::new`].
pub const NVLS_ENV: &str = "NCCL_NVLS_ENABLE";

/// Whether the NCCL library can be loaded (`libnccl.so` on the library path).
pub fn is_available() -> bool {
    // SAFETY: only tries to open the library.
    unsafe { sys::is_culib_present() }
}

/// The loaded NCCL's version `(major, minor, patch)`, e.g. `(2, 27, 3)`.
///
/// # Errors
/// [`CudaError::NoNccl`] if the library cannot be loaded; [`CudaError::Nccl`].
pub fn version() -> CudaResult<(u32, u32, u32)> {
    if !is_available() {
        return Err(CudaError::NoNccl);
    }
    let mut code = 0;
    // SAFETY: NCCL writes one int.
    unsafe { sys::ncclGetVersion(&raw mut code) }
        .result()
        .map_err(nccl_error("reading NCCL's version"))?;
    // NCCL_VERSION_CODE since 2.9: major·10000 + minor·100 + patch (nccl.h).
    let code = u32::try_from(code).unwrap_or(0);
    Ok((code / 10000, code / 100 % 100, code % 100))
}

fn nccl_error(during: impl Into<String>) -> impl FnOnce(NcclError) -> CudaError {
    let during = during.into();
    move |e| {
        // SAFETY: NCCL returns a static, NUL-terminated string for every result code.
        let text = unsafe { CStr::from_ptr(sys::ncclGetErrorString(e.0)) }
            .to_string_lossy()
            .into_owned();
        CudaError::Nccl {
            during,
            name: format!("{:?}", e.0),
            code: e.0 as u32,
            text,
        }
    }
}

/// One NCCL communicator per GPU of this process (ranks `0..len()` in the order of the
/// streams given to [`Communicators::new`]), driven from the thread that owns it (NCCL's
/// communicators are not `Send` in cudarc).
pub struct Communicators {
    comms: Vec<Comm>,
    streams: Vec<Stream>,
    ordinals: Vec<usize>,
}

impl fmt::Debug for Communicators {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Communicators")
            .field("ordinals", &self.ordinals)
            .finish_non_exhaustive()
    }
}

impl Communicators {
    /// Creates one communicator per stream (`ncclCommInitAll`); each stream must be on a
    /// different GPU. Collectives run on these streams.
    ///
    /// NCCL's NVLink multicast (NVLS) must be chosen explicitly: the environment variable
    /// `NCCL_NVLS_ENABLE` ([`NVLS_ENV`]) must be set before the first communicator is made
    /// (ferrocuda's machines need `NCCL_NVLS_ENABLE=0`). cust itself never creates multicast
    /// objects.
    ///
    /// # Errors
    /// - [`CudaError::LaunchConfig`] if `streams` is empty or two streams share a GPU;
    /// - [`CudaError::Unsupported`] if `NCCL_NVLS_ENABLE` is not set;
    /// - [`CudaError::NoNccl`] if the library cannot be loaded;
    /// - [`CudaError::Nccl`] if NCCL fails;
    /// - [`CudaError::NotOnEmulator`] for a stream of the CPU emulator.
    pub fn new(streams: &[Stream]) -> CudaResult<Self> {
        if streams.is_empty() {
            return Err(CudaError::LaunchConfig(
                "NCCL communicators need at least one stream (one per GPU)".into(),
            ));
        }
        if streams.iter().any(Stream::is_emulator) {
            return Err(CudaError::NotOnEmulator {
                operation: "NCCL communicators",
            });
        }
        if std::env::var_os(NVLS_ENV).is_none() {
            return Err(CudaError::Unsupported(
                "NCCL without NCCL_NVLS_ENABLE set: set it to 0 (NVLink multicast off) or 1 \
                 before creating communicators",
            ));
        }
        let ordinals: Vec<usize> = streams.iter().map(|s| s.context().ordinal()).collect();
        for (i, o) in ordinals.iter().enumerate() {
            if ordinals[..i].contains(o) {
                return Err(CudaError::LaunchConfig(format!(
                    "NCCL communicators need one stream per GPU; GPU {o} was given twice \
                     (ordinals {ordinals:?})"
                )));
            }
        }
        if !is_available() {
            return Err(CudaError::NoNccl);
        }
        let comms = Comm::from_devices(streams.iter().map(|s| s.as_cudarc().clone()).collect())
            .map_err(nccl_error(format!(
                "creating communicators for GPUs {ordinals:?}"
            )))?;
        Ok(Self {
            comms,
            streams: streams.to_vec(),
            ordinals,
        })
    }

    /// Number of ranks (GPUs).
    pub fn len(&self) -> usize {
        self.comms.len()
    }

    /// Always false: [`Communicators::new`] refuses an empty list.
    pub fn is_empty(&self) -> bool {
        self.comms.is_empty()
    }

    /// The stream of rank `rank`, on which its collectives run.
    ///
    /// # Panics
    /// If `rank >= len()`.
    pub fn stream(&self, rank: usize) -> &Stream {
        &self.streams[rank]
    }

    /// The device ordinal of each rank.
    pub fn ordinals(&self) -> &[usize] {
        &self.ordinals
    }

    /// Checks one buffer per rank, all of `len` elements, each on its rank's GPU.
    fn check_buffers(&self, what: &'static str, ptrs: &[(u64, usize)]) -> CudaResult<()> {
        if ptrs.len() != self.len() {
            return Err(CudaError::LaunchConfig(format!(
                "{what}: {} buffers given for {} ranks; give one per GPU, in rank order",
                ptrs.len(),
                self.len()
            )));
        }
        let len = ptrs[0].1;
        for (rank, &(ptr, n)) in ptrs.iter().enumerate() {
            if n != len {
                return Err(CudaError::LengthMismatch {
                    what,
                    src: len,
                    dst: n,
                });
            }
            let mut ordinal: i32 = -1;
            // SAFETY: the driver writes one int for this attribute; `ptr` is a live device
            // allocation borrowed by the caller.
            unsafe {
                driver_sys::cuPointerGetAttribute(
                    (&raw mut ordinal).cast(),
                    driver_sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                    ptr,
                )
            }
            .result()
            .map_err(CudaError::driver(
                "finding the GPU of a collective's buffer",
            ))?;
            if usize::try_from(ordinal).ok() != Some(self.ordinals[rank]) {
                return Err(CudaError::LaunchConfig(format!(
                    "{what}: rank {rank}'s buffer is on GPU {ordinal}, not on its GPU {}",
                    self.ordinals[rank]
                )));
            }
        }
        Ok(())
    }

    /// Runs `queue` for every rank inside one NCCL group (`ncclGroupStart`/`End`), which one
    /// thread needs to drive several GPUs' collectives; the group is closed also when a
    /// rank's call fails.
    fn grouped(
        &self,
        what: &str,
        mut queue: impl FnMut(usize, &Comm) -> Result<result::NcclStatus, NcclError>,
    ) -> CudaResult<()> {
        result::group_start().map_err(nccl_error(format!("starting a group for {what}")))?;
        let mut first_error = None;
        for (rank, comm) in self.comms.iter().enumerate() {
            if let Err(e) = queue(rank, comm) {
                first_error = Some(nccl_error(format!("queueing {what} on rank {rank}"))(e));
                break;
            }
        }
        let ended = result::group_end().map_err(nccl_error(format!("ending the group of {what}")));
        match first_error {
            Some(e) => Err(e),
            None => ended.map(|_| ()),
        }
    }

    /// `recv[r] = op over all ranks of send[·]`, element by element, for every rank `r`
    /// (`ncclAllReduce`), queued on each rank's stream.
    ///
    /// `send` and `recv`: one buffer per rank, in rank order, each on its rank's GPU, all of
    /// the same length.
    ///
    /// # Errors
    /// [`CudaError::LaunchConfig`] for a wrong number of buffers or a buffer on another GPU
    /// than its rank's, [`CudaError::LengthMismatch`] for unequal lengths,
    /// [`CudaError::Nccl`] if NCCL fails.
    pub fn all_reduce<T: NcclType, S: DevicePtr<T>, R: DevicePtrMut<T> + DevicePtr<T>>(
        &self,
        send: &[&S],
        recv: &mut [&mut R],
        op: ReduceOp,
    ) -> CudaResult<()> {
        let sends = self.pointers(send.iter().copied());
        self.check_buffers("all_reduce (send buffers)", &sends)?;
        let recvs = self.pointers(recv.iter().map(|b| &**b));
        self.check_buffers("all_reduce (receive buffers)", &recvs)?;
        if sends[0].1 != recvs[0].1 {
            return Err(CudaError::LengthMismatch {
                what: "all_reduce (send vs receive buffers)",
                src: sends[0].1,
                dst: recvs[0].1,
            });
        }
        self.grouped("all_reduce", |rank, comm| {
            comm.all_reduce(send[rank], &mut *recv[rank], &op.to_cudarc())
        })
    }

    /// [`all_reduce`](Self::all_reduce) with each rank's buffer both input and result.
    ///
    /// # Errors
    /// As [`all_reduce`](Self::all_reduce).
    pub fn all_reduce_in_place<T: NcclType, R: DevicePtrMut<T> + DevicePtr<T>>(
        &self,
        bufs: &mut [&mut R],
        op: ReduceOp,
    ) -> CudaResult<()> {
        let ptrs = self.pointers(bufs.iter().map(|b| &**b));
        self.check_buffers("all_reduce_in_place", &ptrs)?;
        self.grouped("all_reduce_in_place", |rank, comm| {
            comm.all_reduce_in_place(&mut *bufs[rank], &op.to_cudarc())
        })
    }

    /// Device address and length of each buffer, read on its rank's stream (cudarc orders
    /// the buffer's earlier uses on other streams before it).
    fn pointers<'b, T, B: DevicePtr<T> + 'b>(
        &self,
        bufs: impl Iterator<Item = &'b B>,
    ) -> Vec<(u64, usize)> {
        bufs.zip(self.streams.iter().cycle())
            .map(|(b, s)| (b.device_ptr(s.as_cudarc()).0, b.len()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_streams_is_refused_before_anything_is_loaded() {
        let e = Communicators::new(&[]).unwrap_err().to_string();
        assert!(e.contains("at least one stream"), "{e}");
    }

    #[test]
    fn nccl_errors_carry_name_code_and_text() {
        // ncclInvalidArgument is 4 in every NCCL 2.x (nccl.h); the description comes from
        // the library when it is present, so only the name and code are checked here.
        let e = CudaError::Nccl {
            during: "testing".into(),
            name: format!("{:?}", sys::ncclResult_t::ncclInvalidArgument),
            code: sys::ncclResult_t::ncclInvalidArgument as u32,
            text: "invalid argument".into(),
        };
        assert_eq!(
            e.to_string(),
            "NCCL error while testing: ncclInvalidArgument (4): invalid argument"
        );
    }
}
