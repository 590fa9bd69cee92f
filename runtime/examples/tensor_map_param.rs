//! GPU check of how a launch passes a TMA tensor map: the 128 bytes after the pointers and the dims, in a
//! 64-byte-aligned `.param .align 64 .b8 NAME[128]` (the PTX side of a `__grid_constant__ CUtensorMap`). Run on the
//! GPU machine by `scripts/gpu/first_light.sh` as `tensor_map_param`.
//!
//! A hand-written kernel `mapcopy(x, y, N, x_tma)` copies the bytes of its tensor-map parameter into `y`; they must
//! equal the bytes the runtime encodes for `x` (whose extent `N` is in the map, so the dims before the map must
//! be where the kernel reads them too), through a plain launch, the cached launch and a prepared, timed one. A
//! row of 1001 f32 (4004 bytes) must be refused before any launch. Exits 1 on the first surprise.

use cutec_manifest::{DType, Manifest};
use cutec_runtime::{Context, DeviceTensor, KernelArg, Module, time_launches};

const MANIFEST: &str = r#"{
  "format_version": 1, "target": "sm_90a", "module": "mapcopy.ptx",
  "kernels": [{ "name": "mapcopy",
    "params": [
      { "kind": "tensor", "name": "x", "dtype": "f32", "space": "gmem",
        "layout": { "shape": [4, "N"], "stride": ["N", 1] }, "align_bytes": 16, "access": "read" },
      { "kind": "tensor", "name": "y", "dtype": "u8", "space": "gmem",
        "layout": { "shape": [128], "stride": [1] }, "align_bytes": 16, "access": "write" }
    ],
    "dims": [{ "name": "N", "type": "i32", "from": { "param": "x", "mode": 1 } }],
    "launch": { "grid": [1], "block": [1] },
    "tensor_maps": [{ "name": "x_tma", "tensor": "x", "modes": [1, 0], "box": [32, 4],
                      "swizzle": "128B", "l2_promotion": "128B", "oob_fill": "zero" }] }]
}"#;

/// `mapcopy`: one thread stores the 16 eight-byte words of `x_tma` at `y`.
fn ptx() -> String {
    let copies: String = (0..16)
        .map(|i| format!("\tld.param.u64 %rd3, [x_tma+{o}];\n\tst.global.u64 [%rd2+{o}], %rd3;\n", o = 8 * i))
        .collect();
    format!(
        ".version 8.0\n.target sm_90a\n.address_size 64\n\n.visible .entry mapcopy(\n\t.param .u64 x,\n\t.param .u64 y,\n\
         \t.param .s32 N,\n\t.param .align 64 .b8 x_tma[128]\n)\n{{\n\t.reg .b64 %rd<4>;\n\tld.param.u64 %rd1, [y];\n\
         \tcvta.to.global.u64 %rd2, %rd1;\n{copies}\tret;\n}}\n"
    )
}

fn run() -> Result<(), String> {
    let e = |e: cutec_runtime::RuntimeError| e.to_string();
    let manifest = Manifest::from_json(MANIFEST).map_err(|e| e.to_string())?;
    let ctx = Context::new(0).map_err(e)?;
    let module = Module::load_ptx(&ctx, &ptx(), manifest).map_err(e)?;
    let kernel = module.kernel("mapcopy").map_err(e)?;
    let mut y = DeviceTensor::zeros(&ctx, DType::U8, &[128]).map_err(e)?;
    for n in [1024usize, 4096, 1000] {
        let x = DeviceTensor::zeros(&ctx, DType::F32, &[4, n]).map_err(e)?;
        let args = [KernelArg::Tensor(&x), KernelArg::Tensor(&y)];
        let plan = kernel.plan(&args).map_err(e)?;
        let map = &plan.tensor_maps[0];
        let want = map.desc.encode(map.address).map_err(e)?.bytes;
        for how in ["launch", "cached launch", "prepared, timed launches"] {
            y.fill_bytes(0).map_err(e)?;
            let args = [KernelArg::Tensor(&x), KernelArg::Tensor(&y)];
            match how {
                "prepared, timed launches" => drop(time_launches(&kernel, &args, 1, 3).map_err(e)?),
                _ => kernel.launch(&args).map_err(e)?,
            }
            let got = y.to_bytes().map_err(e)?;
            if got != want {
                return Err(format!("N = {n}, {how}: the kernel read\n{got:02x?}\nbut the map is\n{want:02x?}"));
            }
        }
        println!(
            "N = {n}: the kernel's x_tma is the encoded map ({:?}, box {:?})",
            map.desc.global_dims, map.desc.box_dims
        );
    }
    let x = DeviceTensor::zeros(&ctx, DType::F32, &[4, 1001]).map_err(e)?;
    match kernel.launch(&[KernelArg::Tensor(&x), KernelArg::Tensor(&y)]) {
        Err(err) if err.to_string().contains("the stride of mode 0 is 4004 bytes") => println!("refused: {err}"),
        Err(err) => return Err(format!("N = 1001 refused for another reason: {err}")),
        Ok(()) => return Err("N = 1001 (rows of 4004 bytes) was launched".into()),
    }
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("tensor_map_param: {e}");
        std::process::exit(1);
    }
    println!("tensor_map_param: PASS");
}
