//! `cutec run`: load a compiled module and its manifest, make the arguments, launch a kernel once, write the
//! outputs, and optionally benchmark it.
//!
//! Arguments of the kernel named in the manifest:
//! - a tensor named in [`RunOptions::inputs`] is read from a `.npy` file (C order; see `npy_to_elements` for the
//!   accepted numpy dtypes);
//! - a tensor named in [`RunOptions::outputs`] without an input, or whose manifest access is `write`, is
//!   **poisoned** with `0xff` bytes before the launch (NaN in every float format), so elements the kernel fails
//!   to write show up;
//! - any other tensor is filled with seeded random data **on the device** (`DeviceTensor::fill_random`; the
//!   distribution is documented in `cutec_runtime::fill`): floats uniform in `[-1, 1)` (drawn as `f32`, rounded to
//!   nearest-even for `f16`, `bf16`, `e4m3`, `e5m2`; 53 random bits for `f64`), signed integers uniform in
//!   `[-64, 64)`, unsigned in `[0, 64)`, `bool` 0 or 1. The same seed gives the same bytes on every machine;
//!   each tensor has its own stream (seed and parameter index), so adding an input changes no other tensor.
//!   [`RunOptions::save_inputs`] writes such a tensor to a `.npy` file as the kernel receives it;
//! - the shape of a tensor without an input file comes from its layout, with dynamic dimensions from
//!   [`RunOptions::dims`] or, failing that, from the input file of the dimension's source tensor;
//! - scalars come from [`RunOptions::scalars`] (parsed by [`ScalarValue::parse`]).
//!
//! A tensor whose layout orders its modes otherwise than row-major but compactly (a column-major matrix, e.g.
//! `(N, M):(1, N)`) is stored in that order on the device; its files, in and out, still hold the row-major array
//! (`cutec_runtime::strided` converts). Other layouts are refused by the launch check.
//!
//! Outputs are written as `.npy` with the dtype preserved where numpy has it (`f32 f64 f16 i8 u8 i32 i64 u32
//! bool`); **`bf16`, `e4m3` and `e5m2` are written as `float32`** (exact: every value of these formats is an
//! `f32`), so numpy and torch read them without extensions.
//!
//! Before anything is allocated, the tensors' total size is checked against the device's free memory (an error
//! names every tensor and its size). Reading and writing `.npy` files and copies between host and device that
//! take over a second report their progress on stderr (see `progress`).
//!
//! The kernel is launched once and synchronized (a fault is reported with the driver's error name); the outputs
//! are read and written then, before any benchmark launch. Printed lines (stable, parsed by
//! `scripts/gpu/compare.py`): `module ...`, `saved ...`, `launch ...`, `nan <param> <count>`, `wrote ...`, and with
//! `--bench`:
//! `bench kernel=<name> median_ms=<f> min_ms=<f> max_ms=<f> iters=<n> bytes=<n> gbps=<f>`, where `bytes` is the
//! size of all tensor arguments and `gbps` is `bytes / median` in 10^9 bytes per second; for a kernel whose
//! manifest counts its tensor-core work (`flops`, see the manifest), ` flops=<n> tflops=<f>` follow: the
//! operations one launch issues for these dims, and `flops / median` in 10^12 per second. With `--launch-overhead`:
//! `launch_overhead kernel=<name> checked_us=<f> prepared_us=<f> bare_us=<f> checked_over_bare=<f>
//! prepared_over_bare=<f>` (host microseconds per launch call; see `cutec_runtime::measure_launch_overhead`).

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use cutec_manifest::{Manifest, ManifestError};
use cutec_runtime::{
    Context, DeviceTensor, KernelArg, Module, RuntimeError, measure_launch_overhead, median, time_launches,
};
mod cpu;
pub(crate) mod data;
mod diag;
pub(crate) mod plan;
mod progress;

pub use cpu::{CPU_SMS, CpuOptions, interp_args, interp_launch, run_cpu, run_cpu_outputs};
pub use plan::stand_in_address;
pub use plan::{Options, plan_tensors};
use plan::{Source, parse_scalars, plan_arguments, precheck_launch};

use cutec_runtime::strided;
use data::{count_nan, download, upload, write_npy};

