//! [`DeviceCopy`]: types whose bytes can be copied to the GPU and used there as they are.

use core::{
    marker::PhantomData,
    mem::MaybeUninit,
    num::{
        NonZeroI8, NonZeroI16, NonZeroI32, NonZeroI64, NonZeroI128, NonZeroIsize, NonZeroU8,
        NonZeroU16, NonZeroU32, NonZeroU64, NonZeroU128, NonZeroUsize, Wrapping,
    },
};

/// A type that can be passed to a kernel by value (copied byte for byte into the launch's
/// parameter buffer) or stored in device buffers.
///
/// Derive it with `#[derive(DeviceCopy)]` (`cuda_std::DeviceCopy`), which checks the
/// conditions below at compile time, or implement it by hand.
///
/// Implemented here for: every integer and float primitive (`u128`/`i128` included), `bool`,
/// `char`, the `NonZero*` integers, `()`, raw pointers `*const T`/`*mut T` (which must hold
/// device addresses to be dereferenced on the GPU), and, where their parts are
/// `DeviceCopy`: arrays `[T; N]`, tuples of up to 12 elements, `MaybeUninit<T>`,
/// `Option<T>`, `Result<T, E>`, `Wrapping<T>`; `PhantomData<T>` for any `T`. With the `glam`
/// feature, glam's `f32`/`u32` vectors, matrices and `Quat` too; with the `half` feature, the
/// `half` crate's `f16` and `bf16`.
///
/// Host and device agree on the layout of these types because both are laid out by rustc
/// for 64-bit targets; `#[repr(C)]` types are the portable choice for your own structs.
///
/// # Safety
/// Implement only for types that
/// - are `Copy` and have a defined layout: primitives, arrays of `DeviceCopy`, or
///   `#[repr(C)]` / `#[repr(transparent)]` / `#[repr(u8..u64)]` types whose fields are
///   `DeviceCopy`;
/// - contain no references and no host pointers that device code dereferences (a host
///   address is meaningless on the GPU);
/// - are valid for every bit pattern the host can produce for them (an enum is fine only if
///   the host only ever passes its declared discriminants, which safe host code guarantees).
pub unsafe trait DeviceCopy: Copy {}

macro_rules! impl_device_copy {
    ($($t:ty),* $(,)?) => {
        $(
            // SAFETY: plain values with no pointers; every value safe code can make is valid
            // on the device, and rustc lays them out alike on both 64-bit targets.
            unsafe impl DeviceCopy for $t {}
        )*
    };
}

impl_device_copy!(
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    f32,
    f64,
    bool,
    char,
    (),
    NonZeroU8,
    NonZeroU16,
    NonZeroU32,
    NonZeroU64,
    NonZeroU128,
    NonZeroUsize,
    NonZeroI8,
    NonZeroI16,
    NonZeroI32,
    NonZeroI64,
    NonZeroI128,
    NonZeroIsize,
);

// SAFETY: a pointer is an address (8 bytes on both sides); what it points to is the concern
// of the code that dereferences it, which is `unsafe` on both sides.
unsafe impl<T: ?Sized> DeviceCopy for *const T {}
// SAFETY: as for `*const T`.
unsafe impl<T: ?Sized> DeviceCopy for *mut T {}
// SAFETY: an array of DeviceCopy elements has the elements' layout, contiguous.
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {}
// SAFETY: `MaybeUninit<T>` has `T`'s layout and accepts any bytes.
unsafe impl<T: DeviceCopy> DeviceCopy for MaybeUninit<T> {}
// SAFETY: built from DeviceCopy parts by safe code on the host; the same rustc layout
// algorithm places the discriminant or niche on both sides.
unsafe impl<T: DeviceCopy> DeviceCopy for Option<T> {}
// SAFETY: as for `Option<T>`.
unsafe impl<T: DeviceCopy, E: DeviceCopy> DeviceCopy for Result<T, E> {}
// SAFETY: zero-sized.
unsafe impl<T: ?Sized> DeviceCopy for PhantomData<T> {}
// SAFETY: `#[repr(transparent)]` over `T`.
unsafe impl<T: DeviceCopy> DeviceCopy for Wrapping<T> {}

macro_rules! impl_device_copy_tuple {
    ($($t:ident),+) => {
        // SAFETY: a tuple of DeviceCopy fields, laid out by rustc alike on both sides.
        unsafe impl<$($t: DeviceCopy),+> DeviceCopy for ($($t,)+) {}
    };
}

