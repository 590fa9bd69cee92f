//! GPU smoke test of `Kernel::launch`'s cache of the last checked arguments: run on the GPU machine by
//! `scripts/gpu/first_light.sh` as `launch_check .gpu/copy.ptx .gpu/copy.json`.
//!
//! Launches copy with arguments A, then with arguments B whose shapes disagree (must be refused even though A's
//! plan is cached), then with a new, correct pair C (must be checked and run), then A again (cached), checking
//! every output. Exits 1 on the first surprise.

use cutec_manifest::{DType, Manifest};
use cutec_runtime::{Context, DeviceTensor, KernelArg, Module};

fn floats(n: usize, seed: u32) -> Vec<u8> {
    (0..n)
        .map(|i| ((i as u32).wrapping_mul(2654435761) ^ seed) as f32 / u32::MAX as f32)
        .flat_map(f32::to_le_bytes)
        .collect()
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let (ptx, json) = (args.next().ok_or("usage: launch_check PTX MANIFEST")?, args.next().ok_or("missing MANIFEST")?);
    let ptx = std::fs::read_to_string(&ptx).map_err(|e| format!("{ptx}: {e}"))?;
    let manifest = Manifest::from_json(&std::fs::read_to_string(&json).map_err(|e| format!("{json}: {e}"))?)
        .map_err(|e| e.to_string())?;
    let ctx = Context::new(0).map_err(|e| e.to_string())?;
    let module = Module::load_ptx(&ctx, &ptx, manifest).map_err(|e| e.to_string())?;
    let kernel = module.kernel("copy").map_err(|e| e.to_string())?;
    let tensor = |n: usize, seed: u32| DeviceTensor::from_bytes(&ctx, DType::F32, &[n], &floats(n, seed));
    let e = |e: cutec_runtime::RuntimeError| e.to_string();
    let (xa, ya) = (tensor(5000, 1).map_err(e)?, tensor(5000, 2).map_err(e)?);
    let (xb, yb) = (tensor(5000, 3).map_err(e)?, tensor(4000, 4).map_err(e)?);
    let (xc, yc) = (tensor(3001, 5).map_err(e)?, tensor(3001, 6).map_err(e)?);
    kernel.launch(&[KernelArg::Tensor(&xa), KernelArg::Tensor(&ya)]).map_err(e)?;
    match kernel.launch(&[KernelArg::Tensor(&xb), KernelArg::Tensor(&yb)]) {
        Err(err) => println!("refused as expected: {err}"),
        Ok(()) => return Err("x[5000] -> y[4000] was launched: the cached plan was used for other arguments".into()),
    }
    kernel.launch(&[KernelArg::Tensor(&xc), KernelArg::Tensor(&yc)]).map_err(e)?;
    kernel.launch(&[KernelArg::Tensor(&xa), KernelArg::Tensor(&ya)]).map_err(e)?;
    ctx.synchronize().map_err(e)?;
    for (x, y, name) in [(&xa, &ya, "A"), (&xc, &yc, "C")] {
        if x.to_bytes().map_err(e)? != y.to_bytes().map_err(e)? {
            return Err(format!("copy {name} is wrong"));
        }
    }
    println!("launch cache: refused mismatched arguments, ran new and repeated ones correctly");
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("launch_check: {e}");
        std::process::exit(1);
    }
}
