//! Python arguments as the runtime's [`ArgDesc`]s: torch tensors (read through their attributes), objects with
//! `__cuda_array_interface__` (version 2 and 3) or DLPack (`__dlpack__`), and Python numbers for scalars.
//!
//! Nothing is copied: a tensor is described by its device address, shape and strides, and the kernel reads and
//! writes the caller's memory. An argument that cannot be described (host memory, an unknown element type, a
//! masked array) is a [`Refusal`] naming the parameter.

use cutec_manifest::{Access, DType, Entry, Param, ScalarParam, TensorParam};
use cutec_runtime::floats::{f32_to_bf16, f32_to_e4m3, f32_to_e5m2, f32_to_f16};
use cutec_runtime::{ArgDesc, ScalarValue, TensorDesc};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyCapsule, PyDict, PyFloat, PyInt, PyTuple, PyType};

/// Why an argument was refused before the manifest's checks: the parameter and what is wrong.
#[derive(Debug)]
pub struct Refusal {
    pub param: String,
    pub message: String,
}

impl Refusal {
    fn new(param: &str, message: impl Into<String>) -> Refusal {
        Refusal { param: param.to_owned(), message: format!("argument `{param}`: {}", message.into()) }
    }
}

/// Whether the tensors of a call must have memory: a launch's must; a plan's may be meta tensors or the fake tensors
/// of tracing (`torch.compile`, `torch.export`), whose addresses are notional.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Memory {
    Required,
    Notional,
}

/// The address a tensor without memory is planned at: aligned for any rule of the manifest or the driver.
const NOTIONAL_BASE: u64 = 1 << 40;

/// What the description of a call needs besides the arguments: the device a CUDA array interface refers to (it
/// names none: the current device) and the stream DLPack producers are asked to order their work before.
#[derive(Clone, Copy, Debug)]
pub struct Context {
    pub device: usize,
    pub stream: usize,
}

impl Context {
    /// torch's current device and its current stream, or device 0 and the legacy default stream without torch.
    pub fn current(py: Python<'_>, torch: Option<&Torch>) -> Context {
        let device = torch.and_then(|t| t.current_device(py)).unwrap_or(0);
        let stream = torch.and_then(|t| t.current_stream(py, device).ok()).unwrap_or(0);
        Context { device, stream }
    }
}

/// torch's objects, looked up once torch is imported: the tensor type, its dtypes, and the functions that give the
/// current device and stream without creating Python objects (`torch._C._cuda_getCurrentRawStream`, which
/// Triton's launcher also uses).
pub struct Torch {
    tensor: Py<PyType>,
    dtypes: Vec<(Py<PyAny>, DType)>,
    raw_stream: Option<Py<PyAny>>,
    current_device: Option<Py<PyAny>>,
}

static TORCH: PyOnceLock<Torch> = PyOnceLock::new();

