//! `#[address_space(shared)]`: Rust-CUDA's shared-memory `static mut`, rewritten into a
//! binding to a `.shared` array (see [`crate::address_space`] for the user-facing rules), and
//! the helpers `#[kernel]` uses to make the binding behave like the static in more places.

use proc_macro2::{Delimiter, Group, Ident, Spacing, TokenStream as TokenStream2, TokenTree};
use quote::{quote, quote_spanned};
use syn::{ItemStatic, StaticMutability, Type, ext::IdentExt};

/// Expands `#[address_space(<attr>)]` on `item`.
pub(crate) fn expand(attr: TokenStream2, item: TokenStream2) -> syn::Result<TokenStream2> {
    let space = parse_space(attr)?;
    let item: ItemStatic = syn::parse2(item).map_err(|err| {
        syn::Error::new(
            err.span(),
            "#[address_space(shared)] applies to a `static mut NAME: [T; N] = ...;` declared \
             in a function body",
        )
    })?;
    if space != "shared" {
        let message = match space.to_string().as_str() {
            "global" => {
                "#[address_space(global)] is not supported: a plain `static` already lives in \
                 global memory"
            }
            "constant" => {
                "#[address_space(constant)] is not supported: put read-only data in a plain \
                 `static` (global memory), or pass it as a kernel parameter"
            }
            "local" => {
                "#[address_space(local)] is not supported: a local variable (`let`) already \
                 lives in registers or local memory"
            }
            _ => "unknown address space: the supported one is `shared`",
        };
        return Err(syn::Error::new(space.span(), message));
    }
    if !matches!(item.mutability, StaticMutability::Mut(_)) {
        return Err(syn::Error::new_spanned(
            item.static_token,
            "a shared-memory static must be `static mut`: the kernel writes it (shared memory \
             is uninitialised at block start)",
        ));
    }
    if !matches!(&*item.ty, Type::Array(_)) {
        return Err(syn::Error::new_spanned(
            &item.ty,
            "a shared-memory static must be an array `[T; N]` (for one value, use `[T; 1]`)",
        ));
    }
    let ItemStatic {
        attrs,
        ident,
        ty,
        expr,
        ..
    } = &item;
    // Attributes such as `#[allow(..)]` or `#[cfg(..)]` move to the binding; docs do not
    // apply to a `let`.
    let attrs = attrs.iter().filter(|a| !a.path().is_ident("doc"));
    let prefix = symbol_prefix(ident);
    let span = ident.span();
    let (view, elem, dims) = view_of(ty);
    // The initialiser is type-checked as a constant (as a static's would be) and otherwise
    // ignored: PTX `.shared` variables cannot be initialised (PTX ISA §5.4.4).
    Ok(quote_spanned! {span=>
        #(#attrs)*
        #[allow(non_snake_case)]
        let #ident: &mut #view = {
            const _: #ty = #expr;
            // SAFETY: the generic address of this declaration's `.shared` array of type
            // `#ty`, viewed as `#view` (its layout): non-null and aligned. Races and reads
            // before writes are the accessing code's `unsafe`, as for the `static mut` this
            // replaces.
            unsafe {
                ::cuda_std::shared::__array_mut::<#view, #ty>(
                    ::cuda_std::__shared_declare!(#prefix, #ty, 1; #elem, [#(#dims),*])
                )
            }
        };
    })
}

