//! `cutec._cutec.NativeKernel`: one kernel of a compiled module: its manifest entry, the checks of a call's
//! arguments (without a GPU: [`NativeKernel::plan`]) and the launch on torch's current stream.

use std::sync::{Arc, Mutex};

use cutec_manifest::{Manifest, Param};
use cutec_runtime::{ArgDesc, ArgError, Context, Kernel, LaunchPlan, Module, RuntimeError, check_launch};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple};

use crate::describe::{Context as Cx, Memory, Refusal, Torch, describe_all};

/// The module loaded on one device and the kernel's function in it.
struct Loaded {
    kernel: Kernel,
    _module: Module,
}

#[pyclass(frozen, module = "cutec._cutec")]
pub struct NativeKernel {
    ptx: String,
    manifest: Manifest,
    pub(crate) kernel: cutec_manifest::Kernel,
    /// By device ordinal, loaded on the first launch there.
    loaded: Mutex<Vec<Option<Arc<Loaded>>>>,
}

static LAUNCH_ERROR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// `cutec.LaunchError(message, kernel=..., param=...)`.
pub(crate) fn launch_error(py: Python<'_>, kernel: &str, param: Option<&str>, message: String) -> PyErr {
    let class = LAUNCH_ERROR.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py.import("cutec._errors")?.getattr("LaunchError")?.unbind())
    });
    match class.and_then(|c| c.call1(py, (message.clone(), kernel, param))) {
        Ok(e) => PyErr::from_value(e.into_bound(py)),
        Err(_) => PyRuntimeError::new_err(message),
    }
}

/// The parameter an [`ArgError`] is about, when it is about one.
fn blamed(e: &ArgError) -> Option<String> {
    use ArgError::*;
    let param_of = |origin: &str| origin.split('.').next().map(str::to_owned);
    match e {
        Kind { param, .. }
        | DType { param, .. }
        | Device { param, .. }
        | Rank { param, .. }
        | Descriptor { param, .. }
        | Misaligned { param, .. }
        | StaticMismatch { param, .. }
        | DimMismatch { param, .. }
        | NestedMode { param, .. }
        | BufferTooSmall { param, .. }
        | IndexRange { param, .. }
        | NegativeOffset { param, .. }
        | LayoutOverflow { param, .. } => Some(param.clone()),
        DimRange { origin, .. } | NotMultiple { origin, .. } => param_of(origin),
        TensorMap { tensor, .. } => Some(tensor.clone()),
        _ => None,
    }
}

impl NativeKernel {
    pub(crate) fn refused(&self, py: Python<'_>, r: Refusal) -> PyErr {
        launch_error(py, &self.kernel.name, Some(&r.param), format!("kernel `{}`: {}", self.kernel.name, r.message))
    }

    pub(crate) fn arg_error(&self, py: Python<'_>, e: ArgError) -> PyErr {
        launch_error(py, &self.kernel.name, blamed(&e).as_deref(), format!("kernel `{}`: {e}", self.kernel.name))
    }

    fn runtime_error(&self, py: Python<'_>, e: RuntimeError) -> PyErr {
        match e {
            RuntimeError::Argument { source, .. } => self.arg_error(py, *source),
            other => launch_error(py, &self.kernel.name, None, format!("kernel `{}`: {other}", self.kernel.name)),
        }
    }

    pub(crate) fn arity(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<()> {
        if args.len() == self.kernel.params.len() {
            return Ok(());
        }
        let e = ArgError::Arity {
            kernel: self.kernel.name.clone(),
            expected: self.kernel.params.len(),
            got: args.len(),
            signature: self
                .kernel
                .params
                .iter()
                .map(|p| format!("{}: {} {}", p.name(), p.kind(), p.dtype()))
                .collect::<Vec<_>>()
                .join(", "),
        };
        Err(launch_error(py, &self.kernel.name, None, e.to_string()))
    }

    fn describe(&self, py: Python<'_>, args: &Bound<'_, PyTuple>, memory: Memory) -> PyResult<Vec<ArgDesc>> {
        self.arity(py, args)?;
        describe_all(py, &self.kernel.params, args, Torch::get(py), memory).map_err(|r| self.refused(py, r))
    }

    /// The kernel loaded on `device`, loading the module there on first use.
    fn loaded(&self, py: Python<'_>, device: usize) -> PyResult<Arc<Loaded>> {
        if let Ok(slots) = self.loaded.lock()
            && let Some(Some(l)) = slots.get(device)
        {
            return Ok(l.clone());
        }
        let load = || -> Result<Loaded, RuntimeError> {
            let ctx = Context::new(device)?;
            let module = Module::load_ptx(&ctx, &self.ptx, self.manifest.clone())?;
            Ok(Loaded { kernel: module.kernel(&self.kernel.name)?, _module: module })
        };
        let loaded = Arc::new(py.detach(load).map_err(|e| self.runtime_error(py, e))?);
        if let Ok(mut slots) = self.loaded.lock() {
            if slots.len() <= device {
                slots.resize_with(device + 1, || None);
            }
            slots[device] = Some(loaded.clone());
        }
        Ok(loaded)
    }
}

/// The device of a call: that of its first tensor argument, else torch's current device (0 without torch).
fn call_device(py: Python<'_>, descs: &[ArgDesc]) -> usize {
    descs
        .iter()
        .find_map(|d| match d {
            ArgDesc::Tensor(t) => Some(t.device),
            ArgDesc::Scalar(_) => None,
        })
        .unwrap_or_else(|| Cx::current(py, Torch::get(py)).device)
}

fn plan_dict<'py>(py: Python<'py>, plan: &LaunchPlan, persistent: bool) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("grid", plan.grid.to_vec())?;
    // A persistent kernel's grid counts tiles; the runtime launches one CTA per SM at most over them.
    d.set_item("persistent", persistent)?;
    d.set_item("block", plan.block.to_vec())?;
    d.set_item("cluster", plan.cluster.map(|c| c.to_vec()))?;
    d.set_item("smem_bytes", plan.smem_bytes)?;
    let dims = PyDict::new(py);
    for b in &plan.dims {
        dims.set_item(&b.name, b.value)?;
    }
    d.set_item("dims", dims)?;
    let maps: Vec<&str> = plan.tensor_maps.iter().map(|m| m.name.as_str()).collect();
    d.set_item("tensor_maps", maps)?;
    Ok(d)
}