impl Torch {
    /// torch's objects if torch has been imported by the program (this module never imports it).
    pub fn get(py: Python<'_>) -> Option<&'static Torch> {
        if let Some(t) = TORCH.get(py) {
            return Some(t);
        }
        let modules = py.import(intern!(py, "sys")).ok()?.getattr(intern!(py, "modules")).ok()?;
        let torch = modules.cast::<PyDict>().ok()?.get_item("torch").ok()??;
        let found = Torch::load(&torch).ok()?;
        Some(TORCH.get_or_init(py, || found))
    }

    fn load(torch: &Bound<'_, PyAny>) -> PyResult<Torch> {
        let tensor = torch.getattr("Tensor")?.cast_into::<PyType>()?.unbind();
        let names = [
            ("float32", DType::F32),
            ("float16", DType::F16),
            ("bfloat16", DType::Bf16),
            ("float8_e4m3fn", DType::E4m3),
            ("float8_e5m2", DType::E5m2),
            ("float64", DType::F64),
            ("int8", DType::I8),
            ("uint8", DType::U8),
            ("int32", DType::I32),
            ("int64", DType::I64),
            ("uint32", DType::U32),
            ("bool", DType::Bool),
        ];
        let dtypes = names.iter().filter_map(|(n, d)| torch.getattr(*n).ok().map(|o| (o.unbind(), *d))).collect();
        let c = torch.getattr("_C")?;
        let raw_stream = c.getattr("_cuda_getCurrentRawStream").ok().map(Bound::unbind);
        let current_device = c.getattr("_cuda_getDevice").ok().map(Bound::unbind);
        Ok(Torch { tensor, dtypes, raw_stream, current_device })
    }

    /// torch's current device (as `torch.cuda.current_device()`), or None if torch has no CUDA.
    pub fn current_device(&self, py: Python<'_>) -> Option<usize> {
        self.current_device.as_ref()?.call0(py).ok()?.extract(py).ok()
    }

    /// torch's current stream on `device`, as a raw `CUstream` handle.
    pub fn current_stream(&self, py: Python<'_>, device: usize) -> PyResult<usize> {
        match &self.raw_stream {
            Some(f) => f.call1(py, (device,))?.extract(py),
            None => Ok(0),
        }
    }

    pub fn is_tensor(&self, obj: &Bound<'_, PyAny>) -> bool {
        obj.is_instance(self.tensor.bind(obj.py())).unwrap_or(false)
    }

    fn dtype(&self, dtype: &Bound<'_, PyAny>) -> Option<DType> {
        self.dtypes.iter().find(|(o, _)| o.as_ptr() == dtype.as_ptr()).map(|(_, d)| *d)
    }
}

/// The elements from element 0 that a view of `shape` and `strides` spans (0 if empty), or None if a stride is
/// negative or the count overflows.
fn span(shape: &[i64], strides: &[i64]) -> Option<u64> {
    let mut last: i64 = 0;
    for (&e, &s) in shape.iter().zip(strides) {
        if e == 0 {
            return Some(0);
        }
        if s < 0 {
            return None;
        }
        last = last.checked_add((e - 1).checked_mul(s)?)?;
    }
    u64::try_from(last).ok()?.checked_add(1)
}

fn row_major(param: &str, shape: &[i64]) -> Result<Vec<i64>, Refusal> {
    TensorDesc::row_major_strides(shape).ok_or_else(|| Refusal::new(param, "its size overflows"))
}

fn desc(
    p: &TensorParam,
    dtype: DType,
    shape: Vec<i64>,
    strides: Vec<i64>,
    ptr: u64,
    device: usize,
) -> Result<ArgDesc, Refusal> {
    if let Some(e) = shape.iter().find(|&&e| e < 0) {
        return Err(Refusal::new(&p.name, format!("negative extent {e}")));
    }
    let len = span(&shape, &strides).ok_or_else(|| {
        Refusal::new(
            &p.name,
            format!("strides {strides:?} are negative or overflow; the kernel takes non-negative strides"),
        )
    })?;
    if len > 0 && ptr == 0 {
        return Err(Refusal::new(&p.name, "its data pointer is null; the kernel takes memory it can address"));
    }
    if p.access != Access::Read
        && let Some(i) = broadcast_mode(p, &shape, &strides)
    {
        return Err(Refusal::new(
            &p.name,
            format!(
                "the kernel writes it, but its mode {i} has stride 0 over {} elements (a broadcast view, such as \
                 `expand`'s, where every index of the mode is the same memory): pass a tensor with memory of its \
                 own (`.contiguous()`)",
                shape[i]
            ),
        ));
    }
    Ok(ArgDesc::Tensor(TensorDesc { dtype, shape, strides, ptr, len, device }))
}

/// The first mode of more than one element with stride 0 whose stride the manifest does not fix to 0: written
/// through, every index of it would write the same memory.
fn broadcast_mode(p: &TensorParam, shape: &[i64], strides: &[i64]) -> Option<usize> {
    let fixed_zero =
        |i: usize| p.layout.stride.mode(i).is_some_and(|m| m.leaves().iter().all(|l| matches!(l, Entry::Int(0))));
    if shape.len() != p.layout.rank() {
        return None; // the runtime's rank check says what is wrong
    }
    shape.iter().zip(strides).enumerate().find(|&(i, (&e, &s))| e > 1 && s == 0 && !fixed_zero(i)).map(|(i, _)| i)
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

/// Describes the argument `obj` of parameter `param`.
pub fn describe(
    py: Python<'_>,
    param: &Param,
    obj: &Bound<'_, PyAny>,
    torch: Option<&Torch>,
    cx: &dyn Fn() -> Context,
    memory: Memory,
) -> Result<ArgDesc, Refusal> {
    match param {
        Param::Tensor(p) => describe_tensor(py, p, obj, torch, cx, memory),
        Param::Scalar(p) => describe_scalar(p, obj).map(ArgDesc::Scalar),
    }
}

fn describe_tensor(
    py: Python<'_>,
    p: &TensorParam,
    obj: &Bound<'_, PyAny>,
    torch: Option<&Torch>,
    cx: &dyn Fn() -> Context,
    memory: Memory,
) -> Result<ArgDesc, Refusal> {
    let name = &p.name;
    let err = |m: String| Refusal::new(name, m);
    let py_err = |what: &str, e: PyErr| Refusal::new(name, format!("reading its {what} failed: {e}"));
    if let Some(torch) = torch.filter(|t| t.is_tensor(obj)) {
        let dtype_obj = obj.getattr(intern!(py, "dtype")).map_err(|e| py_err("dtype", e))?;
        let dtype = torch.dtype(&dtype_obj).ok_or_else(|| {
            err(format!("torch dtype {dtype_obj} has no cutec element type; the kernel takes {}", p.dtype))
        })?;
        let is_meta = obj.getattr(intern!(py, "is_meta")).and_then(|m| m.extract::<bool>()).unwrap_or(false);
        if is_meta && memory == Memory::Required {
            return Err(err(
                "is a meta tensor, which has no memory: `plan` checks it, a launch needs a CUDA tensor".into()
            ));
        }
        let device: i64 =
            obj.call_method0(intern!(py, "get_device")).and_then(|d| d.extract()).map_err(|e| py_err("device", e))?;
        let device = match usize::try_from(device) {
            Ok(d) => d,
            // A meta tensor is on no device: the plan is for the current one.
            Err(_) if is_meta => cx().device,
            Err(_) => {
                let on = obj.getattr(intern!(py, "device")).map(|d| d.to_string()).unwrap_or_else(|_| "cpu".into());
                return Err(err(format!(
                    "is a tensor on `{on}`; the kernel takes CUDA tensors (move it with .cuda())"
                )));
            }
        };
        let shape: Vec<i64> =
            obj.getattr(intern!(py, "shape")).and_then(|s| s.extract()).map_err(|e| py_err("shape", e))?;
        let strides: Vec<i64> =
            obj.call_method0(intern!(py, "stride")).and_then(|s| s.extract()).map_err(|e| py_err("strides", e))?;
        let ptr = obj.call_method0(intern!(py, "data_ptr")).and_then(|s| s.extract::<u64>());
        // A subclass of torch's tensor without an address (tracing's fake tensors: their data_ptr is 0 or fails).
        let fake = matches!(ptr, Ok(0) | Err(_)) && !obj.get_type().is(torch.tensor.bind(py));
        let notional = memory == Memory::Notional && (is_meta || fake);
        let ptr = if notional {
            // A meta tensor's or a fake tensor's memory is notional: its address is that of an aligned allocation
            // plus its storage offset, which the alignment checks see.
            let offset: u64 = obj
                .call_method0(intern!(py, "storage_offset"))
                .and_then(|o| o.extract())
                .map_err(|e| py_err("storage_offset", e))?;
            let size = u64::from(dtype.size_bytes());
            offset
                .checked_mul(size)
                .and_then(|o| o.checked_add(NOTIONAL_BASE))
                .ok_or_else(|| err(format!("its storage offset {offset} overflows")))?
        } else {
            ptr.map_err(|e| py_err("data_ptr", e))?
        };
        return desc(p, dtype, shape, strides, ptr, device);
    }
    if let Ok(cai) = obj.getattr(intern!(py, "__cuda_array_interface__")) {
        return describe_cai(p, &cai, cx().device);
    }
    if obj.hasattr(intern!(py, "__dlpack__")).unwrap_or(false) {
        return describe_dlpack(py, p, obj, cx);
    }
    if obj.hasattr(intern!(py, "__array_interface__")).unwrap_or(false) {
        return Err(err(format!(
            "is a host array ({}); the kernel takes CUDA memory: a torch tensor on a CUDA device, or an object with __cuda_array_interface__ or __dlpack__",
            type_name(obj)
        )));
    }
    Err(err(format!(
        "expected a tensor (a torch tensor, or an object with __cuda_array_interface__ or __dlpack__), got {}",
        type_name(obj)
    )))
}

/// The element type of a `__cuda_array_interface__` typestr (`<f4`); bf16 and FP8 have none.
fn typestr_dtype(s: &str) -> Option<DType> {
    let (order, kind) = (s.chars().next()?, s.get(1..)?);
    if order == '>' {
        return None;
    }
    Some(match kind {
        "f4" => DType::F32,
        "f2" => DType::F16,
        "f8" => DType::F64,
        "i1" => DType::I8,
        "u1" => DType::U8,
        "i4" => DType::I32,
        "i8" => DType::I64,
        "u4" => DType::U32,
        "b1" => DType::Bool,
        _ => return None,
    })
}

fn describe_cai(p: &TensorParam, cai: &Bound<'_, PyAny>, device: usize) -> Result<ArgDesc, Refusal> {
    let name = &p.name;
    let err = |m: String| Refusal::new(name, m);
    let bad = |what: &str| err(format!("its __cuda_array_interface__ has no valid `{what}`"));
    let get = |key: &str| cai.get_item(key).ok().filter(|v| !v.is_none());
    let typestr: String = get("typestr").and_then(|t| t.extract().ok()).ok_or_else(|| bad("typestr"))?;
    let dtype = typestr_dtype(&typestr).ok_or_else(|| {
        err(format!(
            "__cuda_array_interface__ typestr `{typestr}` is no element type of cutec; the kernel takes {}",
            p.dtype
        ))
    })?;
    let shape: Vec<i64> = get("shape").and_then(|s| s.extract().ok()).ok_or_else(|| bad("shape"))?;
    let (ptr, readonly): (u64, bool) = get("data").and_then(|d| d.extract().ok()).ok_or_else(|| bad("data"))?;
    if get("mask").is_some() {
        return Err(err(
            "is a masked array (__cuda_array_interface__ has a `mask`); the kernel takes plain arrays".into()
        ));
    }
    if readonly && p.access != Access::Read {
        return Err(err("is read-only (its __cuda_array_interface__ says so), but the kernel writes it".into()));
    }
    let strides = match get("strides") {
        None => row_major(name, &shape)?,
        Some(s) => {
            let bytes: Vec<i64> = s.extract().map_err(|_| bad("strides"))?;
            let size = i64::from(dtype.size_bytes());
            if let Some(b) = bytes.iter().find(|&&b| b % size != 0) {
                return Err(err(format!(
                    "a stride of {b} bytes is not a whole number of {dtype} elements ({size} bytes)"
                )));
            }
            bytes.iter().map(|b| b / size).collect()
        }
    };
    if strides.len() != shape.len() {
        return Err(bad("strides"));
    }
    desc(p, dtype, shape, strides, ptr, device)
}

/// DLPack's `DLTensor` (dlpack.h, version 0.8 and later, as `__dlpack__()` without `max_version` returns it).
#[repr(C)]
struct DlTensor {
    data: *mut std::ffi::c_void,
    device_type: i32,
    device_id: i32,
    ndim: i32,
    code: u8,
    bits: u8,
    lanes: u16,
    shape: *const i64,
    strides: *const i64,
    byte_offset: u64,
}

const DL_CPU: i64 = 1;
const DL_CUDA: i64 = 2;
const DL_CUDA_MANAGED: i64 = 13;

fn dlpack_dtype(code: u8, bits: u8, lanes: u16) -> Option<DType> {
    if lanes != 1 {
        return None;
    }
    Some(match (code, bits) {
        (0, 8) => DType::I8,
        (0, 32) => DType::I32,
        (0, 64) => DType::I64,
        (1, 8) => DType::U8,
        (1, 32) => DType::U32,
        (2, 16) => DType::F16,
        (2, 32) => DType::F32,
        (2, 64) => DType::F64,
        (4, 16) => DType::Bf16,
        (6, 8) => DType::Bool,
        (10, 8) => DType::E4m3,
        (12, 8) => DType::E5m2,
        _ => return None,
    })
}

fn describe_dlpack(
    py: Python<'_>,
    p: &TensorParam,
    obj: &Bound<'_, PyAny>,
    cx: &dyn Fn() -> Context,
) -> Result<ArgDesc, Refusal> {
    let name = &p.name;
    let err = |m: String| Refusal::new(name, m);
    let (device_type, device_id): (i64, i64) = obj
        .call_method0(intern!(py, "__dlpack_device__"))
        .and_then(|d| d.extract())
        .map_err(|e| err(format!("__dlpack_device__() failed: {e}")))?;
    if device_type != DL_CUDA && device_type != DL_CUDA_MANAGED {
        let on = if device_type == DL_CPU { "the CPU".to_owned() } else { format!("DLPack device type {device_type}") };
        return Err(err(format!("is on {on} ({}); the kernel takes CUDA memory", type_name(obj))));
    }
    // The stream the kernel runs on, in DLPack's words: 1 is the legacy default stream.
    let cx = cx();
    let stream = if cx.stream == 0 { 1 } else { cx.stream };
    let kwargs = PyDict::new(py);
    kwargs.set_item("stream", stream).map_err(|e| err(e.to_string()))?;
    let capsule = obj
        .call_method(intern!(py, "__dlpack__"), (), Some(&kwargs))
        .map_err(|e| err(format!("__dlpack__() failed: {e}")))?;
    let capsule = capsule.cast::<PyCapsule>().map_err(|_| err("__dlpack__() did not return a capsule".into()))?;
    let ptr = capsule
        .pointer_checked(Some(c"dltensor"))
        .map_err(|e| err(format!("__dlpack__() returned no `dltensor` capsule: {e}")))?;
    // SAFETY: a `dltensor` capsule points at a DLManagedTensor, whose first member is the DLTensor; the capsule is
    // not consumed here, so it stays valid (with its shape and strides arrays) while `capsule` lives, and its
    // destructor releases it.
    let t = unsafe { &*ptr.as_ptr().cast::<DlTensor>() };
    let dtype = dlpack_dtype(t.code, t.bits, t.lanes).ok_or_else(|| {
        err(format!(
            "DLPack type (code {}, {} bits, {} lanes) is no element type of cutec; the kernel takes {}",
            t.code, t.bits, t.lanes, p.dtype
        ))
    })?;
    let ndim = usize::try_from(t.ndim).map_err(|_| err(format!("DLPack ndim {}", t.ndim)))?;
    let read = |ptr: *const i64| -> Vec<i64> {
        if ndim == 0 || ptr.is_null() {
            return Vec::new();
        }
        // SAFETY: a non-null shape or strides array of a DLTensor has `ndim` entries.
        unsafe { std::slice::from_raw_parts(ptr, ndim) }.to_vec()
    };
    let shape = read(t.shape);
    let strides = if t.strides.is_null() { row_major(name, &shape)? } else { read(t.strides) };
    let address = (t.data as u64).wrapping_add(t.byte_offset);
    let device = usize::try_from(device_id).unwrap_or(cx.device);
    desc(p, dtype, shape, strides, address, device)
}

pub(crate) fn describe_scalar(p: &ScalarParam, obj: &Bound<'_, PyAny>) -> Result<ScalarValue, Refusal> {
    let name = &p.name;
    let got = || type_name(obj);
    let err = |m: String| Refusal::new(name, m);
    if p.dtype == DType::Bool {
        return obj
            .cast::<PyBool>()
            .map(|b| ScalarValue::Bool(b.is_true()))
            .map_err(|_| err(format!("expected a bool, got {}", got())));
    }
    let is_bool = obj.cast::<PyBool>().is_ok();
    if p.dtype.is_float() {
        if is_bool
            || !(obj.cast::<PyFloat>().is_ok()
                || obj.cast::<PyInt>().is_ok()
                || obj.hasattr("__float__").unwrap_or(false))
        {
            return Err(err(format!("expected a number for {}, got {}", p.dtype, got())));
        }
        let x: f64 = obj.extract().map_err(|e| err(format!("expected a number for {}: {e}", p.dtype)))?;
        return Ok(match p.dtype {
            DType::F64 => ScalarValue::F64(x),
            DType::F32 => ScalarValue::F32(x as f32),
            DType::F16 => ScalarValue::F16(f32_to_f16(x as f32)),
            DType::Bf16 => ScalarValue::Bf16(f32_to_bf16(x as f32)),
            DType::E4m3 => ScalarValue::E4m3(f32_to_e4m3(x as f32)),
            _ => ScalarValue::E5m2(f32_to_e5m2(x as f32)),
        });
    }
    // Integers: a Python int or anything with __index__ (numpy's integers), never a bool or a float.
    if is_bool || obj.cast::<PyFloat>().is_ok() {
        return Err(err(format!("expected an integer for {}, got {}", p.dtype, got())));
    }
    let v: i128 = obj.extract().map_err(|_| err(format!("expected an integer for {}, got {}", p.dtype, got())))?;
    let out_of_range = || err(format!("{v} is out of range for {}", p.dtype));
    Ok(match p.dtype {
        DType::I8 => ScalarValue::I8(i8::try_from(v).map_err(|_| out_of_range())?),
        DType::U8 => ScalarValue::U8(u8::try_from(v).map_err(|_| out_of_range())?),
        DType::I32 => ScalarValue::I32(i32::try_from(v).map_err(|_| out_of_range())?),
        DType::U32 => ScalarValue::U32(u32::try_from(v).map_err(|_| out_of_range())?),
        _ => ScalarValue::I64(i64::try_from(v).map_err(|_| out_of_range())?),
    })
}

/// Describes every argument of `args` (in parameter order, as many as `params`: the caller checked).
/// The current device and stream are looked up only if an argument needs them (one that is not a torch tensor).
pub fn describe_all(
    py: Python<'_>,
    params: &[Param],
    args: &Bound<'_, PyTuple>,
    torch: Option<&Torch>,
    memory: Memory,
) -> Result<Vec<ArgDesc>, Refusal> {
    let cell = std::cell::OnceCell::new();
    let cx = || *cell.get_or_init(|| Context::current(py, torch));
    params.iter().zip(args.iter()).map(|(p, a)| describe(py, p, &a, torch, &cx, memory)).collect()
}
