//! `cutec._cutec`: the native module of the `cutec` Python package. It links the compiler (the driver's
//! `build_source`) and the runtime: compiling happens in-process, and launches take their arguments straight
//! from torch tensors (or any object with `__cuda_array_interface__` or DLPack), without copies.
//!
//! The Python package (`python/cutec`) holds the API users see: `cutec.compile`, the kernel object, the cache
//! on disk, the errors. This module stays small and GPU-free until a launch: nothing here opens the CUDA driver
//! before `NativeKernel.launch` or `NativeKernel.load`.

mod compile;
mod cpu;
mod describe;
mod kernel;

use pyo3::prelude::*;

#[pymodule]
fn _cutec(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The architecture the compiler generates code for: part of the cache's key.
    m.add("TARGET", cutec_codegen::Options::default().cpu)?;
    m.add_function(wrap_pyfunction!(compile::compile_source, m)?)?;
    m.add_function(wrap_pyfunction!(compile::explain, m)?)?;
    m.add_function(wrap_pyfunction!(compile::read_source, m)?)?;
    m.add_class::<kernel::NativeKernel>()?;
    Ok(())
}
