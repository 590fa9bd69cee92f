//! Links the `cutec` binary as a position-dependent executable: the statically linked LLVM makes a 50 MB binary
//! whose position-independent form the dynamic loader relocates at every start (tens of thousands of relative
//! relocations), 2.3 ms of the 8.9 ms `cutec --version` took (`perf stat -r 20`, this 2-core machine); every
//! build pays it. The objects stay position-independent, so the library targets (the Python module) are not
//! affected: the argument goes to binaries only.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
