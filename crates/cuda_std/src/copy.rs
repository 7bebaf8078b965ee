//! [`DeviceCopy`]: types whose bytes can be copied to the GPU and used there as they are.
//! Defined in `cust_core`, the contract crate the host runtime shares; re-exported here.

pub use cust_core::DeviceCopy;
