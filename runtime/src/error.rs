//! Errors of the runtime.

use cudarc::driver::DriverError;
use cutec_manifest::{DType, ManifestError};

use crate::ArgError;

/// A failed CUDA driver call: which call, and the driver's error name (`CUDA_ERROR_ILLEGAL_ADDRESS`) and text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{call} failed with {name} ({description})")]
pub struct CudaError {
    /// The driver API call (and what it was asked to do, where that helps).
    pub call: &'static str,
    /// The `CUresult` name, e.g. `CUDA_ERROR_INVALID_PTX`.
    pub name: String,
    /// The driver's description of the error.
    pub description: String,
    /// The numeric `CUresult`.
    pub code: u32,
}

impl CudaError {
    pub fn new(call: &'static str, e: DriverError) -> CudaError {
        let code = e.0 as u32;
        let name = e.error_name().map_or_else(|_| format!("CUresult {code}"), |s| s.to_string_lossy().into_owned());
        let description =
            e.error_string().map_or_else(|_| "no description".into(), |s| s.to_string_lossy().into_owned());
        CudaError { call, name, description, code }
    }
}

/// Maps a driver error of `call` into a [`RuntimeError`].
pub(crate) fn cuda(call: &'static str) -> impl FnOnce(DriverError) -> RuntimeError {
    move |e| RuntimeError::Cuda(CudaError::new(call, e))
}

/// Every way the runtime can fail. Nothing in this crate panics or unwraps.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("the CUDA driver library (libcuda.so) could not be loaded: this machine has no NVIDIA driver")]
    DriverNotFound,
    #[error(transparent)]
    Cuda(#[from] CudaError),
    #[error("loading the module failed: {source}{}", if log.is_empty() { String::new() } else { format!("\n{log}") })]
    ModuleLoad { source: CudaError, log: String },
    #[error("the PTX text contains a NUL byte at offset {offset}")]
    PtxNul { offset: usize },
    #[error("the module image ({len} bytes) is neither a cubin (ELF) nor a fatbin")]
    NotABinary { len: usize },
    #[error(
        "the module was compiled for {target}, but device {ordinal} ({device}) has compute capability {major}.{minor}"
    )]
    TargetMismatch { target: String, ordinal: usize, device: String, major: i32, minor: i32 },
    #[error("kernel `{name}` is not in the manifest (it lists: {available})")]
    UnknownKernel { name: String, available: String },
    #[error("kernel `{name}` is in the manifest but not in the module: {source}")]
    KernelNotInModule { name: String, source: CudaError },
    #[error("kernel `{kernel}`: {source}")]
    Argument { kernel: String, source: Box<ArgError> },
    #[error("kernel `{kernel}`: cannot allow {bytes} bytes of dynamic shared memory: {source}")]
    SharedMemory { kernel: String, bytes: u32, source: CudaError },
    #[error("tensor {dtype}{shape:?}: {reason}")]
    Tensor { dtype: DType, shape: Vec<usize>, reason: String },
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error("not supported: {0}")]
    Unsupported(String),
}