/// What `cutec run` does. Names refer to the manifest's parameters and dimensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOptions {
    /// The module: PTX text, or a cubin/fatbin (recognized by its ELF/fatbin magic number).
    pub ptx_path: PathBuf,
    pub manifest_path: PathBuf,
    pub kernel: String,
    /// Values of dynamic dimensions (`--dim M=32768`).
    pub dims: Vec<(String, i64)>,
    /// Tensors read from `.npy` files (`--input x=x.npy`).
    pub inputs: Vec<(String, PathBuf)>,
    /// Tensors written to `.npy` files after the launch (`--output y=y.npy`).
    pub outputs: Vec<(String, PathBuf)>,
    /// Tensors written to `.npy` files before the launch, as the kernel receives them (`--save-input x=x.npy`):
    /// the seeded random data, for a reference computed elsewhere.
    pub save_inputs: Vec<(String, PathBuf)>,
    /// Scalar arguments (`--scalar eps=1e-5`).
    pub scalars: Vec<(String, String)>,
    /// Seed of the random inputs.
    pub seed: u64,
    /// CUDA device ordinal.
    pub device: usize,
    /// Time `iters` launches after `warmup` untimed ones and print the median.
    pub bench: bool,
    /// Measure the host time of one launch call: checked, prepared, and the bare driver call.
    pub launch_overhead: bool,
    pub warmup: usize,
    pub iters: usize,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            ptx_path: PathBuf::new(),
            manifest_path: PathBuf::new(),
            kernel: String::new(),
            dims: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            save_inputs: Vec::new(),
            scalars: Vec::new(),
            seed: 0,
            device: 0,
            bench: false,
            launch_overhead: false,
            warmup: 10,
            iters: 100,
        }
    }
}

/// Why `cutec run` failed. Each variant has its code and exit class (`diag.rs`: [`RunError::to_diagnostic`]).
#[derive(Debug)]
pub enum RunError {
    /// A file could not be read.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// An output file could not be written.
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    Manifest {
        path: PathBuf,
        source: Box<ManifestError>,
    },
    /// A `.npy` file is malformed or does not fit the parameter.
    Npy {
        path: PathBuf,
        message: String,
    },
    /// `--kernel` names no kernel of the manifest.
    UnknownKernel {
        name: String,
        available: Vec<String>,
    },
    /// The module file is not a module (PTX that is not UTF-8 text).
    Module {
        path: PathBuf,
        message: String,
    },
    /// The options do not fit the kernel (unknown names, missing values, a `--dim` value the launch check
    /// refuses). `options` are the command-line options it is about, each with its label; the first is the primary.
    Usage {
        message: String,
        options: Options,
    },
    /// The launch check refused the arguments made from input files (or, with no option to blame, from the
    /// manifest alone); `options` as for [`RunError::Usage`].
    Rejected {
        message: String,
        options: Options,
    },
    /// A bug of `cutec run` itself, reported rather than a panic.
    Internal(String),
    Runtime(RuntimeError),
    /// Writing the report failed.
    Report(std::io::Error),
    /// `--cpu`: the interpreter stopped (its diagnostics are located in the build's source map).
    Interp(cutec_interp::InterpError),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Io { path, source } => write!(f, "cannot read `{}`: {source}", path.display()),
            RunError::Write { path, source } => write!(f, "cannot write `{}`: {source}", path.display()),
            RunError::Manifest { path, source } => write!(f, "invalid manifest `{}`: {source}", path.display()),
            RunError::Npy { path, message } => write!(f, "`{}`: {message}", path.display()),
            RunError::UnknownKernel { name, available } => {
                write!(f, "the manifest has no kernel `{name}` (it has: {})", available.join(", "))
            }
            RunError::Module { path, message } => write!(f, "`{}`: {message}", path.display()),
            RunError::Usage { message, .. } => f.write_str(message),
            RunError::Rejected { message, .. } => f.write_str(message),
            RunError::Internal(message) => write!(f, "internal error: {message}"),
            RunError::Runtime(e) => write!(f, "{e}"),
            RunError::Report(e) => write!(f, "writing the report: {e}"),
            RunError::Interp(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunError::Io { source, .. } | RunError::Write { source, .. } => Some(source),
            RunError::Manifest { source, .. } => Some(source.as_ref()),
            RunError::Runtime(e) => Some(e),
            RunError::Report(e) => Some(e),
            RunError::Npy { .. }
            | RunError::Usage { .. }
            | RunError::Rejected { .. }
            | RunError::Internal(_)
            | RunError::UnknownKernel { .. }
            | RunError::Module { .. }
            | RunError::Interp(_) => None,
        }
    }
}

