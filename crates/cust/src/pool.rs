//! [`DevicePool`]: every visible GPU, lent to one user at a time through an RAII guard.
//!
//! ```no_run
//! # fn main() -> cust::CudaResult<()> {
//! let pool = cust::pool::DevicePool::new()?; // all GPUs
//! std::thread::scope(|s| {
//!     for _ in 0..8 {
//!         s.spawn(|| {
//!             let gpu = pool.acquire(); // waits until a GPU is free
//!             // ... work on `gpu.context()`; the GPU goes back when `gpu` is dropped,
//!             // also if this thread panics.
//!         });
//!     }
//! });
//! # Ok(())
//! # }
//! ```

use crate::{
    context::{Context, CurrentContext, DeviceChoice, gpu_present},
    device::Device,
    error::{CudaError, CudaResult},
};
use std::{
    fmt,
    sync::{Condvar, Mutex},
    time::Duration,
};

/// Items lent to one holder at a time: a free list and a condition variable. Generic so that
/// its rules (each item lent once, returned on drop, also on panic) are tested without a GPU;
/// [`DevicePool`] lends contexts.
pub struct Pool<T> {
    free: Mutex<Vec<usize>>,
    returned: Condvar,
    items: Vec<T>,
}

impl<T> fmt::Debug for Pool<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("items", &self.items.len())
            .field("free", &self.free_count())
            .finish()
    }
}

/// An item on loan from a [`Pool`]; dropping it gives the item back and wakes one waiter.
pub struct Lease<'p, T> {
    pool: &'p Pool<T>,
    index: usize,
}

impl<T: fmt::Debug> fmt::Debug for Lease<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lease")
            .field("index", &self.index)
            .field("item", self.item())
            .finish()
    }
}

