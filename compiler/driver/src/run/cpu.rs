//! `cutec run --cpu`: the same arguments, input files, launch check and outputs as the GPU path, with the
//! kernel's scheduled IR executed by `cutec-interp` on host memory instead of a launch. No CUDA is needed.
//!
//! Tensors are made on the host as the GPU path makes them on the device: from `.npy` files, seeded random
//! data (`cutec_runtime::fill::random_elements`, the host reference of the device fill, so the same seed gives
//! the same bytes), or `0xff` poison. The tensor maps are the ones the runtime's launch check plans
//! (`LaunchPlan::tensor_maps`), told apart by the stand-in addresses of `plan.rs`. A persistent kernel's grid
//! is the one it would get on a GPU of [`CpuOptions::sms`] SMs.

use super::data::{count_nan, write_npy};
use super::plan::{Plan, Source, parse_scalars, plan_arguments, precheck_launch, stand_in_address};
use super::{RunError, RunOptions, as_write, report};
use cutec_interp::{Arg, Launch, TensorMap, TmaSwizzle};
use cutec_manifest::Manifest;
use cutec_runtime::{ParamValue, strided};
use std::io::IsTerminal;
use std::io::Write;
use std::time::{Duration, Instant};

/// The SMs of the GPU a persistent kernel's grid is computed for by default (an H100 SXM's).
pub const CPU_SMS: u32 = 132;

/// How `--cpu` runs: when TMA loads land, and the SMs of the GPU a persistent kernel's grid is made for (fewer
/// SMs give each CTA more tiles: `--sms 2` runs a persistent GEMM's loop over tiles, and its ring across them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuOptions {
    pub schedule: cutec_interp::Schedule,
    pub sms: u32,
}

impl Default for CpuOptions {
    fn default() -> Self {
        CpuOptions { schedule: cutec_interp::Schedule::Earliest, sms: CPU_SMS }
    }
}

fn swizzle(s: cutec_manifest::TmaSwizzle) -> TmaSwizzle {
    match s {
        cutec_manifest::TmaSwizzle::None => TmaSwizzle::None,
        cutec_manifest::TmaSwizzle::B32 => TmaSwizzle::B32,
        cutec_manifest::TmaSwizzle::B64 => TmaSwizzle::B64,
        cutec_manifest::TmaSwizzle::B128 => TmaSwizzle::B128,
    }
}

/// The interpreter's arguments for a launch the runtime's check planned (`launch`, made with the stand-in
/// addresses of [`stand_in_address`]), in ABI order (the IR's parameters): each tensor's bytes from
/// `buffers` (by manifest parameter, in storage order), the scalars' and dimensions' bits, then the tensor maps.
/// Also the ABI index of each manifest parameter's buffer.
pub fn interp_args(
    km: &cutec_manifest::Kernel,
    launch: &cutec_runtime::LaunchPlan,
    mut buffers: Vec<Option<Vec<u8>>>,
) -> Result<(Vec<Arg>, Vec<Option<u32>>), RunError> {
    let tensor_of = |address: u64| (0..km.params.len()).find(|&i| stand_in_address(i) == address);
    let mut args: Vec<Arg> = Vec::new();
    let mut abi_of_tensor = vec![None; km.params.len()];
    for value in &launch.params {
        args.push(match *value {
            ParamValue::Pointer(address) => {
                let Some(i) = tensor_of(address) else {
                    return Err(RunError::Internal(format!("no tensor at stand-in address {address:#x}")));
                };
                abi_of_tensor[i] = Some(args.len() as u32);
                Arg::Buffer(buffers.get_mut(i).and_then(Option::take).unwrap_or_default())
            }
            ParamValue::Scalar(_) | ParamValue::Dim { .. } => {
                let bytes = value.to_le_bytes();
                let size = value.size_bytes().min(8) as usize;
                let mut low = [0u8; 8];
                low[..size].copy_from_slice(&bytes[..size]);
                Arg::Scalar(u64::from_le_bytes(low))
            }
        });
    }
    for m in &launch.tensor_maps {
        let tensor = tensor_of(m.address).and_then(|i| abi_of_tensor[i]);
        let Some(tensor) = tensor else {
            return Err(RunError::Internal(format!("tensor map `{}` describes no tensor argument", m.name)));
        };
        let d = &m.desc;
        args.push(Arg::TensorMap(TensorMap {
            tensor,
            elem_bytes: d.dtype.size_bytes(),
            dims: d.global_dims.clone(),
            strides: d.global_strides.clone(),
            box_dims: d.box_dims.clone(),
            element_strides: d.element_strides.clone(),
            swizzle: swizzle(d.swizzle),
            oob_nan: d.oob_fill == cutec_manifest::TmaOobFill::Nan,
        }));
    }
    Ok((args, abi_of_tensor))
}