impl From<RuntimeError> for RunError {
    fn from(e: RuntimeError) -> Self {
        RunError::Runtime(e)
    }
}

pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RunError + '_ {
    move |source| RunError::Io { path: path.to_owned(), source }
}

/// A failed write of `path` (the helpers of `data.rs` report every I/O failure as [`RunError::Io`]).
fn as_write(e: RunError) -> RunError {
    match e {
        RunError::Io { path, source } => RunError::Write { path, source },
        other => other,
    }
}

fn report(e: std::io::Error) -> RunError {
    RunError::Report(e)
}

/// Runs the kernel as described by `opts`, reporting on `out`.
pub fn run(opts: &RunOptions, out: &mut dyn Write) -> Result<(), RunError> {
    // The module first: when neither file exists, the one the user named is the one reported missing.
    // Each read stops at its limit: an endless file (`/dev/zero`) is an error, not all of the memory.
    let image = crate::files::read_capped(&opts.ptx_path, crate::files::MAX_MODULE_BYTES)
        .map_err(|e| io(&opts.ptx_path)(e.into()))?;
    let manifest_text = crate::files::read_text_capped(&opts.manifest_path, crate::files::MAX_MANIFEST_BYTES)
        .map_err(|e| io(&opts.manifest_path)(e.into()))?;
    let manifest = Manifest::from_json(&manifest_text)
        .map_err(|source| RunError::Manifest { path: opts.manifest_path.clone(), source: Box::new(source) })?;
    let kernel_manifest = manifest.kernel(&opts.kernel).cloned().ok_or_else(|| RunError::UnknownKernel {
        name: opts.kernel.clone(),
        available: manifest.kernels.iter().map(|k| k.name.clone()).collect(),
    })?;
    let plan = plan_arguments(&kernel_manifest, opts)?;
    let scalars = parse_scalars(&kernel_manifest, opts)?;
    precheck_launch(&kernel_manifest, opts, &plan, &scalars)?;
    let sources = plan.sources;
    let strides = plan.strides;

    let ctx = Context::new(opts.device)?;
    let started = Instant::now();
    let is_binary = image.starts_with(b"\x7fELF") || image.starts_with(&0xba55_ed50u32.to_le_bytes());
    let module = if is_binary {
        Module::load_cubin(&ctx, &image, manifest)?
    } else {
        let text = String::from_utf8(image).map_err(|e| RunError::Module {
            path: opts.ptx_path.clone(),
            message: format!("not UTF-8 PTX text: {e}"),
        })?;
        Module::load_ptx(&ctx, &text, manifest)?
    };
    let load_ms = started.elapsed().as_secs_f64() * 1e3;
    let kernel = module.kernel(&opts.kernel)?;
    let info = kernel.info()?;
    writeln!(
        out,
        "module {} loaded in {load_ms:.1} ms on {}: {} registers, {} B local memory per thread, {} B static shared",
        opts.ptx_path.display(),
        ctx.device_name()?,
        info.num_regs,
        info.local_bytes,
        info.static_smem_bytes
    )
    .map_err(report)?;

    // Make the tensors, in parameter order, after checking that they fit.
    let needed: Vec<(&str, _, &[usize])> = kernel_manifest
        .params
        .iter()
        .zip(&sources)
        .filter_map(|(p, s)| s.as_ref().map(|s| (p.name(), p.dtype(), s.shape())))
        .collect();
    ctx.check_fits(&needed)?;
    let mut tensors: Vec<Option<DeviceTensor>> = Vec::new();
    for (index, (param, source)) in kernel_manifest.params.iter().zip(&sources).enumerate() {
        let Some(source) = source else {
            tensors.push(None);
            continue;
        };
        let dtype = param.dtype();
        let layout = strides[index].as_ref();
        let tensor = match source {
            // Files hold row-major arrays; a tensor laid out otherwise is stored in its own order.
            Source::File { shape, bytes } => match layout {
                Some(st) => {
                    let stored = strided::row_major_to_strided(bytes, shape, st, dtype.size_bytes() as usize);
                    upload(&ctx, param.name(), dtype, shape, &stored)?
                }
                None => upload(&ctx, param.name(), dtype, shape, bytes)?,
            },
            Source::Random { shape } => {
                let mut t = DeviceTensor::zeros(&ctx, dtype, shape)?;
                t.fill_random(opts.seed, index as u64)?;
                t
            }
            Source::Poison { shape } => {
                let mut t = DeviceTensor::zeros(&ctx, dtype, shape)?;
                t.fill_bytes(0xff)?;
                t
            }
        };
        let tensor = match layout {
            Some(st) => tensor.with_strides(st.clone())?,
            None => tensor,
        };
        tensors.push(Some(tensor));
    }
    // A tensor's elements as a row-major array (what `.npy` files hold), whatever order it is stored in.
    let row_major = |index: usize, name: &str, tensor: &DeviceTensor| -> Result<Vec<u8>, RunError> {
        let bytes = download(name, tensor)?;
        Ok(match strides[index].as_ref() {
            Some(st) => strided::strided_to_row_major(&bytes, tensor.shape(), st, tensor.dtype().size_bytes() as usize),
            None => bytes,
        })
    };
    for (name, path) in &opts.save_inputs {
        let index = kernel_manifest.params.iter().position(|p| p.name() == name);
        let Some((i, Some(tensor))) = index.map(|i| (i, &tensors[i])) else { continue };
        write_npy(path, tensor.dtype(), tensor.shape(), &row_major(i, name, tensor)?).map_err(as_write)?;
        writeln!(out, "saved {name} {:?} {} -> {}", tensor.shape(), tensor.dtype(), path.display()).map_err(report)?;
    }
    let mut scalar_iter = scalars.into_iter();
    let mut args = Vec::with_capacity(kernel_manifest.params.len());
    for t in &tensors {
        args.push(match t {
            Some(t) => KernelArg::Tensor(t),
            None => {
                KernelArg::Scalar(scalar_iter.next().ok_or_else(|| RunError::Internal("scalar count mismatch".into()))?)
            }
        });
    }

    let plan = kernel.plan(&args)?;
    let dims: Vec<String> = plan.dims.iter().map(|d| format!("{}={}", d.name, d.value)).collect();
    let [gx, gy, gz] = kernel.hardware_grid(&plan);
    let tiles = match plan.grid {
        [x, y, z] if kernel_manifest.launch.persistent => format!(" tiles={x}x{y}x{z}"),
        _ => String::new(),
    };
    let [bx, by, bz] = plan.block;
    let cluster = plan.cluster.map_or_else(|| "none".to_owned(), |[x, y, z]| format!("{x}x{y}x{z}"));
    writeln!(
        out,
        "launch kernel={} grid={gx}x{gy}x{gz}{tiles} block={bx}x{by}x{bz} cluster={cluster} smem={} dims=[{}]",
        kernel.name(),
        plan.smem_bytes,
        dims.join(" ")
    )
    .map_err(report)?;
    kernel.launch(&args)?;
    ctx.synchronize()?;

    // Outputs are the result of this first launch (before any benchmark launch runs).
    for (name, path) in &opts.outputs {
        let index = kernel_manifest.params.iter().position(|p| p.name() == name);
        let Some((i, Some(tensor))) = index.map(|i| (i, &tensors[i])) else { continue };
        let bytes = row_major(i, name, tensor)?;
        let nan = count_nan(tensor.dtype(), &bytes);
        write_npy(path, tensor.dtype(), tensor.shape(), &bytes).map_err(as_write)?;
        writeln!(out, "nan {name} {nan}").map_err(report)?;
        writeln!(out, "wrote {name} {:?} {} -> {}", tensor.shape(), tensor.dtype(), path.display()).map_err(report)?;
    }
    if opts.bench {
        let times = time_launches(&kernel, &args, opts.warmup, opts.iters)?;
        let bytes: usize = tensors.iter().flatten().map(DeviceTensor::num_bytes).sum();
        let med = median(&times).unwrap_or(f32::NAN);
        let min = times.iter().copied().fold(f32::INFINITY, f32::min);
        let max = times.iter().copied().fold(0.0f32, f32::max);
        let gbps = bytes as f64 / (f64::from(med) * 1e-3) / 1e9;
        // The tensor-core work the compiler counted for these dims, when it could (the manifest's `flops`).
        let flops = kernel_manifest
            .flops
            .as_ref()
            .and_then(|f| f.eval_dims(&|d| plan.dims.iter().find(|b| b.name == d).map(|b| b.value)).ok());
        let tflops = match flops {
            Some(f) => format!(" flops={f} tflops={:.1}", f as f64 / (f64::from(med) * 1e-3) / 1e12),
            None => String::new(),
        };
        writeln!(
            out,
            "bench kernel={} median_ms={med:.6} min_ms={min:.6} max_ms={max:.6} iters={} bytes={bytes} gbps={gbps:.1}{tflops}",
            kernel.name(),
            times.len()
        )
        .map_err(report)?;
    }
    if opts.launch_overhead {
        let o = measure_launch_overhead(&kernel, &args, 11, 1000).map_err(|e| match e {
            // What the runtime cannot measure for this kernel (a cluster launch) is refused on the option.
            RuntimeError::Unsupported(_) => RunError::Usage {
                message: e.to_string(),
                options: vec![("--launch-overhead".into(), "not supported for this kernel".into())],
            },
            e => RunError::Runtime(e),
        })?;
        writeln!(
            out,
            "launch_overhead kernel={} checked_us={:.3} prepared_us={:.3} bare_us={:.3} checked_over_bare={:.3} \
             prepared_over_bare={:.3}",
            kernel.name(),
            o.checked_us,
            o.prepared_us,
            o.bare_us,
            o.checked_us / o.bare_us,
            o.prepared_us / o.bare_us
        )
        .map_err(report)?;
    }

    Ok(())
}

