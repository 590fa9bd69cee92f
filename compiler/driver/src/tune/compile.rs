//! Compiling a sweep's configurations in parallel: `build_source` in memory on worker threads, then ptxas on
//! the same workers where it is installed (a cubin loads in milliseconds; the driver's JIT takes a GEMM's PTX in
//! a good part of a second, one module after another).
//!
//! Each configuration is an independent build (its own LLVM context), so the workers share nothing but a counter
//! of the next configuration to take. A configuration that does not compile (shared memory over the budget, a
//! tile the layout does not divide) is a result, not an error: its first diagnostic says why.

use crate::DefineValue;
use crate::build::{BuildOptions, build_source};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The stack of a compiling thread: the `cutec` binary's (see its `main.rs`), since the compiler recurses over
/// trees whose depth only the parser and the lowering bound.
const STACK_BYTES: usize = 64 << 20;

/// A configuration that compiled.
#[derive(Clone, Debug)]
pub struct Built {
    pub ptx: String,
    pub manifest: cutec_manifest::Manifest,
    /// Machine code, when ptxas assembled it.
    pub cubin: Option<Vec<u8>>,
    /// Codes of the warnings the build reported (ptxas's E0440 advisories among them).
    pub warnings: Vec<&'static str>,
    /// The IR after the pass pipeline, which `--cpu` interprets.
    pub scheduled: cutec_ir::Module,
}

/// Why a configuration was skipped: the code and message of its first error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub code: &'static str,
    pub message: String,
}

pub type Outcome = Result<Built, Skipped>;

/// Runs `work` over `items` on `jobs` threads with large stacks, results in the order of `items`; `tick` is
/// called after each item with the number done. Falls back to the calling thread if no thread can be started.
pub fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    work: &(dyn Fn(&T) -> R + Sync),
    tick: &(dyn Fn(usize) + Sync),
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    let worker = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { break };
            let r = work(item);
            if let Ok(mut slot) = results[i].lock() {
                *slot = Some(r);
            }
            tick(done.fetch_add(1, Ordering::Relaxed) + 1);
        }
    };
    let worker = &worker;
    std::thread::scope(|s| {
        let mut started = 0;
        for k in 0..jobs.clamp(1, items.len().max(1)) {
            let b = std::thread::Builder::new().name(format!("cutec-tune-{k}")).stack_size(STACK_BYTES);
            if b.spawn_scoped(s, worker).is_ok() {
                started += 1;
            }
        }
        if started == 0 {
            worker();
        }
    });
    // Every index below `items.len()` was taken by a worker that filled its slot before counting it.
    results.into_iter().filter_map(|m| m.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner)).collect()
}

/// Compiles kernel `kernel` of `source` once per configuration (each a list of `-D` values added to `base`'s),
/// on `jobs` threads; then assembles the PTX with ptxas if `assemble`. Returns each configuration's outcome and
/// the wall time of each phase (the second `None` when nothing was assembled).
pub fn compile_all(
    name: &str,
    source: &str,
    base: &BuildOptions,
    configs: &[Vec<(String, DefineValue)>],
    jobs: usize,
    assemble: bool,
    tick: &(dyn Fn(&str, usize) + Sync),
) -> (Vec<Outcome>, f64, Option<f64>) {
    let start = Instant::now();
    let build = |defines: &Vec<(String, DefineValue)>| -> Outcome {
        let mut opts = base.clone();
        opts.defines.extend(defines.iter().cloned());
        match build_source(name, source, &opts) {
            Ok((_, art)) => Ok(Built {
                ptx: art.ptx,
                manifest: art.manifest,
                scheduled: art.scheduled,
                cubin: None,
                warnings: art.warnings.iter().map(|w| w.code).collect(),
            }),
            Err(f) => {
                let first = f.diagnostics.iter().find(|d| d.is_error()).or(f.diagnostics.first());
                Err(first.map_or_else(
                    || Skipped {
                        code: crate::codes::INTERNAL,
                        message: "the build failed without a diagnostic".into(),
                    },
                    |d| Skipped { code: d.code, message: d.message.clone() },
                ))
            }
        }
    };
    let mut outcomes = parallel_map(configs, jobs, &build, &|n| tick("compiling", n));
    let compile_s = start.elapsed().as_secs_f64();
    if !assemble {
        return (outcomes, compile_s, None);
    }
    let start = Instant::now();
    let ptxas = |o: &Outcome| -> Option<Outcome> {
        let built = o.as_ref().ok()?;
        Some(match cutec_codegen::assemble_with_ptxas(&built.ptx) {
            Ok(r) => {
                let mut b = built.clone();
                b.cubin = Some(r.cubin);
                if !r.warnings.is_empty() {
                    b.warnings.push(crate::codes::PTXAS_ADVISORY);
                }
                Ok(b)
            }
            Err(e) => Err(Skipped { code: crate::codes::BUILD_CANNOT_PROCEED, message: format!("ptxas failed: {e}") }),
        })
    };
    let assembled = parallel_map(&outcomes, jobs, &ptxas, &|n| tick("assembling", n));
    for (o, a) in outcomes.iter_mut().zip(assembled) {
        if let Some(a) = a {
            *o = a;
        }
    }
    (outcomes, compile_s, Some(start.elapsed().as_secs_f64()))
}
