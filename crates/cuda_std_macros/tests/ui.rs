//! Snapshot tests of `#[kernel]`, `#[derive(DeviceCopy)]`, `#[address_space]` and
//! `shared_array!` diagnostics (trybuild): each file in `ui/` must fail to compile with
//! exactly the error in its `.stderr` file. Regenerate after an intended change with
//! `TRYBUILD=overwrite cargo test -p ferrocuda-cuda-std-macros --test ui`.

#[test]
fn kernel_and_derive_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    // A valid kernel's host-side handle has the documented type and name.
    t.pass("tests/ui-pass/*.rs");
}
