//! The GPU half of `cutec tune`, for one shape: every loaded configuration checked against the reference, then
//! the survivors timed in interleaved rounds.
//!
//! - The tensors are made once, as `cutec run` makes them (`run::plan`): inputs filled with the seeded random
//!   data of `--seed`, outputs (parameters the kernel writes) poisoned with NaN.
//! - The baseline (the default configuration) runs first; its outputs are the reference, unless `--reference`
//!   gives one, against which the baseline is checked too. Before each checked launch the outputs are poisoned
//!   again and tensors the kernel both reads and writes are filled again, so each configuration starts from the
//!   same bytes.
//! - Timing: `rounds` rounds; in each, every surviving configuration is launched `warmup` times untimed and
//!   `iters` times timed with CUDA events (`cutec_runtime::time_launches`, as `run --bench`), and the round's
//!   sample is the median launch. The order rotates from round to round, so no configuration always follows the
//!   same one (clocks and caches warmed by a neighbour). The result is the median over rounds, with their
//!   minimum and maximum: the spread says how far two close times can be told apart.

use super::check::{Mismatch, Tolerance, compare_all, default_tolerance, unravel};
use crate::run::data::{download, npy_to_elements, read_npy};
use crate::run::plan::{Source, parse_scalars, plan_arguments, precheck_launch};
use crate::run::{RunError, RunOptions};
use cutec_manifest::{Access, DType, Param};
use cutec_runtime::{Context, DeviceTensor, Kernel, KernelArg, ScalarValue, median, time_launches};
use std::path::PathBuf;

/// How to check and time.
#[derive(Clone, Debug, Default)]
pub struct MeasureOptions {
    pub seed: u64,
    pub warmup: usize,
    pub iters: usize,
    pub rounds: usize,
    pub scalars: Vec<(String, String)>,
    /// Overrides of the output types' default tolerances.
    pub rtol: Option<f64>,
    pub atol: Option<f64>,
    /// `--reference NAME=FILE.npy`: the expected value of an output.
    pub references: Vec<(String, PathBuf)>,
}

/// A loaded configuration.
pub struct Candidate<'a> {
    pub kernel: &'a Kernel,
    /// `BN=256 STAGES=3`, to say which configuration the GPU failed on.
    pub label: String,
}

/// Medians over rounds, in microseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    pub median_us: f64,
    pub min_us: f64,
    pub max_us: f64,
}

/// What became of one configuration at one shape.
#[derive(Clone, Debug, PartialEq)]
pub enum Measured {
    /// Agreed with the reference (largest absolute error of its outputs) and was timed.
    Timed { timing: Timing, max_error: f64 },
    /// Output `param` differs from the reference; `at` is the worst element's coordinates.
    Wrong { param: String, mismatch: Mismatch, at: Vec<usize> },
    /// The launch check refuses this configuration at this shape (a divisibility its tiles need, a grid too
    /// large).
    Refused(String),
}

/// One tensor argument and how it is made again before a checked launch.
struct Arg {
    tensor: DeviceTensor,
    index: u64,
    random: bool,
    /// Written by the kernel: compared with the reference, poisoned before each checked launch.
    output: bool,
    /// Read too: its random data is restored before each checked launch.
    read: bool,
}

fn restore(args: &mut [Option<Arg>], seed: u64) -> Result<(), RunError> {
    for a in args.iter_mut().flatten() {
        if a.output && !(a.random && a.read) {
            a.tensor.fill_bytes(0xff)?;
        } else if a.random && a.output {
            a.tensor.fill_random(seed, a.index)?;
        }
    }
    Ok(())
}

fn kernel_args<'a>(args: &'a [Option<Arg>], scalars: &[ScalarValue]) -> Vec<KernelArg<'a>> {
    let mut scalars = scalars.iter();
    args.iter()
        .filter_map(|a| match a {
            Some(a) => Some(KernelArg::Tensor(&a.tensor)),
            // A manifest's scalars are as many as its scalar parameters: `parse_scalars` made one for each.
            None => scalars.next().map(|s| KernelArg::Scalar(*s)),
        })
        .collect()
}