#[cfg(test)]
mod tests {
    use super::data::*;
    use super::*;
    use cutec_manifest::DType;
    use cutec_manifest::Kernel;
    use cutec_runtime::ScalarValue;
    use cutec_runtime::fill::random_elements;

    fn tmp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("cutec-run-test-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        dir.join(name)
    }

    fn kernel(json: serde_json::Value) -> Kernel {
        let m = serde_json::json!({ "format_version": 1, "target": "sm_90a", "module": "k.ptx", "kernels": [json] });
        Manifest::from_json(&m.to_string()).map(|m| m.kernels[0].clone()).expect("test manifest is valid")
    }

    /// softmax-like: x (read), y (write), scale; M from x.shape[0].
    fn softmax() -> Kernel {
        let t = |name: &str, access: &str| {
            serde_json::json!({ "kind": "tensor", "name": name, "dtype": "bf16", "space": "gmem", "access": access,
                                "layout": { "shape": ["M", 64], "stride": [64, 1] }, "align_bytes": 16 })
        };
        kernel(serde_json::json!({
            "name": "softmax",
            "params": [t("x", "read"), t("y", "write"), { "kind": "scalar", "name": "scale", "dtype": "f32" }],
            "dims": [{ "name": "M", "type": "i32", "from": { "param": "x", "mode": 0 } }],
            "launch": { "grid": ["M"], "block": [128] }
        }))
    }