/// The interpreter's launch for a planned one: a persistent kernel's grid as on a GPU of `sms` SMs.
pub fn interp_launch(km: &cutec_manifest::Kernel, launch: &cutec_runtime::LaunchPlan, sms: u32) -> Launch {
    Launch {
        grid: km.launch.hardware_grid(launch.grid, launch.cluster, sms.max(1)),
        block: launch.block,
        cluster: launch.cluster.unwrap_or([1, 1, 1]),
    }
}

/// Runs kernel `opts.kernel` of `module` (the IR after the pass pipeline, whose manifest is `manifest`) on
/// the CPU, reporting on `out` as [`super::run`] does.
pub fn run_cpu(
    opts: &RunOptions,
    cpu: CpuOptions,
    module: &cutec_ir::Module,
    manifest: &Manifest,
    out: &mut dyn Write,
) -> Result<(), RunError> {
    let (km, plan, launch) = prepare(opts, manifest)?;

    let buffers = host_buffers(&km, &plan, opts.seed);
    let row_major = |index: usize, bytes: &[u8]| row_major_of(&km, &plan, index, bytes);
    let shape_of = |index: usize| plan.sources.get(index).and_then(Option::as_ref).map(|s| s.shape().to_vec());
    for (name, path) in &opts.save_inputs {
        let Some(i) = km.params.iter().position(|p| p.name() == name) else { continue };
        let (Some(Some(bytes)), Some(shape)) = (buffers.get(i), shape_of(i)) else { continue };
        let dtype = km.params[i].dtype();
        write_npy(path, dtype, &shape, &row_major(i, bytes)).map_err(as_write)?;
        writeln!(out, "saved {name} {shape:?} {dtype} -> {}", path.display()).map_err(report)?;
    }

    let (mut args, abi_of_tensor) = interp_args(&km, &launch, buffers)?;
    let cpu_launch = interp_launch(&km, &launch, cpu.sms);
    let [gx, gy, gz] = cpu_launch.grid;
    let [bx, by, bz] = launch.block;
    let tiles = match launch.grid {
        [x, y, z] if km.launch.persistent => format!(" tiles={x}x{y}x{z}"),
        _ => String::new(),
    };
    let dims: Vec<String> = launch.dims.iter().map(|d| format!("{}={}", d.name, d.value)).collect();
    let cl = launch.cluster.map_or_else(|| "none".to_owned(), |[x, y, z]| format!("{x}x{y}x{z}"));
    writeln!(
        out,
        "launch kernel={} grid={gx}x{gy}x{gz}{tiles} block={bx}x{by}x{bz} cluster={cl} smem={} dims=[{}] device=cpu",
        km.name,
        launch.smem_bytes,
        dims.join(" ")
    )
    .map_err(report)?;
    let started = Instant::now();
    let mut progress = ClusterProgress { name: &km.name, start: started, last: None, drew: false };
    let mut on_progress = |done: u64, total: u64| progress.update(done, total);
    let options =
        cutec_interp::Options { progress: Some(&mut on_progress), schedule: cpu.schedule, ..Default::default() };
    let result = cutec_interp::run(module, &km.name, cpu_launch, &mut args, options);
    progress.finish();
    let outcome = result.map_err(RunError::Interp)?;
    writeln!(
        out,
        "ran kernel={} ctas={} statements={} seconds={:.3}",
        km.name,
        outcome.ctas,
        outcome.steps,
        started.elapsed().as_secs_f64()
    )
    .map_err(report)?;

    for (name, path) in &opts.outputs {
        let Some(i) = km.params.iter().position(|p| p.name() == name) else { continue };
        let Some(Arg::Buffer(bytes)) = abi_of_tensor[i].and_then(|a| args.get(a as usize)) else { continue };
        let Some(shape) = shape_of(i) else { continue };
        let dtype = km.params[i].dtype();
        let bytes = row_major(i, bytes);
        let nan = count_nan(dtype, &bytes);
        write_npy(path, dtype, &shape, &bytes).map_err(as_write)?;
        writeln!(out, "nan {name} {nan}").map_err(report)?;
        writeln!(out, "wrote {name} {shape:?} {dtype} -> {}", path.display()).map_err(report)?;
    }
    Ok(())
}

