//! `NativeKernel.run_cpu`: a call on host memory, run by the interpreter of the scheduled IR (`cutec-interp`),
//! through the same launch check as a GPU call. The Python side (`Kernel.__call__(..., device="cpu")`) passes
//! each tensor's bytes in storage order with its shape and strides, and writes the returned bytes back.

use cutec_manifest::{DType, Param};
use cutec_runtime::{ArgDesc, TensorDesc, check_launch};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::describe::{Refusal, describe_scalar};
use crate::kernel::{NativeKernel, launch_error};

/// `earliest`, `latest` or `seed=N` (see `cutec_interp::Schedule`).
fn schedule(s: Option<&str>) -> PyResult<cutec_interp::Schedule> {
    match s {
        None | Some("earliest") => Ok(cutec_interp::Schedule::Earliest),
        Some("latest") => Ok(cutec_interp::Schedule::Latest),
        Some(other) => match other.strip_prefix("seed=").map(str::parse) {
            Some(Ok(seed)) => Ok(cutec_interp::Schedule::Seeded(seed)),
            _ => Err(PyValueError::new_err(format!("schedule `{other}`: earliest, latest or seed=N"))),
        },
    }
}

/// One tensor argument as the Python side packs it: its element type's manifest name, its bytes from element 0
/// in storage order, its shape and its strides in elements.
type Packed = (String, Vec<u8>, Vec<i64>, Vec<i64>);

/// Runs the kernel of `ir` (the scheduled IR's text) on `args` (tensors packed, scalars as Python numbers);
/// returns each parameter's bytes after the run (`None` for scalars).
pub(crate) fn run_cpu<'py>(
    k: &NativeKernel,
    py: Python<'py>,
    ir: &str,
    args: &Bound<'py, PyTuple>,
    when: Option<&str>,
) -> PyResult<Vec<Option<Bound<'py, PyBytes>>>> {
    k.arity(py, args)?;
    let schedule = schedule(when)?;
    let km = &k.kernel;
    let mut descs = Vec::with_capacity(km.params.len());
    let mut buffers = Vec::with_capacity(km.params.len());
    for (i, (p, a)) in km.params.iter().zip(args.iter()).enumerate() {
        match p {
            Param::Tensor(t) => {
                let (dtype, bytes, shape, strides): Packed = a.extract().map_err(|_| {
                    k.refused(py, Refusal { param: t.name.clone(), message: "expected a CPU tensor or array".into() })
                })?;
                if dtype != t.dtype.to_string() {
                    let message = format!("expected a tensor of {}, got {dtype}", t.dtype);
                    return Err(k.refused(py, Refusal { param: t.name.clone(), message }));
                }
                let size = u64::from(DType::size_bytes(t.dtype)).max(1);
                let len = bytes.len() as u64 / size;
                let ptr = cutec::run::stand_in_address(i);
                descs.push(ArgDesc::Tensor(TensorDesc { dtype: t.dtype, shape, strides, ptr, len, device: 0 }));
                buffers.push(Some(bytes));
            }
            Param::Scalar(s) => {
                descs.push(ArgDesc::Scalar(describe_scalar(s, &a).map_err(|r| k.refused(py, r))?));
                buffers.push(None);
            }
        }
    }
    let plan = check_launch(km, 0, &descs).map_err(|e| k.arg_error(py, e))?;
    let module = cutec_ir::parse(ir)
        .map_err(|e| launch_error(py, &km.name, None, format!("kernel `{}`: its IR does not parse: {e:?}", km.name)))?;
    let run_error = |e: String| launch_error(py, &km.name, None, format!("kernel `{}` on the CPU: {e}", km.name));
    let (mut interp_args, abi) = cutec::run::interp_args(km, &plan, buffers).map_err(|e| run_error(e.to_string()))?;
    let launch = cutec::run::interp_launch(km, &plan, cutec::run::CPU_SMS);
    let name = km.name.clone();
    py.detach(|| {
        let options = cutec_interp::Options { schedule, ..Default::default() };
        cutec_interp::run(&module, &name, launch, &mut interp_args, options)
    })
    .map_err(|e| run_error(e.to_string()))?;
    let mut out = Vec::with_capacity(km.params.len());
    for slot in abi {
        out.push(match slot.and_then(|a| interp_args.get(a as usize)) {
            Some(cutec_interp::Arg::Buffer(b)) => Some(PyBytes::new(py, b)),
            _ => None,
        });
    }
    Ok(out)
}
