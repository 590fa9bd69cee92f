//! `cutec tune --compile-only --cpu`: the check `tune` makes on the GPU, without one. Every configuration that
//! built runs on the CPU (the interpreter of its scheduled IR, `cutec run --cpu`) at each shape on the same
//! seeded inputs, and its outputs are compared with the default configuration's within the tolerance of their
//! type (`check.rs`). A configuration that races, deadlocks or leaves its tensors disagrees.

use super::check::{Tolerance, compare_all, default_tolerance};
use super::compile::Outcome;
use super::space::{Config, Shape, spell_shape};
use crate::run::{CpuOptions, RunOptions, run_cpu_outputs};
use std::io::Write;

/// What the check runs with: the kernel, its scalars, the seed of the inputs, the tolerance if given.
pub struct CpuCheck<'a> {
    pub kernel: &'a str,
    pub scalars: &'a [(String, String)],
    pub seed: u64,
    pub rtol: Option<f64>,
    pub atol: Option<f64>,
}

/// Checks every built configuration against `baseline`'s outputs at every shape, one line each on `out`;
/// whether all agreed.
pub fn check_on_cpu(
    check: &CpuCheck<'_>,
    configs: &[Config],
    outcomes: &[Outcome],
    baseline: usize,
    shapes: &[Shape],
    out: &mut dyn Write,
) -> std::io::Result<bool> {
    let mut all_agree = true;
    for shape in shapes {
        let opts = RunOptions {
            kernel: check.kernel.to_string(),
            dims: shape.clone(),
            scalars: check.scalars.to_vec(),
            seed: check.seed,
            ..RunOptions::default()
        };
        let run = |o: &Outcome| match o {
            Ok(built) => run_cpu_outputs(&opts, CpuOptions::default(), &built.scheduled, &built.manifest)
                .map_err(|e| e.to_string()),
            Err(_) => Err("not built".to_string()),
        };
        let shape_text = spell_shape(shape);
        let reference = match outcomes.get(baseline).map(run) {
            Some(Ok(r)) => r,
            other => {
                let e = match other {
                    Some(Err(e)) => e,
                    _ => "no build".to_string(),
                };
                writeln!(out, "cpu {shape_text}: the default configuration fails on the CPU: {e}")?;
                all_agree = false;
                continue;
            }
        };
        for (k, (config, outcome)) in configs.iter().zip(outcomes).enumerate() {
            if k == baseline || outcome.is_err() {
                continue;
            }
            let verdict = match run(outcome) {
                Err(e) => Some(format!("fails: {e}")),
                Ok(outputs) => outputs.iter().zip(&reference).find_map(|((name, dtype, got), (_, _, want))| {
                    let d = default_tolerance(*dtype);
                    let tol = Tolerance { rtol: check.rtol.unwrap_or(d.rtol), atol: check.atol.unwrap_or(d.atol) };
                    compare_all(*dtype, got, want, tol).mismatch.map(|m| {
                        format!(
                            "`{name}` differs in {} of {} elements (element {}: {} for {})",
                            m.count, m.total, m.index, m.got, m.want
                        )
                    })
                }),
            };
            match verdict {
                None => writeln!(out, "cpu {shape_text} {}: agrees with the default", config.label())?,
                Some(why) => {
                    all_agree = false;
                    writeln!(out, "cpu {shape_text} {}: {why}", config.label())?;
                }
            }
        }
    }
    Ok(all_agree)
}