    fn opts() -> RunOptions {
        RunOptions { kernel: "softmax".into(), ..RunOptions::default() }
    }

    #[test]
    fn poison_is_nan_in_every_float_format() {
        for dtype in [DType::F32, DType::F64, DType::F16, DType::Bf16, DType::E4m3, DType::E5m2] {
            assert_eq!(count_nan(dtype, &vec![0xff; 4 * dtype.size_bytes() as usize]), 4, "{dtype}");
            assert_eq!(count_nan(dtype, &random_elements(dtype, 100, 0, 0)), 0, "{dtype}");
        }
    }

    #[test]
    fn arguments_from_dims_files_and_access() {
        let k = softmax();
        let o = RunOptions { dims: vec![("M".into(), 3)], ..opts() };
        let sources = plan_arguments(&k, &o).unwrap().sources;
        assert_eq!(
            sources,
            [Some(Source::Random { shape: vec![3, 64] }), Some(Source::Poison { shape: vec![3, 64] }), None]
        );

        // M from the input file; y follows it.
        let path = tmp("x.npy");
        write_npy(&path, DType::F32, &[5, 64], &random_elements(DType::F32, 5 * 64, 0, 0)).unwrap();
        let o = RunOptions { inputs: vec![("x".into(), path.clone())], ..opts() };
        let sources = plan_arguments(&k, &o).unwrap().sources;
        assert!(
            matches!(&sources[0], Some(Source::File { shape, bytes }) if shape == &[5, 64] && bytes.len() == 5 * 64 * 2)
        );
        assert_eq!(sources[1], Some(Source::Poison { shape: vec![5, 64] }));

        let o = RunOptions { inputs: vec![("x".into(), path)], dims: vec![("M".into(), 4)], ..opts() };
        assert_eq!(
            plan_arguments(&k, &o).unwrap_err().to_string(),
            "--dim M=4 contradicts x.shape[0] of the input file = 5"
        );
    }

