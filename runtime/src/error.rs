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
    #[error(
        "the tensors need {} of device memory, but device {ordinal} ({device}) has {} free of {}: {}",
        format_bytes(*needed), format_bytes(*free), format_bytes(*total), list_tensors(tensors)
    )]
    OutOfDeviceMemory { ordinal: usize, device: String, needed: u64, free: u64, total: u64, tensors: Vec<TensorBytes> },
}

/// A tensor's name, type, shape and size in bytes, for messages about memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorBytes {
    pub name: String,
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub bytes: u64,
}

fn list_tensors(tensors: &[TensorBytes]) -> String {
    let items: Vec<String> =
        tensors.iter().map(|t| format!("`{}` {}{:?} {}", t.name, t.dtype, t.shape, format_bytes(t.bytes))).collect();
    items.join(", ")
}

/// A byte count for people: `512 B`, `1.5 KiB`, `45.8 GiB` (binary units, one decimal).
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{bytes} B") } else { format!("{value:.1} {}", UNITS[unit]) }
}