/// The view an array type `[T; N]` is indexed through: `SharedArray<T, N>` for an element
/// that is not an array, `SharedRows<view of [U; M], N>` for one that is (any depth); with
/// the innermost element type and the dimensions, outermost first (for the emulator's
/// reports: `[7][6]` of type `f32`).
fn view_of(ty: &Type) -> (TokenStream2, &Type, Vec<&syn::Expr>) {
    match ty {
        Type::Array(array) => {
            let len = &array.len;
            let elem = &*array.elem;
            if matches!(elem, Type::Array(_)) {
                let (inner, leaf, mut dims) = view_of(elem);
                dims.insert(0, len);
                (
                    quote!(::cuda_std::shared::SharedRows<#inner, { #len }>),
                    leaf,
                    dims,
                )
            } else {
                (
                    quote!(::cuda_std::shared::SharedArray<#elem, { #len }>),
                    elem,
                    vec![len],
                )
            }
        }
        Type::Paren(paren) => view_of(&paren.elem),
        Type::Group(group) => view_of(&group.elem),
        // `expand` accepts arrays only.
        other => (quote!(#other), other, Vec::new()),
    }
}

/// The address space named by the attribute's argument: one identifier.
fn parse_space(attr: TokenStream2) -> syn::Result<Ident> {
    let mut tokens = attr.clone().into_iter();
    match (tokens.next(), tokens.next()) {
        (Some(TokenTree::Ident(space)), None) => Ok(space),
        _ => Err(syn::Error::new_spanned(
            attr,
            "write #[address_space(shared)]",
        )),
    }
}

/// `"<NAME>_"` for the PTX symbol, so the declaration is readable in the PTX
/// (`__cuda_std_shared_TILE_A_<id>`); `""` for a name PTX cannot spell (non-ASCII).
fn symbol_prefix(ident: &Ident) -> String {
    let name = ident.unraw().to_string();
    if name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        format!("{name}_")
    } else {
        String::new()
    }
}

/// The names of the `#[address_space(...)] static` items anywhere in `tokens` (nested
/// blocks and closures included).
pub(crate) fn shared_names(tokens: &TokenStream2) -> Vec<Ident> {
    let mut names = Vec::new();
    collect_names(tokens.clone(), &mut names);
    names
}

fn collect_names(tokens: TokenStream2, names: &mut Vec<Ident>) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, token) in tokens.iter().enumerate() {
        match token {
            TokenTree::Group(g)
                if g.delimiter() == Delimiter::Bracket
                    && is_attr(&tokens, i)
                    && is_address_space_attr(g) =>
            {
                // `#[address_space(..)] [#[other]]* [pub] static [mut] NAME`
                let name = tokens[i + 1..]
                    .iter()
                    .skip_while(|t| !matches!(t, TokenTree::Ident(id) if id == "static"))
                    .skip(1)
                    .find_map(|t| match t {
                        TokenTree::Ident(id) if id != "mut" => Some(id.clone()),
                        _ => None,
                    });
                names.extend(name);
            }
            TokenTree::Group(g) => collect_names(g.stream(), names),
            _ => {}
        }
    }
}

/// Whether the bracket group at `i` is an attribute (preceded by `#`).
fn is_attr(tokens: &[TokenTree], i: usize) -> bool {
    i > 0 && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '#')
}

/// Whether an attribute's contents are `address_space(..)` or `path::address_space(..)`.
fn is_address_space_attr(group: &Group) -> bool {
    let tokens: Vec<TokenTree> = group.stream().into_iter().collect();
    tokens
        .iter()
        .position(|t| matches!(t, TokenTree::Group(_)))
        .and_then(|args| args.checked_sub(1))
        .is_some_and(|last| matches!(&tokens[last], TokenTree::Ident(id) if id == "address_space"))
}

/// Rewrites the places where a shared static's *own address* is taken, so that they give
/// the array's address, not the binding's: `addr_of!(NAME)` / `addr_of_mut!(NAME)` (any
/// path) become `addr_of!(*NAME)`, and `&NAME`, `&mut NAME`, `&raw const NAME`,
/// `&raw mut NAME` (not followed by `[` or `.`) get a `*` before `NAME`. Indexing and method
/// calls need nothing: they auto-dereference.
pub(crate) fn rewrite_address_of(tokens: TokenStream2, names: &[Ident]) -> TokenStream2 {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let is_name = |t: &TokenTree| matches!(t, TokenTree::Ident(id) if names.contains(id));
    let mut out = Vec::with_capacity(tokens.len());
    for (i, token) in tokens.iter().enumerate() {
        match token {
            TokenTree::Group(g) => {
                let is_addr_of_call = i >= 2
                    && matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '!')
                    && matches!(&tokens[i - 2], TokenTree::Ident(id)
                        if id == "addr_of" || id == "addr_of_mut");
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                let stream = if is_addr_of_call && inner.len() == 1 && is_name(&inner[0]) {
                    quote!(*#(#inner)*)
                } else {
                    rewrite_address_of(g.stream(), names)
                };
                let mut group = Group::new(g.delimiter(), stream);
                group.set_span(g.span());
                out.push(TokenTree::Group(group));
            }
            TokenTree::Ident(_) if is_name(token) && takes_address(&tokens, i) => {
                let followed_by_place = matches!(tokens.get(i + 1),
                    Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Bracket)
                    || matches!(tokens.get(i + 1),
                        Some(TokenTree::Punct(p)) if p.as_char() == '.');
                if !followed_by_place {
                    let mut star = proc_macro2::Punct::new('*', Spacing::Alone);
                    star.set_span(token.span());
                    out.push(TokenTree::Punct(star));
                }
                out.push(token.clone());
            }
            _ => out.push(token.clone()),
        }
    }
    out.into_iter().collect()
}