    #[test]
    fn a_column_major_tensor_is_planned_with_its_strides_and_passes_the_launch_check() {
        // ct (N, M):(1, N), as gemm_swap_ab writes C transposed: stored column-major, not refused (E0422).
        let t = |name: &str, access: &str, shape: serde_json::Value, stride: serde_json::Value| {
            serde_json::json!({ "kind": "tensor", "name": name, "dtype": "bf16", "space": "gmem", "access": access,
                                "layout": { "shape": shape, "stride": stride }, "align_bytes": 16 })
        };
        let k = kernel(serde_json::json!({
            "name": "k",
            "params": [t("a", "read", serde_json::json!(["M", 8]), serde_json::json!([8, 1])),
                       t("ct", "write", serde_json::json!(["N", "M"]), serde_json::json!([1, "N"]))],
            "dims": [{ "name": "M", "type": "i32", "from": { "param": "a", "mode": 0 } },
                     { "name": "N", "type": "i32", "from": { "param": "ct", "mode": 0 } }],
            "launch": { "grid": [1], "block": [32] }
        }));
        let o = RunOptions { kernel: "k".into(), dims: vec![("M".into(), 3), ("N".into(), 5)], ..opts() };
        let plan = plan_arguments(&k, &o).unwrap();
        assert_eq!(plan.strides, [None, Some(vec![1, 5])]);
        assert_eq!(plan_tensors(&k, &o).unwrap()[1], ("ct".to_owned(), DType::Bf16, vec![5, 3]));
        // Row-major layouts keep no strides of their own.
        assert_eq!(
            plan_arguments(&softmax(), &RunOptions { dims: vec![("M".into(), 3)], ..opts() }).unwrap().strides,
            [None, None, None]
        );
    }

    #[test]
    fn usage_errors_name_what_is_missing() {
        let k = softmax();
        let e = |o: RunOptions| plan_arguments(&k, &o).unwrap_err().to_string();
        assert_eq!(
            e(opts()),
            "dimension `M` has no value (needed for the shape of `x`): give --dim M=N or an input file for `x`"
        );
        assert_eq!(
            e(RunOptions { dims: vec![("N".into(), 1)], ..opts() }),
            "kernel `softmax` has no dimension `N` (its dimensions: M)"
        );
        assert_eq!(
            e(RunOptions { outputs: vec![("z".into(), "z.npy".into())], ..opts() }),
            "kernel `softmax` has no parameter `z` (its parameters: x, y, scale)"
        );
        assert_eq!(
            e(RunOptions { save_inputs: vec![("w".into(), "w.npy".into())], ..opts() }),
            "kernel `softmax` has no parameter `w` (its parameters: x, y, scale)"
        );
        assert_eq!(
            e(RunOptions { inputs: vec![("scale".into(), "s.npy".into())], ..opts() }),
            "input `scale` is a scalar parameter, not a tensor"
        );
        // Nothing the run reads is overwritten, and no file is written twice (the paths need not exist).
        assert_eq!(
            e(RunOptions {
                inputs: vec![("x".into(), "d/x.npy".into())],
                outputs: vec![("y".into(), "d/../d/x.npy".into())],
                ..opts()
            }),
            "output `y` would be written to `d/../d/x.npy`, which is also input `x`"
        );
        assert_eq!(
            e(RunOptions {
                outputs: vec![("y".into(), "y.npy".into())],
                save_inputs: vec![("x".into(), "./y.npy".into())],
                ..opts()
            }),
            "saved input `x` would be written to `./y.npy`, which is also output `y`"
        );
        assert_eq!(
            e(RunOptions {
                manifest_path: "m/k.json".into(),
                outputs: vec![("y".into(), "m/k.json".into())],
                ..opts()
            }),
            "output `y` would be written to `m/k.json`, which is also the manifest"
        );
        assert_eq!(
            parse_scalars(&k, &opts()).unwrap_err().to_string(),
            "scalar `scale` (f32) needs a value: --scalar scale=V"
        );
        let scalar = |v: &str| RunOptions { scalars: vec![("scale".into(), v.into())], ..opts() };
        assert_eq!(parse_scalars(&k, &scalar("0.5")).unwrap(), [ScalarValue::F32(0.5)]);
        assert_eq!(
            parse_scalars(&k, &scalar("half")).unwrap_err().to_string(),
            "scalar `scale`: `half` is not a valid f32 value"
        );
    }
}
