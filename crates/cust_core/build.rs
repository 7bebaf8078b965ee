//! Does nothing: it exists because `links = "ferrocuda_cust_core"` (Cargo.toml) needs a build
//! script. The `links` key makes cargo refuse a second copy of this crate in one dependency
//! graph, such as one from git and one from crates.io.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
}
