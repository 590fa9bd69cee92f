//! The interpreter never panics: every kernel of the IR's hand-written test files (`compiler/ir/tests`, which
//! exercise every statement and operation, pipelined rings, roles, clusters) runs on made-up arguments, and
//! whatever it does — finish, or stop with an error — it returns.

use cutec_interp::{Arg, Launch, Options, TensorMap, TmaSwizzle, run};
use cutec_ir::{AddrSpace, Type};
use std::path::{Path, PathBuf};

fn ir_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            ir_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "ir") {
            out.push(p);
        }
    }
}

/// Arguments for `params`: 64 KiB of zeros per pointer, 3 for every scalar (a small trip count), and 2-D f32
/// tensor maps of 64 x 64 over the first pointer parameter.
fn made_up_args(params: &[cutec_ir::Param]) -> Vec<Arg> {
    let first_buffer = params.iter().position(|p| matches!(p.ty, Type::Ptr(s) if s != AddrSpace::Param));
    params
        .iter()
        .map(|p| match p.ty {
            Type::Ptr(AddrSpace::Param) => Arg::TensorMap(TensorMap {
                tensor: first_buffer.unwrap_or(0) as u32,
                elem_bytes: 4,
                dims: vec![64, 64],
                strides: vec![256],
                box_dims: vec![32, 32],
                element_strides: vec![1, 1],
                swizzle: TmaSwizzle::None,
                oob_nan: false,
            }),
            Type::Ptr(_) => Arg::Buffer(vec![0; 64 << 10]),
            Type::Scalar(_) | Type::Vector { .. } => Arg::Scalar(3),
        })
        .collect()
}

#[test]
fn every_ir_test_kernel_runs_or_stops_with_an_error() {
    let mut files = Vec::new();
    ir_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../ir/tests"), &mut files);
    files.sort();
    let (mut ran, mut finished) = (0, 0);
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        // Fixtures of passes hold their input and expected output in one file; the ones that parse as a module
        // are run.
        let Ok(module) = cutec_ir::parse(&text) else { continue };
        for k in &module.kernels {
            let cluster = k.cluster.unwrap_or([1, 1, 1]);
            let launch = Launch { grid: cluster, block: k.block_size.unwrap_or([128, 1, 1]), cluster };
            let mut args = made_up_args(&k.params);
            let options = Options { max_steps: 5_000_000, ..Options::default() };
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run(&module, &k.name, launch, &mut args, options)
            }));
            let Ok(result) = result else { panic!("{}: kernel `{}` panicked", file.display(), k.name) };
            ran += 1;
            finished += usize::from(result.is_ok());
        }
    }
    assert!(ran >= 20, "only {ran} kernels ran");
    eprintln!("{ran} kernels of the IR's tests run, {finished} to the end");
}
