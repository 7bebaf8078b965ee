//! Snapshot tests (trybuild) of typed launches that must not compile: a wrong argument type
//! or count, an input buffer where an output is needed, a safe launch of an `unsafe fn`
//! kernel, an unchecked launch outside `unsafe`. Regenerate after an intended change with
//! `TRYBUILD=overwrite cargo test -p ferrocuda-cust --test ui`.

#[test]
fn typed_launch_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