/// What both CPU runs check before anything is allocated: the kernel `opts` names, its arguments planned, the
/// launch checked as a GPU run checks it, and the host memory its tensors take.
fn prepare(
    opts: &RunOptions,
    manifest: &Manifest,
) -> Result<(cutec_manifest::Kernel, Plan, cutec_runtime::LaunchPlan), RunError> {
    let km = manifest.kernel(&opts.kernel).cloned().ok_or_else(|| RunError::UnknownKernel {
        name: opts.kernel.clone(),
        available: manifest.kernels.iter().map(|k| k.name.clone()).collect(),
    })?;
    let plan = plan_arguments(&km, opts)?;
    let scalars = parse_scalars(&km, opts)?;
    let launch = precheck_launch(&km, opts, &plan, &scalars)?;
    check_host_memory(&km, &plan, opts)?;
    Ok((km, plan, launch))
}

/// The most host memory a CPU run's tensors may take: past it the allocation could fail and abort the process,
/// so the run is refused first. Runs on the CPU are for small shapes (seconds per million elements of work).
const MAX_HOST_BYTES: u128 = 8 << 30;

/// Refuses a launch whose tensors would take more than [`MAX_HOST_BYTES`] of host memory, naming the `--dim`s.
fn check_host_memory(km: &cutec_manifest::Kernel, plan: &Plan, opts: &RunOptions) -> Result<(), RunError> {
    let bytes: u128 = km
        .params
        .iter()
        .zip(&plan.sources)
        .filter_map(|(param, source)| {
            let count = source.as_ref()?.shape().iter().try_fold(1u128, |n, d| n.checked_mul(*d as u128))?;
            Some(count.saturating_mul(u128::from(param.dtype().size_bytes())))
        })
        .fold(0u128, u128::saturating_add);
    if bytes <= MAX_HOST_BYTES {
        return Ok(());
    }
    let options = opts.dims.iter().map(|(n, v)| (format!("--dim {n}={v}"), String::new())).collect();
    Err(RunError::Rejected {
        message: format!(
            "the tensors of this launch take {bytes} bytes of host memory; a run on the CPU takes at most {} \
             (use smaller dims: the CPU runs small shapes)",
            MAX_HOST_BYTES
        ),
        options,
    })
}