/// Whether the identifier at `i` directly follows `&`, `&mut`, `&raw const` or `&raw mut`
/// (a lone `&`: `a && NAME` is a logical and).
fn takes_address(tokens: &[TokenTree], i: usize) -> bool {
    let is_ident = |j: usize, word: &str| matches!(&tokens[j], TokenTree::Ident(id) if id == word);
    let is_amp = |j: usize| {
        matches!(&tokens[j], TokenTree::Punct(p) if p.as_char() == '&')
            && !(j > 0
                && matches!(&tokens[j - 1], TokenTree::Punct(p)
                if p.as_char() == '&' && p.spacing() == Spacing::Joint))
    };
    let before = |n: usize| i.checked_sub(n);
    match (before(1), before(2), before(3)) {
        (Some(a), Some(b), Some(c))
            if (is_ident(a, "const") || is_ident(a, "mut")) && is_ident(b, "raw") && is_amp(c) =>
        {
            true
        }
        (Some(a), Some(b), _) if is_ident(a, "mut") && is_amp(b) => true,
        (Some(a), _, _) => is_amp(a),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(src: &str) -> Vec<String> {
        let tokens: TokenStream2 = src.parse().expect("valid tokens");
        shared_names(&tokens)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn rewrite(src: &str, shared: &[&str]) -> String {
        let tokens: TokenStream2 = src.parse().expect("valid tokens");
        let shared: Vec<Ident> = shared
            .iter()
            .map(|n| Ident::new(n, proc_macro2::Span::call_site()))
            .collect();
        // Token spacing aside (`&*` is joint when parsed, alone when inserted).
        rewrite_address_of(tokens, &shared)
            .to_string()
            .replace(' ', "")
    }

    #[test]
    fn finds_shared_statics_in_nested_blocks_only() {
        let body = "{
            #[address_space(shared)] static mut A: [f32; 4] = [0.0; 4];
            for i in 0..2 { #[cuda_std::address_space(shared)] #[allow(unused)] static mut B: [u32; 2] = [0; 2]; }
            static mut C: [u32; 2] = [0; 2];
            #[allow(dead_code)] static D: u32 = 0;
        }";
        assert_eq!(names(body), ["A", "B"]);
    }

    #[test]
    fn rewrites_address_taking_of_shared_names_only() {
        let shared = ["T"];
        for (taken, deref) in [
            (
                "core::ptr::addr_of_mut!(T) as *mut f32",
                "core::ptr::addr_of_mut!(*T) as *mut f32",
            ),
            ("addr_of!(T)", "addr_of!(*T)"),
            ("&raw mut T", "&raw mut *T"),
            ("&raw const T", "&raw const *T"),
            ("f(&mut T, &T)", "f(&mut *T, &*T)"),
        ] {
            assert_eq!(rewrite(taken, &shared), rewrite(deref, &[]), "{taken}");
        }
        // Places through the binding already auto-dereference; other names are untouched.
        for unchanged in [
            "&mut T[0]",
            "&T.len()",
            "addr_of_mut!(T[1])",
            "&mut U",
            "addr_of!(U)",
            "a && T",
            "T[0] = 1",
        ] {
            assert_eq!(
                rewrite(unchanged, &shared),
                rewrite(unchanged, &[]),
                "{unchanged}"
            );
        }
    }

    #[test]
    fn symbol_prefix_is_the_name_when_ptx_can_spell_it() {
        let ident = |s: &str| syn::parse_str::<Ident>(s).expect("an identifier");
        assert_eq!(symbol_prefix(&ident("TILE_A")), "TILE_A_");
        assert_eq!(symbol_prefix(&ident("r#type")), "type_");
        assert_eq!(symbol_prefix(&ident("TUILE_Ä")), "");
    }
}
