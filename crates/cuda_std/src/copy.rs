//! [`DeviceCopy`]: types whose bytes can be copied to the GPU and used there as they are.

/// A type that can be passed to a kernel by value (copied byte for byte into the launch's
/// parameter buffer) or stored in device buffers.
///
/// # Safety
/// Implement only for types that
/// - are `Copy` and have a defined layout: primitives, arrays of `DeviceCopy`, or
///   `#[repr(C)]` / `#[repr(transparent)]` / `#[repr(u8..u64)]` types whose fields are
///   `DeviceCopy`;
/// - contain no references and no host pointers (a host address is meaningless on the GPU);
/// - are valid for every bit pattern the host can produce for them (an enum is fine only if
///   the host only ever passes its declared discriminants, which safe host code guarantees).
pub unsafe trait DeviceCopy: Copy {}

macro_rules! impl_device_copy {
    ($($t:ty),* $(,)?) => {
        $(
            // SAFETY: primitive numeric types: any bit pattern, no pointers.
            unsafe impl DeviceCopy for $t {}
        )*
    };
}

impl_device_copy!(
    u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, f32, f64, bool
);

// SAFETY: an array of DeviceCopy elements has the elements' layout, contiguous.
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {}

// SAFETY: glam's scalar vector types are `#[repr(C)]` structs of primitive fields (the
// `u32`/`f32` types used here have no SIMD representation).
unsafe impl DeviceCopy for glam::UVec3 {}
// SAFETY: as above.
unsafe impl DeviceCopy for glam::Vec3 {}
// SAFETY: as above.
unsafe impl DeviceCopy for glam::UVec2 {}
// SAFETY: as above.
unsafe impl DeviceCopy for glam::Vec2 {}
