//! The cutec runtime: loads a module the compiler produced (PTX or cubin) with its [kernel
//! manifest](cutec_manifest), checks arguments against the manifest, and launches kernels.
//!
//! ```no_run
//! # fn main() -> Result<(), cutec_runtime::RuntimeError> {
//! use cutec_runtime::{Context, DeviceTensor, KernelArg, Module, time_launches, median};
//! use cutec_manifest::{DType, Manifest};
//!
//! let ctx = Context::new(0)?;
//! let manifest = Manifest::from_json(&std::fs::read_to_string("softmax.json").unwrap_or_default())?;
//! let module = Module::load_ptx(&ctx, &std::fs::read_to_string("softmax.ptx").unwrap_or_default(), manifest)?;
//! let kernel = module.kernel("softmax")?;
//! let x = DeviceTensor::from_bytes(&ctx, DType::F32, &[2, 4096], &vec![0u8; 2 * 4096 * 4])?;
//! let mut y = DeviceTensor::zeros(&ctx, DType::F32, &[2, 4096])?;
//! y.fill_bytes(0xff)?;
//! kernel.launch(&[KernelArg::Tensor(&x), KernelArg::Tensor(&y)])?;
//! let bytes = y.to_bytes()?; // synchronizes, reporting any fault of the kernel
//! let times = time_launches(&kernel, &[KernelArg::Tensor(&x), KernelArg::Tensor(&y)], 10, 100)?;
//! println!("median {:?} ms", median(&times));
//! # Ok(()) }
//! ```
//!
//! Design:
//! - **Checking is a pure function** ([`check_launch`]): manifest + [argument descriptions](ArgDesc) → a
//!   [`LaunchPlan`] (grid, block, cluster, dynamic shared memory and the PTX parameter values in ABI order) or an
//!   [`ArgError`] naming the parameter and the values. The GPU path only describes its arguments and issues the
//!   plan, so every rule is tested without a GPU.
//! - **No NVRTC, no link-time CUDA**: cudarc opens `libcuda` at run time (feature `dynamic-loading`); PTX is
//!   compiled by the driver's JIT (`cuModuleLoadDataEx`, whose error log is returned on failure). A program that
//!   never creates a [`Context`] runs on machines without a GPU, and [`Context::new`] there is
//!   [`RuntimeError::DriverNotFound`].
//! - All work goes to the context's default stream, in issue order. Launches are asynchronous; a fault inside a
//!   kernel surfaces at the next synchronizing call ([`Context::synchronize`], [`DeviceTensor::to_bytes`],
//!   [`time_launches`]) as a [`CudaError`] with the driver's name for it (`CUDA_ERROR_ILLEGAL_ADDRESS`).
//! - Dynamic shared memory above the default 48 KiB is allowed per function on first need
//!   (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`); clusters launch through `cuLaunchKernelEx`.
//! - Nothing here panics or unwraps; every failure is a [`RuntimeError`].

mod args;
mod device;
mod error;
pub mod fill;
pub mod floats;
mod module;
pub mod npy;
mod scalar;
pub mod strided;
pub mod tensor_map;

pub use args::{
    ArgDesc, ArgError, BoundDim, LaunchPlan, ParamValue, PlannedTensorMap, TensorDesc, TensorMapRefusal, check_launch,
    tensor_map_desc,
};
pub use device::{Context, DeviceTensor, TRANSFER_CHUNK, check_fits};
pub use error::{CudaError, RuntimeError, TensorBytes, format_bytes};
pub use module::{
    Kernel, KernelArg, KernelInfo, LaunchOverhead, Module, PreparedLaunch, measure_launch_overhead, median,
    target_runs_on, time_launches,
};
pub use scalar::{ParseScalarError, ScalarValue};