impl<T> Pool<T> {
    /// A pool lending `items` (item `i` is lent as index `i`).
    pub fn new(items: Vec<T>) -> Self {
        let free = (0..items.len()).rev().collect();
        Self {
            free: Mutex::new(free),
            returned: Condvar::new(),
            items,
        }
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// `true` if the pool has no items (then [`acquire`](Pool::acquire) would wait forever;
    /// it panics instead).
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Item `index` without lending it, on loan or not: for work that may run beside its
    /// holder's (e.g. allocating memory on a GPU that another thread renders on).
    ///
    /// # Panics
    /// If `index` ≥ [`len`](Pool::len).
    pub fn peek(&self, index: usize) -> &T {
        &self.items[index]
    }

    /// Items not on loan now.
    pub fn free_count(&self) -> usize {
        self.lock().len()
    }

    /// The lowest-numbered free item, waiting until one is returned if all are on loan.
    ///
    /// # Panics
    /// If the pool is empty (nothing could ever be returned).
    pub fn acquire(&self) -> Lease<'_, T> {
        assert!(
            !self.items.is_empty(),
            "acquire on an empty pool would wait forever"
        );
        let mut free = self.lock();
        loop {
            if let Some(index) = free.pop() {
                return Lease { pool: self, index };
            }
            free = self.returned.wait(free).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// [`acquire`](Pool::acquire), giving up after `timeout`.
    pub fn acquire_timeout(&self, timeout: Duration) -> Option<Lease<'_, T>> {
        let mut free = self.lock();
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if let Some(index) = free.pop() {
                return Some(Lease { pool: self, index });
            }
            let left = deadline.checked_duration_since(std::time::Instant::now())?;
            free = self
                .returned
                .wait_timeout(free, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// A free item now, or `None` if all are on loan.
    pub fn try_acquire(&self) -> Option<Lease<'_, T>> {
        self.lock().pop().map(|index| Lease { pool: self, index })
    }

    /// The free list; a panic while it was held cannot leave it inconsistent (every critical
    /// section is one push or pop), so a poisoned lock is simply taken over.
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<usize>> {
        self.free.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl<T> Lease<'_, T> {
    /// The item's index in the pool.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The item.
    pub fn item(&self) -> &T {
        &self.pool.items[self.index]
    }
}

impl<T> Drop for Lease<'_, T> {
    fn drop(&mut self) {
        // Kept sorted descending so that `pop` lends the lowest index first.
        let mut free = self.pool.lock();
        let at = free.partition_point(|&i| i > self.index);
        free.insert(at, self.index);
        drop(free);
        self.pool.returned.notify_one();
    }
}

/// Every visible GPU's primary context, lent one at a time ([`DevicePool::acquire`]). Safe to
/// share between threads (`&DevicePool` is `Send + Sync`).
#[derive(Debug)]
pub struct DevicePool {
    pool: Pool<Context>,
}

/// A GPU on loan from a [`DevicePool`]; its context is current on the acquiring thread.
/// Dropping it (also during a panic) returns the GPU.
pub type DeviceLease<'p> = Lease<'p, Context>;

impl DevicePool {
    /// A pool over every GPU the driver sees.
    ///
    /// # Errors
    /// [`CudaError::NoDevice`] when there is none, or as [`Context::new`].
    pub fn new() -> CudaResult<Self> {
        let n = Device::num_devices()?;
        if n == 0 {
            return Err(CudaError::NoDevice);
        }
        Self::with_ordinals(0..n)
    }

    /// The pool [`DeviceChoice::from_env`] asks for: every GPU ([`DevicePool::new`]) for
    /// `gpu`, and for `auto` when the driver reports a GPU; otherwise one CPU emulator
    /// device ([`Context::emulator`]), so code written for a pool runs without a GPU.
    ///
    /// # Errors
    /// A bad `FERROCUDA_DEVICE` value; for a GPU pool, those of [`DevicePool::new`].
    pub fn from_env() -> CudaResult<Self> {
        match DeviceChoice::from_env()? {
            DeviceChoice::Cpu => Ok(Self::emulator()),
            DeviceChoice::Auto if !gpu_present() => Ok(Self::emulator()),
            DeviceChoice::Gpu | DeviceChoice::Auto => Self::new(),
        }
    }

    /// A pool of one CPU emulator device ([`Context::emulator`]).
    pub fn emulator() -> Self {
        Self {
            pool: Pool::new(vec![Context::emulator()]),
        }
    }

    /// A pool over the GPUs `ordinals`.
    ///
    /// # Errors
    /// [`CudaError::BadOrdinal`] for an ordinal the driver does not have, [`CudaError::NoDevice`]
    /// for an empty list, or as [`Context::new`].
    pub fn with_ordinals(ordinals: impl IntoIterator<Item = u32>) -> CudaResult<Self> {
        let contexts = ordinals
            .into_iter()
            .map(|o| Context::new(Device::get_device(o)?))
            .collect::<CudaResult<Vec<_>>>()?;
        if contexts.is_empty() {
            return Err(CudaError::NoDevice);
        }
        Ok(Self {
            pool: Pool::new(contexts),
        })
    }

    /// Number of GPUs (1 for the emulator's pool).
    pub fn len(&self) -> usize {
        self.pool.len()
    }

    /// Always `false`: a pool has at least one GPU.
    pub fn is_empty(&self) -> bool {
        self.pool.is_empty()
    }

    /// A free GPU (the lowest-numbered), waiting until one is returned if all are on loan;
    /// its context is made current on this thread.
    pub fn acquire(&self) -> DeviceLease<'_> {
        let lease = self.pool.acquire();
        CurrentContext::set_current(lease.item());
        lease
    }

    /// GPUs not on loan now.
    pub fn free_count(&self) -> usize {
        self.pool.free_count()
    }
}

impl DeviceLease<'_> {
    /// The GPU's context.
    pub fn context(&self) -> &Context {
        self.item()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn each_item_is_lent_once_at_a_time_across_threads() {
        let pool = Pool::new(vec!["a", "b", "c"]);
        let in_use: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(0)).collect();
        let most = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..12 {
                s.spawn(|| {
                    for _ in 0..50 {
                        let lease = pool.acquire();
                        let now = in_use[lease.index()].fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::yield_now();
                        in_use[lease.index()].fetch_sub(1, Ordering::SeqCst);
                    }
                });
            }
        });
        assert_eq!(
            most.load(Ordering::SeqCst),
            1,
            "an item was lent twice at once"
        );
        assert_eq!(pool.free_count(), 3);
    }

    #[test]
    fn the_emulator_pool_lends_its_one_device_with_its_context_current() {
        let pool = DevicePool::emulator();
        assert_eq!(pool.len(), 1);
        let lease = pool.acquire();
        assert!(lease.context().is_emulator());
        assert!(CurrentContext::get_current().unwrap().is_emulator());
        assert!(pool.try_acquire_for_test().is_none());
        drop(lease);
        assert_eq!(pool.free_count(), 1);
    }

    impl DevicePool {
        fn try_acquire_for_test(&self) -> Option<DeviceLease<'_>> {
            self.pool.try_acquire()
        }
    }

    #[test]
    fn a_panicking_holder_gives_the_item_back() {
        let pool = Pool::new(vec![10]);
        let result = std::thread::scope(|s| {
            s.spawn(|| {
                let _lease = pool.acquire();
                panic!("the holder fails");
            })
            .join()
        });
        assert!(result.is_err());
        assert_eq!(pool.free_count(), 1);
        assert_eq!(*pool.try_acquire().expect("returned on panic").item(), 10);
    }

    #[test]
    fn lowest_free_item_first_and_timeouts() {
        let pool = Pool::new(vec![0, 1, 2]);
        let a = pool.acquire();
        let b = pool.acquire();
        assert_eq!((a.index(), b.index()), (0, 1));
        drop(a);
        let c = pool.acquire();
        assert_eq!(c.index(), 0);
        let d = pool.acquire();
        assert_eq!(d.index(), 2);
        assert!(pool.try_acquire().is_none());
        assert!(pool.acquire_timeout(Duration::from_millis(20)).is_none());
        // Peeking at an item on loan neither waits nor lends it.
        assert_eq!(*pool.peek(2), 2);
        assert_eq!(pool.free_count(), 0);
        drop(b);
        assert_eq!(
            pool.acquire_timeout(Duration::from_millis(20))
                .map(|l| l.index()),
            Some(1)
        );
    }
}