// Tuples of up to 12 fields.
for_each_tuple!(impl_device_copy_tuple; A B C D E F G H I J K L);

#[cfg(feature = "glam")]
macro_rules! impl_device_copy_glam {
    ($($t:ident),* $(,)?) => {
        $(
            // SAFETY: glam's `f32`/`u32`/`bool` vectors, matrices and quaternions are
            // `#[repr(C)]` structs of primitive fields (or, on the host, a SIMD register of
            // the same size, alignment and element order), valid for any bits of their
            // element type.
            unsafe impl DeviceCopy for glam::$t {}
        )*
    };
}

#[cfg(feature = "glam")]
impl_device_copy_glam!(
    Vec2, Vec3, Vec4, UVec2, UVec3, UVec4, BVec2, BVec3, BVec4, Mat2, Mat3, Mat4, Quat,
);

// SAFETY: `half::f16` is `#[repr(transparent)]` over a `u16` (its IEEE 754 binary16 bits),
// and every `u16` is a valid `f16` (NaNs included), laid out alike on both sides.
#[cfg(feature = "half")]
unsafe impl DeviceCopy for half::f16 {}
// SAFETY: as for `f16`: `half::bf16` is `#[repr(transparent)]` over a `u16` (its bfloat16
// bits), valid for every bit pattern.
#[cfg(feature = "half")]
unsafe impl DeviceCopy for half::bf16 {}

#[cfg(test)]
mod tests {
    use super::*;

    fn device_copy<T: DeviceCopy>() {}

    #[derive(Clone, Copy)]
    #[repr(C)]
    struct Pair(u32, f32);
    // SAFETY: repr(C), primitive fields.
    unsafe impl DeviceCopy for Pair {}

    #[test]
    fn primitives_and_wrappers_are_device_copy() {
        device_copy::<u8>();
        device_copy::<u16>();
        device_copy::<u32>();
        device_copy::<u64>();
        device_copy::<u128>();
        device_copy::<usize>();
        device_copy::<i8>();
        device_copy::<i16>();
        device_copy::<i32>();
        device_copy::<i64>();
        device_copy::<i128>();
        device_copy::<isize>();
        device_copy::<f32>();
        device_copy::<f64>();
        device_copy::<bool>();
        device_copy::<char>();
        device_copy::<()>();
        device_copy::<NonZeroU8>();
        device_copy::<NonZeroU32>();
        device_copy::<NonZeroU128>();
        device_copy::<NonZeroI64>();
        device_copy::<NonZeroUsize>();
        device_copy::<*const f32>();
        device_copy::<*mut Pair>();
        device_copy::<*const [u8]>();
        device_copy::<MaybeUninit<Pair>>();
        device_copy::<Option<NonZeroU32>>();
        device_copy::<Result<u32, i8>>();
        device_copy::<PhantomData<&'static str>>();
        device_copy::<Wrapping<u64>>();
        device_copy::<[Pair; 4]>();
        device_copy::<[[u128; 2]; 3]>();
        // Tuples, from one field up to twelve.
        device_copy::<(u8,)>();
        device_copy::<(u8, f32)>();
        device_copy::<(u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, u8, Pair)>();
    }

    #[test]
    fn tuples_up_to_twelve_are_device_copy() {
        device_copy::<(u8,)>();
        device_copy::<(u8, f64)>();
        device_copy::<(u8, u16, u32, u64, u128, i8, i16, i32, i64, i128, f32, Pair)>();
    }

    #[cfg(feature = "glam")]
    #[test]
    fn glam_types_are_device_copy() {
        device_copy::<glam::Vec2>();
        device_copy::<glam::Vec3>();
        device_copy::<glam::Vec4>();
        device_copy::<glam::UVec2>();
        device_copy::<glam::UVec3>();
        device_copy::<glam::UVec4>();
        device_copy::<glam::BVec3>();
        device_copy::<glam::Mat4>();
        device_copy::<glam::Quat>();
    }

    #[cfg(feature = "half")]
    #[test]
    fn half_types_are_device_copy() {
        device_copy::<half::f16>();
        device_copy::<half::bf16>();
        device_copy::<[half::bf16; 8]>();
        assert_eq!(core::mem::size_of::<half::f16>(), 2);
        assert_eq!(core::mem::align_of::<half::bf16>(), 2);
    }
}