/// The tensors of a planned launch on the host, by manifest parameter, in their storage order: from their files,
/// seeded random data (the device fill's host reference: the same bytes as a GPU run's), or `0xff` poison.
fn host_buffers(km: &cutec_manifest::Kernel, plan: &Plan, seed: u64) -> Vec<Option<Vec<u8>>> {
    let mut buffers = Vec::with_capacity(km.params.len());
    for (index, (param, source)) in km.params.iter().zip(&plan.sources).enumerate() {
        let dtype = param.dtype();
        let size = dtype.size_bytes() as usize;
        let layout = plan.strides.get(index).and_then(Option::as_ref);
        buffers.push(source.as_ref().map(|source| match source {
            Source::File { shape, bytes } => match layout {
                Some(st) => strided::row_major_to_strided(bytes, shape, st, size),
                None => bytes.clone(),
            },
            Source::Random { shape } => {
                let count = shape.iter().product();
                cutec_runtime::fill::random_elements(dtype, count, seed, index as u64)
            }
            Source::Poison { shape } => vec![0xff; shape.iter().product::<usize>() * size],
        }));
    }
    buffers
}

/// A tensor's bytes as a row-major array (what `.npy` files hold), whatever order it is stored in.
fn row_major_of(km: &cutec_manifest::Kernel, plan: &Plan, index: usize, bytes: &[u8]) -> Vec<u8> {
    let (Some(Some(st)), Some(Some(source))) = (plan.strides.get(index), plan.sources.get(index)) else {
        return bytes.to_vec();
    };
    let size = km.params.get(index).map_or(1, |p| p.dtype().size_bytes() as usize);
    strided::strided_to_row_major(bytes, source.shape(), st, size)
}

/// Runs kernel `opts.kernel` of `module` on the CPU as [`run_cpu`] does, quietly, and returns each tensor it
/// writes (access other than `read`): its name, element type and bytes as a row-major array. For comparisons
/// of builds (`cutec tune --compile-only --cpu`).
pub fn run_cpu_outputs(
    opts: &RunOptions,
    cpu: CpuOptions,
    module: &cutec_ir::Module,
    manifest: &Manifest,
) -> Result<Vec<(String, cutec_manifest::DType, Vec<u8>)>, RunError> {
    let (km, plan, launch) = prepare(opts, manifest)?;
    let buffers = host_buffers(&km, &plan, opts.seed);
    let (mut args, abi_of_tensor) = interp_args(&km, &launch, buffers)?;
    let options = cutec_interp::Options { schedule: cpu.schedule, ..Default::default() };
    cutec_interp::run(module, &km.name, interp_launch(&km, &launch, cpu.sms), &mut args, options)
        .map_err(RunError::Interp)?;
    let mut outputs = Vec::new();
    for (i, p) in km.params.iter().enumerate() {
        let cutec_manifest::Param::Tensor(t) = p else { continue };
        if t.access == cutec_manifest::Access::Read {
            continue;
        }
        if let Some(Arg::Buffer(bytes)) = abi_of_tensor[i].and_then(|a| args.get(a as usize)) {
            outputs.push((t.name.clone(), t.dtype, row_major_of(&km, &plan, i, bytes)));
        }
    }
    Ok(outputs)
}

/// The interpreter's progress on a terminal's stderr, as the GPU path reports long transfers: clusters done of
/// all, drawn after the first second, at most ten times a second.
struct ClusterProgress<'a> {
    name: &'a str,
    start: Instant,
    last: Option<Instant>,
    drew: bool,
}

impl ClusterProgress<'_> {
    fn update(&mut self, done: u64, total: u64) {
        let now = Instant::now();
        let quiet = now - self.start < Duration::from_secs(1);
        if quiet || self.last.is_some_and(|t| now - t < Duration::from_millis(100)) || !std::io::stderr().is_terminal()
        {
            return;
        }
        self.last = Some(now);
        self.drew = true;
        let percent = done.saturating_mul(100).checked_div(total).unwrap_or(100);
        // Progress is a courtesy: a failed write to stderr does not stop the run.
        let _ = write!(
            std::io::stderr(),
            "\rrunning `{}` on the CPU: {done} of {total} clusters ({percent}%)\x1b[K",
            self.name
        );
    }

    fn finish(&self) {
        if self.drew {
            let _ = writeln!(std::io::stderr());
        }
    }
}
