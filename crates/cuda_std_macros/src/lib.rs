//! Procedural macros for `cuda_std`: [`macro@kernel`], [`macro@DeviceCopy`] and
//! [`macro@address_space`].

mod shared_static;

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{format_ident, quote, quote_spanned};
use syn::{
    Data, DeriveInput, Fields, FnArg, GenericArgument, GenericParam, ItemFn, Pat, PathArguments,
    ReturnType, Type, parse_macro_input, spanned::Spanned,
};

/// Marks a function as a CUDA kernel entry point.
///
/// On the GPU (`target_arch = "nvptx64"`) the function becomes a PTX `.entry` named exactly
/// like the Rust function (`#[unsafe(no_mangle)] extern "ptx-kernel"`).
///
/// On the host it becomes a **typed handle**: a constant of the same name, of type
/// `cuda_std::launch::Kernel<(kinds...), Safe | Unsafe>`, that the host crate launches with
/// matching arguments (a wrong argument type or count is a compile error). The body is also
/// compiled on the host (as a hidden function), so host builds and IDEs type-check it, and
/// the handle carries a host shim (`Kernel::host_entry`) that reads the parameters from the
/// same argument-pointer array `cuLaunchKernel` takes and runs the body: the CPU emulator,
/// `cuda_emu::launch`, runs it once per emulated thread.
///
/// Parameters may be:
/// - `&[T]`: a read-only device buffer (passed as `(pointer, length)`);
/// - `OutSlice<T>`: a writable device buffer whose safe methods cannot race;
/// - `AtomicSlice<T>`: a writable device buffer every access of which is atomic (any
///   thread may update any element, safely);
/// - `*mut T` / `*const T`: raw device pointers — the kernel must then be an `unsafe fn`;
/// - a value of a `DeviceCopy` type (numbers, `#[repr(C)]` structs marked `DeviceCopy`).
///
/// `T` must be `DeviceCopy` in every case. Rejected, with an error at the offending token:
/// receivers, generics, return values, `async`/`const`/explicit ABI, variadics, `&mut`
/// parameters (every thread would hold an aliasing `&mut`), references to single values (a
/// host address), and non-identifier patterns.
///
/// In the body, [`macro@address_space`]`(shared)` statics are supported as Rust-CUDA writes
/// them: `#[kernel]` rewrites `addr_of!(NAME)`, `addr_of_mut!(NAME)`, `&NAME`, `&mut NAME` and
/// `&raw const|mut NAME` to the array's address, and allows `unused_unsafe` in such a kernel.
///
/// The crate that uses `#[kernel]` must enable `#![cfg_attr(target_arch = "nvptx64",
/// feature(abi_ptx))]` at its root and depend on `cuda_std` directly.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    if !attr.is_empty() {
        let attr = TokenStream2::from(attr);
        return syn::Error::new_spanned(&attr, "#[kernel] takes no arguments")
            .to_compile_error()
            .into();
    }
    let func = parse_macro_input!(item as ItemFn);
    match expand(func) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}