/// Launches `kernel` once from restored arguments and returns its outputs' bytes, in parameter order.
fn checked_launch(
    kernel: &Kernel,
    args: &mut [Option<Arg>],
    scalars: &[ScalarValue],
    seed: u64,
) -> Result<Vec<(usize, Vec<u8>)>, RunError> {
    restore(args, seed)?;
    kernel.launch(&kernel_args(args, scalars))?;
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if let Some(a) = a
            && a.output
        {
            out.push((i, download(kernel.manifest().params[i].name(), &a.tensor)?));
        }
    }
    Ok(out)
}

/// Checks and times `candidates` at `shape` (the values of the kernel's dimensions); `baseline` is the index of
/// the reference configuration. `progress` is told what is being done. An error ends the tuning: the baseline
/// cannot run at this shape, or the GPU failed (a fault leaves a CUDA context unusable).
pub fn measure_shape(
    ctx: &Context,
    candidates: &[Candidate<'_>],
    baseline: usize,
    shape: &[(String, i64)],
    opts: &MeasureOptions,
    progress: &mut dyn FnMut(String),
) -> Result<Vec<Measured>, RunError> {
    let base = candidates.get(baseline).ok_or_else(|| RunError::Internal("no baseline configuration".into()))?;
    let manifest = base.kernel.manifest().clone();
    let run_opts = RunOptions {
        kernel: manifest.name.clone(),
        dims: shape.to_vec(),
        scalars: opts.scalars.clone(),
        seed: opts.seed,
        ..RunOptions::default()
    };
    let plan = plan_arguments(&manifest, &run_opts)?;
    let scalars = parse_scalars(&manifest, &run_opts)?;
    precheck_launch(&manifest, &run_opts, &plan, &scalars)?;

    // Which configurations this shape admits: the launch check of each one's own manifest (its launch clause
    // and requirements depend on its consts), on tensors of the baseline's shapes.
    let mut results: Vec<Option<Measured>> = vec![None; candidates.len()];
    for (c, slot) in candidates.iter().zip(results.iter_mut()) {
        let m = c.kernel.manifest();
        let same = m.params == manifest.params;
        let checked = plan_arguments(m, &run_opts).and_then(|p| {
            if p.sources
                .iter()
                .map(|s| s.as_ref().map(Source::shape))
                .ne(plan.sources.iter().map(|s| s.as_ref().map(Source::shape)))
            {
                return Err(RunError::Internal("its tensors' shapes differ from the default's".into()));
            }
            precheck_launch(m, &run_opts, &p, &scalars).map(drop)
        });
        *slot = match (same, checked) {
            (false, _) => Some(Measured::Refused("its parameters differ from the default's".into())),
            (true, Err(e)) => Some(Measured::Refused(e.to_string())),
            (true, Ok(())) => None,
        };
    }

    let needed: Vec<(&str, DType, &[usize])> = manifest
        .params
        .iter()
        .zip(&plan.sources)
        .filter_map(|(p, s)| s.as_ref().map(|s| (p.name(), p.dtype(), s.shape())))
        .collect();
    ctx.check_fits(&needed)?;
    let mut args: Vec<Option<Arg>> = Vec::new();
    for (index, (p, s)) in manifest.params.iter().zip(&plan.sources).enumerate() {
        let Some(s) = s else {
            args.push(None);
            continue;
        };
        let access = match p {
            Param::Tensor(t) => t.access,
            Param::Scalar(_) => Access::Read,
        };
        let mut tensor = DeviceTensor::zeros(ctx, p.dtype(), s.shape())?;
        let random = matches!(s, Source::Random { .. });
        if random {
            tensor.fill_random(opts.seed, index as u64)?;
        }
        let output = access != Access::Read;
        args.push(Some(Arg { tensor, index: index as u64, random, output, read: access != Access::Write }));
    }

    // The reference.
    progress(format!("running the default ({})", manifest.name));
    let mut reference = checked_launch(base.kernel, &mut args, &scalars, opts.seed)?;
    let mut from_files = false;
    for (name, path) in &opts.references {
        let Some(slot) = manifest.params.iter().position(|p| p.name() == name) else { continue };
        let elements = npy_to_elements(path, name, manifest.params[slot].dtype(), read_npy(path)?)?;
        if let Some(r) = reference.iter_mut().find(|(i, _)| *i == slot) {
            if r.1.len() != elements.len() {
                return Err(RunError::Npy {
                    path: path.clone(),
                    message: format!(
                        "the reference of `{name}` has {} bytes of elements; `{name}` has {}",
                        elements.len(),
                        r.1.len()
                    ),
                });
            }
            r.1 = elements;
            from_files = true;
        }
    }
    let tolerance = |dtype: DType| {
        let d = default_tolerance(dtype);
        Tolerance { rtol: opts.rtol.unwrap_or(d.rtol), atol: opts.atol.unwrap_or(d.atol) }
    };
    let shapes: Vec<Vec<usize>> =
        plan.sources.iter().map(|s| s.as_ref().map(|s| s.shape().to_vec()).unwrap_or_default()).collect();
    let judge = |outputs: &[(usize, Vec<u8>)]| -> Measured {
        let mut max_error: f64 = 0.0;
        for ((i, got), (_, want)) in outputs.iter().zip(&reference) {
            let dtype = manifest.params[*i].dtype();
            let checked = compare_all(dtype, got, want, tolerance(dtype));
            if let Some(mismatch) = checked.mismatch {
                let at = unravel(mismatch.index, &shapes[*i]);
                return Measured::Wrong { param: manifest.params[*i].name().to_owned(), mismatch, at };
            }
            max_error = max_error.max(checked.max_abs_error);
        }
        let timing = Timing { median_us: f64::NAN, min_us: f64::NAN, max_us: f64::NAN };
        Measured::Timed { timing, max_error }
    };
    let base_outputs =
        if from_files { checked_launch(base.kernel, &mut args, &scalars, opts.seed)? } else { reference.clone() };
    let base_result = judge(&base_outputs);
    if results[baseline].is_none() {
        results[baseline] = Some(base_result);
    }
    let total = candidates.len();
    for (k, c) in candidates.iter().enumerate() {
        if k == baseline || results[k].is_some() {
            continue;
        }
        progress(format!("checking {}/{total}", k + 1));
        // A fault leaves the CUDA context unusable: the tuning ends here, naming the configuration.
        let outputs = checked_launch(c.kernel, &mut args, &scalars, opts.seed).inspect_err(|_| {
            eprintln!(
                "cutec tune: configuration {} failed on the GPU at {}",
                c.label,
                super::space::spell_shape(shape)
            );
        })?;
        results[k] = Some(judge(&outputs));
    }

    // Interleaved timing of the survivors.
    let survivors: Vec<usize> = (0..total).filter(|&k| matches!(results[k], Some(Measured::Timed { .. }))).collect();
    let mut samples: Vec<Vec<f32>> = vec![Vec::new(); total];
    let launch_args = kernel_args(&args, &scalars);
    for round in 0..opts.rounds.max(1) {
        progress(format!("timing round {}/{}", round + 1, opts.rounds.max(1)));
        for j in 0..survivors.len() {
            let k = survivors[(j + round) % survivors.len()];
            let times = time_launches(candidates[k].kernel, &launch_args, opts.warmup, opts.iters.max(1))?;
            samples[k].push(median(&times).unwrap_or(f32::NAN));
        }
    }
    for (k, s) in samples.iter().enumerate() {
        if let Some(Measured::Timed { timing, .. }) = &mut results[k] {
            let us = |ms: f32| f64::from(ms) * 1e3;
            timing.median_us = median(s).map_or(f64::NAN, us);
            timing.min_us = us(s.iter().copied().fold(f32::INFINITY, f32::min));
            timing.max_us = us(s.iter().copied().fold(0.0, f32::max));
        }
    }
    Ok(results.into_iter().map(|r| r.unwrap_or(Measured::Refused("not measured".into()))).collect())
}