#[pymethods]
impl NativeKernel {
    /// Runs the kernel on the CPU (see `cpu.rs`): `ir` is the scheduled IR's text, `args` the tensors packed as
    /// `(dtype, bytes, shape, strides)` and the scalars; returns each parameter's bytes after the run.
    #[pyo3(signature = (ir, args, schedule=None))]
    fn run_cpu<'py>(
        &self,
        py: Python<'py>,
        ir: &str,
        args: &Bound<'py, PyTuple>,
        schedule: Option<&str>,
    ) -> PyResult<Vec<Option<Bound<'py, pyo3::types::PyBytes>>>> {
        crate::cpu::run_cpu(self, py, ir, args, schedule)
    }

    /// The kernel `name` of a module: its PTX and its manifest (JSON text, validated here).
    #[new]
    fn new(ptx: String, manifest: &str, name: &str) -> PyResult<NativeKernel> {
        let manifest =
            Manifest::from_json(manifest).map_err(|e| PyValueError::new_err(format!("invalid manifest: {e}")))?;
        let kernel = manifest.kernel(name).cloned().ok_or_else(|| {
            let names: Vec<&str> = manifest.kernels.iter().map(|k| k.name.as_str()).collect();
            PyValueError::new_err(format!("no kernel `{name}` in the manifest (it has: {})", names.join(", ")))
        })?;
        Ok(NativeKernel { ptx, manifest, kernel, loaded: Mutex::new(Vec::new()) })
    }

    /// The parameters' names, in order.
    #[getter]
    fn param_names(&self) -> Vec<String> {
        self.kernel.params.iter().map(|p| p.name().to_owned()).collect()
    }

    /// The names of the scalar parameters, in order.
    #[getter]
    fn scalar_names(&self) -> Vec<String> {
        self.kernel.params.iter().filter(|p| matches!(p, Param::Scalar(_))).map(|p| p.name().to_owned()).collect()
    }

    /// Checks `args` (in parameter order) against the manifest without a GPU, as a launch would, for a launch on
    /// `device` (default: the first tensor's). Returns the launch: grid, block, cluster, dynamic shared memory,
    /// the bound dimensions and the tensor maps; raises `LaunchError` naming the parameter.
    #[pyo3(signature = (args, device=None))]
    fn plan<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        device: Option<usize>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let descs = self.describe(py, args, Memory::Notional)?;
        let device = device.unwrap_or_else(|| call_device(py, &descs));
        let plan = check_launch(&self.kernel, device, &descs).map_err(|e| self.arg_error(py, e))?;
        plan_dict(py, &plan, self.kernel.launch.persistent)
    }

    /// Describes, checks and launches on torch's current stream of the first tensor's device (the legacy
    /// default stream without torch). Asynchronous, like any CUDA launch.
    fn launch(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<()> {
        let descs = self.describe(py, args, Memory::Required)?;
        let device = call_device(py, &descs);
        let loaded = self.loaded(py, device)?;
        let stream = match Torch::get(py) {
            Some(t) => t.current_stream(py, device)?,
            None => 0,
        };
        // SAFETY: every description was read from a live Python object the caller holds during this call (torch
        // tensors, CUDA array interfaces, DLPack capsules of device memory), on `device`, whose shape and strides
        // give the memory it spans; `stream` is torch's current stream of that device (or the legacy default
        // stream), of the primary context the runtime's context retains. As with any asynchronous launch, the
        // caller keeps the memory alive until the work is done (torch's caching allocator orders frees on the
        // stream).
        unsafe { loaded.kernel.launch_described(&descs, stream) }.map_err(|e| self.runtime_error(py, e))
    }

    /// Loads the module on `device` now (otherwise the first launch there does).
    fn load(&self, py: Python<'_>, device: usize) -> PyResult<()> {
        self.loaded(py, device).map(|_| ())
    }
}
