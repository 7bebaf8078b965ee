//! Procedural macros for `cuda_std`.

use proc_macro::TokenStream;
use quote::quote;
use syn::{ItemFn, ReturnType, parse_macro_input, spanned::Spanned};

/// Marks a function as a CUDA kernel entry point.
///
/// On the GPU (`target_arch = "nvptx64"`) the function becomes a PTX `.entry` named exactly
/// like the Rust function (`#[unsafe(no_mangle)] extern "ptx-kernel"`), so the host loads it
/// by that name. On the host the function is compiled as an ordinary Rust function, so its
/// body is type-checked by host builds and IDEs (calling it there panics in the first
/// device-only call).
///
/// The function must take no receiver, have no generics, return nothing (`()`), and not be
/// `async` or `const`. Violations are reported as compile errors at the offending token.
///
/// The crate that uses `#[kernel]` must enable `#![cfg_attr(target_arch = "nvptx64",
/// feature(abi_ptx))]` at its root.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    if !attr.is_empty() {
        let attr = proc_macro2::TokenStream::from(attr);
        return syn::Error::new(attr.span(), "#[kernel] takes no arguments")
            .to_compile_error()
            .into();
    }
    let func = parse_macro_input!(item as ItemFn);
    match expand(func) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}

fn expand(func: ItemFn) -> syn::Result<proc_macro2::TokenStream> {
    check_signature(&func)?;
    let ItemFn {
        attrs,
        vis,
        sig,
        block,
    } = func;
    let unsafety = &sig.unsafety;
    let ident = &sig.ident;
    let inputs = &sig.inputs;
    Ok(quote! {
        #[cfg(target_arch = "nvptx64")]
        #(#attrs)*
        #[unsafe(no_mangle)]
        // Slices cross as (ptr, len) aggregates, matched by the host launch code.
        #[allow(improper_ctypes_definitions)]
        #vis #unsafety extern "ptx-kernel" fn #ident(#inputs) #block

        #[cfg(not(target_arch = "nvptx64"))]
        #(#attrs)*
        #[allow(dead_code, clippy::missing_safety_doc)]
        #vis #unsafety fn #ident(#inputs) #block
    })
}

fn check_signature(func: &ItemFn) -> syn::Result<()> {
    let sig = &func.sig;
    if let Some(receiver) = sig.receiver() {
        return Err(syn::Error::new(
            receiver.span(),
            "a #[kernel] cannot take `self`: kernels are free functions",
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return Err(syn::Error::new(
            sig.generics.span(),
            "a #[kernel] cannot be generic: each PTX entry needs one concrete signature; \
             write one kernel per type that calls a generic function",
        ));
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        return Err(syn::Error::new(
            ty.span(),
            "a #[kernel] cannot return a value: write results through an output parameter",
        ));
    }
    if let Some(token) = &sig.asyncness {
        return Err(syn::Error::new(token.span, "a #[kernel] cannot be `async`"));
    }
    if let Some(token) = &sig.constness {
        return Err(syn::Error::new(token.span, "a #[kernel] cannot be `const`"));
    }
    if let Some(abi) = &sig.abi {
        return Err(syn::Error::new(
            abi.span(),
            "a #[kernel] must not declare an ABI: #[kernel] adds `extern \"ptx-kernel\"` itself",
        ));
    }
    if let Some(variadic) = &sig.variadic {
        return Err(syn::Error::new(
            variadic.span(),
            "a #[kernel] cannot be variadic",
        ));
    }
    Ok(())
}