/// What a parameter is, for the host-side handle type.
enum Kind<'a> {
    Slice(&'a Type),
    Out(&'a Type),
    Atomic(&'a Type),
    MutPtr(&'a Type),
    ConstPtr(&'a Type),
    Value(&'a Type),
}

impl Kind<'_> {
    /// The `cuda_std::launch` marker type.
    fn marker(&self) -> TokenStream2 {
        match self {
            Kind::Slice(t) => quote!(::cuda_std::launch::Slice<#t>),
            Kind::Out(t) => quote!(::cuda_std::launch::Out<#t>),
            Kind::Atomic(t) => quote!(::cuda_std::launch::AtomicOut<#t>),
            Kind::MutPtr(t) => quote!(::cuda_std::launch::MutPtr<#t>),
            Kind::ConstPtr(t) => quote!(::cuda_std::launch::ConstPtr<#t>),
            Kind::Value(t) => quote!(::cuda_std::launch::Value<#t>),
        }
    }

    /// The type that must be `DeviceCopy` (the element type, or the value type).
    fn copied_type(&self) -> &Type {
        match self {
            Kind::Slice(t)
            | Kind::Out(t)
            | Kind::Atomic(t)
            | Kind::MutPtr(t)
            | Kind::ConstPtr(t)
            | Kind::Value(t) => t,
        }
    }
}

fn expand(func: ItemFn) -> syn::Result<TokenStream2> {
    check_signature(&func)?;
    let mut kinds = Vec::new();
    let mut first_pointer: Option<&Type> = None;
    for input in &func.sig.inputs {
        let FnArg::Typed(pat_type) = input else {
            unreachable!("receivers are rejected by check_signature")
        };
        if !matches!(&*pat_type.pat, Pat::Ident(_)) {
            return Err(syn::Error::new_spanned(
                &pat_type.pat,
                "#[kernel] parameters must be plain names (no patterns)",
            ));
        }
        let kind = classify(&pat_type.ty)?;
        if matches!(kind, Kind::MutPtr(_) | Kind::ConstPtr(_)) && first_pointer.is_none() {
            first_pointer = Some(&*pat_type.ty);
        }
        kinds.push(kind);
    }
    if let (Some(pointer), None) = (first_pointer, &func.sig.unsafety) {
        return Err(syn::Error::new_spanned(
            pointer,
            "a #[kernel] that takes raw pointers must be an `unsafe fn` with a `# Safety` \
             section (what the pointers must point to); or take `&[T]` / `OutSlice<T>` instead",
        ));
    }

    let ItemFn {
        attrs,
        vis,
        sig,
        block,
    } = &func;
    let unsafety = &sig.unsafety;
    let ident = &sig.ident;
    let inputs = &sig.inputs;
    let body_ident = format_ident!("__kernel_body_{}", ident);
    let host_ident = format_ident!("__kernel_host_{}", ident);
    // The host shim: one read per parameter from the argument-pointer array, as the driver
    // reads `cuLaunchKernel`'s `kernelParams`.
    let arg_reads = kinds.iter().enumerate().map(|(i, kind)| {
        let read = match kind {
            Kind::Slice(t) => quote!(::cuda_std::__host_shim::arg_slice::<#t>),
            Kind::Out(t) => quote!(::cuda_std::__host_shim::arg_out::<#t>),
            Kind::Atomic(t) => quote!(::cuda_std::__host_shim::arg_atomic::<#t>),
            Kind::MutPtr(_) | Kind::ConstPtr(_) | Kind::Value(_) => {
                quote!(::cuda_std::__host_shim::arg_value)
            }
        };
        quote!(#read(*args.add(#i)))
    });
    let arg_reads: Vec<_> = arg_reads.collect();
    let host_fma_ident = format_ident!("__kernel_host_fma_{}", ident);
    let markers = kinds.iter().map(Kind::marker);
    let safety = if unsafety.is_some() {
        quote!(::cuda_std::launch::Unsafe)
    } else {
        quote!(::cuda_std::launch::Safe)
    };
    let copy_checks = kinds.iter().map(|k| {
        let t = k.copied_type();
        quote_spanned! {t.span()=>
            const _: () = ::cuda_std::launch::__assert_device_copy::<#t>();
        }
    });
    let docs = attrs.iter().filter(|a| a.path().is_ident("doc"));
    // `#[address_space(shared)] static mut` items become `&mut` bindings: their address is
    // taken through the binding, and the `unsafe` blocks around their uses (needed for a
    // `static mut`) are no longer needed, which must not warn in code ported unchanged.
    let shared = shared_static::shared_names(&quote!(#block));
    let (block, allow_unused_unsafe) = if shared.is_empty() {
        (quote!(#block), None)
    } else {
        (
            shared_static::rewrite_address_of(quote!(#block), &shared),
            Some(quote!(#[allow(unused_unsafe)])),
        )
    };
    Ok(quote! {
        #[cfg(target_arch = "nvptx64")]
        #(#attrs)*
        #allow_unused_unsafe
        #[unsafe(no_mangle)]
        // Slices cross as (ptr, len) aggregates, matched by the host launch code.
        #[allow(improper_ctypes_definitions)]
        #vis #unsafety extern "ptx-kernel" fn #ident(#inputs) #block

        #[cfg(not(target_arch = "nvptx64"))]
        #(#docs)*
        #[allow(non_upper_case_globals)]
        #vis const #ident: ::cuda_std::launch::Kernel<(#(#markers,)*), #safety> =
            ::cuda_std::launch::Kernel::__new_with_host(stringify!(#ident), #host_ident);

        /// The host shim of the kernel for the CPU emulator (`cuda_emu`) (see `cust_core`'s `HostEntry`).
        #[cfg(not(target_arch = "nvptx64"))]
        #[allow(non_snake_case, unused_variables, clippy::missing_safety_doc)]
        #[doc(hidden)]
        unsafe fn #host_ident(args: *const *mut ::core::ffi::c_void) {
            #[cfg(all(target_arch = "x86_64", not(target_feature = "fma")))]
            if ::cuda_std::__host_shim::fma_available() {
                // SAFETY: the CPU has FMA3 (checked); the rest as below.
                return unsafe { #host_fma_ident(args) };
            }
            // SAFETY: forwarded to the caller (`HostEntry`'s contract: one pointer per
            // parameter, to bytes of its kind; and the kernel's own `# Safety` section for an
            // `unsafe fn` kernel).
            unsafe { #body_ident(#(#arg_reads),*) }
        }

        /// The host shim compiled for CPUs with FMA3, so that the body's fused
        /// multiply-adds (`cuda_std::math::fmaf`, `fma`) become one instruction each instead
        /// of a call: the same results (FMA rounds once either way).
        #[cfg(all(target_arch = "x86_64", not(target_feature = "fma")))]
        #[allow(non_snake_case, unused_variables, clippy::missing_safety_doc)]
        #[doc(hidden)]
        #[target_feature(enable = "fma")]
        unsafe fn #host_fma_ident(args: *const *mut ::core::ffi::c_void) {
            // SAFETY: as the shim above.
            unsafe { #body_ident(#(#arg_reads),*) }
        }

        #[cfg(not(target_arch = "nvptx64"))]
        #[allow(dead_code, non_snake_case, clippy::missing_safety_doc)]
        #allow_unused_unsafe
        #[doc(hidden)]
        #[inline]
        #unsafety fn #body_ident(#inputs) #block

        #(#copy_checks)*
    })
}

/// Classifies a parameter type, rejecting those that cannot cross to the GPU.
fn classify(ty: &Type) -> syn::Result<Kind<'_>> {
    match ty {
        Type::Reference(r) => {
            if r.mutability.is_some() {
                return Err(syn::Error::new_spanned(
                    ty,
                    "`&mut` parameters are not allowed in a #[kernel]: every thread would hold \
                     an aliasing `&mut`; use `OutSlice<T>` (safe per-thread writes), \
                     `AtomicSlice<T>` (safe atomics on any element) or `*mut T` in an \
                     `unsafe fn`",
                ));
            }
            match &*r.elem {
                Type::Slice(s) => Ok(Kind::Slice(&s.elem)),
                _ => Err(syn::Error::new_spanned(
                    ty,
                    "a reference to a single value cannot be a #[kernel] parameter (it would \
                     hold a host address): pass the value itself, or a slice `&[T]`",
                )),
            }
        }
        Type::Ptr(p) if p.mutability.is_some() => Ok(Kind::MutPtr(&p.elem)),
        Type::Ptr(p) => Ok(Kind::ConstPtr(&p.elem)),
        Type::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last().expect("a path has a segment");
            // `Some(atomic)` for the two buffer types.
            let buffer = if last.ident == "OutSlice" {
                Some((false, "write `OutSlice<T>`"))
            } else if last.ident == "AtomicSlice" {
                Some((true, "write `AtomicSlice<T>`"))
            } else {
                None
            };
            if let Some((atomic, usage)) = buffer {
                let PathArguments::AngleBracketed(args) = &last.arguments else {
                    return Err(syn::Error::new_spanned(last, usage));
                };
                let elem = args.args.iter().find_map(|a| match a {
                    GenericArgument::Type(t) => Some(t),
                    _ => None,
                });
                return elem
                    .map(|t| {
                        if atomic {
                            Kind::Atomic(t)
                        } else {
                            Kind::Out(t)
                        }
                    })
                    .ok_or_else(|| syn::Error::new_spanned(last, usage));
            }
            Ok(Kind::Value(ty))
        }
        Type::Array(_) | Type::Tuple(_) | Type::Paren(_) | Type::Group(_) => Ok(Kind::Value(ty)),
        _ => Err(syn::Error::new_spanned(
            ty,
            "this type cannot be a #[kernel] parameter: use `&[T]`, `OutSlice<T>`, \
             `AtomicSlice<T>`, a raw pointer, or a `DeviceCopy` value",
        )),
    }
}

fn check_signature(func: &ItemFn) -> syn::Result<()> {
    let sig = &func.sig;
    if let Some(receiver) = sig.receiver() {
        return Err(syn::Error::new_spanned(
            receiver,
            "a #[kernel] cannot take `self`: kernels are free functions",
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return Err(syn::Error::new_spanned(
            &sig.generics,
            "a #[kernel] cannot be generic: each PTX entry needs one concrete signature; \
             write one kernel per type that calls a generic function",
        ));
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        return Err(syn::Error::new_spanned(
            ty,
            "a #[kernel] cannot return a value: write results through an `OutSlice<T>`",
        ));
    }
    if let Some(token) = &sig.asyncness {
        return Err(syn::Error::new_spanned(
            token,
            "a #[kernel] cannot be `async`",
        ));
    }
    if let Some(token) = &sig.constness {
        return Err(syn::Error::new_spanned(
            token,
            "a #[kernel] cannot be `const`",
        ));
    }
    if let Some(abi) = &sig.abi {
        return Err(syn::Error::new_spanned(
            abi,
            "a #[kernel] must not declare an ABI: #[kernel] adds `extern \"ptx-kernel\"` itself",
        ));
    }
    if let Some(variadic) = &sig.variadic {
        return Err(syn::Error::new_spanned(
            variadic,
            "a #[kernel] cannot be variadic",
        ));
    }
    Ok(())
}

/// Places a `static mut` array declared in a function body in **shared memory** (CUDA C's
/// `__shared__`), as Rust-CUDA's `#[address_space(shared)]` does:
///
/// ```no_run
/// # use cuda_std::kernel;
/// # use cuda_std::thread::{thread_idx_x, thread_idx_y};
/// # #[kernel]
/// # pub fn load_tile(x: f32) {
/// use core::mem::MaybeUninit;
/// use cuda_std::address_space;
///
/// const TILE: usize = 16; // module-level or local to the function
/// #[address_space(shared)]
/// static mut TILE_A: [[MaybeUninit<f32>; TILE]; TILE] =
///     [[const { MaybeUninit::uninit() }; TILE]; TILE];
/// # let (tx, ty) = (thread_idx_x() as usize, thread_idx_y() as usize);
/// unsafe { TILE_A[ty][tx].write(x) };
/// # }
/// # fn main() {}
/// ```
///
/// Rust has no address-space statics, so the item is rewritten into a binding of the same
/// name, `let NAME: &mut SharedArray<T, N>` (`cuda_std::shared::SharedArray`; for an array
/// of arrays `[[T; C]; R]`, `&mut SharedRows<SharedArray<T, C>, R>`, at any depth), to a
/// PTX `.shared .align A .b8 __cuda_std_shared_NAME_<id>[size_of::<[T; N]>()]` array
/// declared with `global_asm!` (its generic address from `cvta.shared.u64`; `<id>` hashes
/// the module path, file, line and column). The view has the array's layout and indexes as
/// the array does, with plain shared loads and stores on the GPU; on the CPU emulator each
/// indexed element is an access its race, initialisation and bounds checks see (`NAME[i]`
/// read, `NAME[i] = x` / `NAME[i] += x` / `NAME[i][j].write(x)` written; see
/// `SharedArray`). Code written for the static — `NAME[i] = x`, `NAME[i][j].write(x)`,
/// `NAME[i].assume_init()`, `NAME.len()`, `NAME.as_mut_ptr()`, inside `unsafe` — compiles
/// unchanged; whole-array uses of the static (`NAME.iter()`, a `&mut [T; N]` of it) do
/// not: index it, or take `NAME.as_mut_ptr()` (a raw pointer, whose accesses the emulator
/// does not see). Inside a `#[kernel]`, the kernel macro also rewrites `addr_of!(NAME)`,
/// `addr_of_mut!(NAME)`, `&NAME`, `&mut NAME` and `&raw const|mut NAME` to take the
/// array's address (not the binding's: a pointer to, or a reference of, the view), and
/// allows `unused_unsafe` (the `unsafe` a `static mut` needs is no longer needed).
///
/// Rules:
/// - `T` and `N` must be concrete (no generic parameters, as for any `static`); they may name
///   module items or items of the function body (a local `const N`).
/// - The declaration must come before its uses (it is a `let` now, not an item).
/// - The initialiser must be a constant of the type (it is type-checked) but is otherwise
///   ignored: shared memory is uninitialised at block start (PTX `.shared` variables cannot
///   be initialised). Write every element before reading it, or use `MaybeUninit<T>`.
/// - One declaration is one array per block; calling the function again gives the same
///   array, as for a CUDA C `__shared__` variable. Every thread of the block holds the
///   `&mut` at once, as every thread could reach the `static mut` it replaces: accesses to
///   the same element from different threads race unless separated by `sync_threads()`.
/// - Outside a `#[kernel]` (in a device function), `unsafe` blocks that only access the
///   binding are reported by the `unused_unsafe` lint; allow it there, or drop the `unsafe`.
/// - At module level (outside a function) it does not compile: the expansion is a `let`.
///
/// Rejected with an error at the offending token: another address space (`global`,
/// `constant`, `local`: a plain `static` or `let` already lives there), a `static` that is
/// not `mut`, and a type that is not an array.
///
/// On the host the binding's initialisation panics (shared memory is device-only).
#[proc_macro_attribute]
pub fn address_space(attr: TokenStream, item: TokenStream) -> TokenStream {
    match shared_static::expand(attr.into(), item.into()) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}

/// Derives `cuda_std::DeviceCopy` (a type that can be passed to a kernel by value and stored
/// in device buffers) for a struct or a fieldless enum with a defined layout.
///
/// Accepted:
/// - structs with `#[repr(C)]` or `#[repr(transparent)]`, every field `DeviceCopy` (checked
///   at compile time, at the field's type); generic parameters get a `DeviceCopy` bound;
/// - fieldless enums with a primitive representation (`#[repr(u8)]` ... `#[repr(i64)]`).
///
/// Rejected, with an error at the offending token: unions, enums with fields, and types
/// without one of those `repr`s (Rust's default layout may differ between the host and the
/// GPU compilation). The type must also be `Copy` (derive it too).
///
/// ```
/// # use cuda_std::DeviceCopy;
/// #[repr(C)]
/// #[derive(Clone, Copy, DeviceCopy)]
/// pub struct Params { scale: f32, offset: f32, n: u32 }
/// # fn device_copy<T: DeviceCopy>(_: T) {}
/// # device_copy(Params { scale: 2.0, offset: 1.0, n: 3 });
/// ```
#[proc_macro_derive(DeviceCopy)]
pub fn derive_device_copy(item: TokenStream) -> TokenStream {
    let input = parse_macro_input!(item as DeriveInput);
    match expand_device_copy(&input) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}

fn repr_words(input: &DeriveInput) -> syn::Result<Vec<String>> {
    let mut words = Vec::new();
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("repr")) {
        attr.parse_nested_meta(|meta| {
            if let Some(ident) = meta.path.get_ident() {
                words.push(ident.to_string());
            }
            // `align(N)` / `packed(N)`: skip the argument.
            if meta.input.peek(syn::token::Paren) {
                let _content;
                syn::parenthesized!(_content in meta.input);
            }
            Ok(())
        })?;
    }
    Ok(words)
}

fn expand_device_copy(input: &DeriveInput) -> syn::Result<TokenStream2> {
    let repr = repr_words(input)?;
    let has = |w: &str| repr.iter().any(|r| r == w);
    let field_types: Vec<&Type> = match &input.data {
        Data::Struct(data) => {
            if !has("C") && !has("transparent") {
                return Err(syn::Error::new_spanned(
                    &input.ident,
                    "DeviceCopy needs a defined layout: add `#[repr(C)]` (or `#[repr(transparent)]`), \
                     so the host and the GPU agree on field offsets",
                ));
            }
            match &data.fields {
                Fields::Named(f) => f.named.iter().map(|f| &f.ty).collect(),
                Fields::Unnamed(f) => f.unnamed.iter().map(|f| &f.ty).collect(),
                Fields::Unit => Vec::new(),
            }
        }
        Data::Enum(data) => {
            const INTS: [&str; 8] = ["u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64"];
            if !INTS.iter().any(|w| has(w)) {
                return Err(syn::Error::new_spanned(
                    &input.ident,
                    "a DeviceCopy enum needs a primitive representation, e.g. `#[repr(u32)]`",
                ));
            }
            if let Some(v) = data.variants.iter().find(|v| !v.fields.is_empty()) {
                return Err(syn::Error::new_spanned(
                    &v.fields,
                    "a DeviceCopy enum must be fieldless (its value is its discriminant)",
                ));
            }
            Vec::new()
        }
        Data::Union(u) => {
            return Err(syn::Error::new_spanned(
                u.union_token,
                "DeviceCopy cannot be derived for a union (which field is valid is not known)",
            ));
        }
    };
    let mut generics = input.generics.clone();
    for param in &mut generics.params {
        if let GenericParam::Type(t) = param {
            t.bounds.push(syn::parse_quote!(::cuda_std::DeviceCopy));
        }
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let ident = &input.ident;
    let checks = field_types.iter().map(|ty| {
        quote_spanned! {ty.span()=> __assert_device_copy::<#ty>(); }
    });
    Ok(quote! {
        // SAFETY: a `repr(C)`/`repr(transparent)` struct whose fields are all `DeviceCopy`
        // (checked below), or a fieldless enum with a primitive representation: a defined
        // layout without references or host pointers.
        unsafe impl #impl_generics ::cuda_std::DeviceCopy for #ident #ty_generics #where_clause {}

        const _: () = {
            #[allow(dead_code)]
            fn __check #impl_generics () #where_clause {
                fn __assert_device_copy<T: ::cuda_std::DeviceCopy>() {}
                #(#checks)*
            }
        };
    })
}
