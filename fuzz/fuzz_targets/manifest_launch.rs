//! `cutec run MODULE --manifest M.json --dim NAME=VALUE`: any manifest text is loaded or refused with a
//! `ManifestError`; for a loaded one, every kernel's arguments made from the layouts with any dimension values go
//! through the memory check and the launch check (dimension binding, shapes, alignment, launch expressions) to a
//! plan or an error, never a panic.
//!
//! Input: the manifest JSON, then optionally a NUL byte and the dimension values as 8-byte little-endian integers
//! (default 1000, 777, 333). The `--dim NAME=VALUE` text itself is parsed by the driver (which links LLVM); the
//! mutation tests (`tests/suite/mutation_run.rs`) cover it.
#![no_main]

use cutec_manifest::{Entry, Manifest, Param};
use cutec_runtime::{ArgDesc, ScalarValue, TensorDesc, check_fits, check_launch};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (json, dims) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let Ok(json) = std::str::from_utf8(json) else { return };
    let mut values: Vec<i64> =
        dims.chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().unwrap_or_default())).collect();
    if values.is_empty() {
        values = vec![1000, 777, 333];
    }
    let Ok(manifest) = Manifest::from_json(json) else { return };
    assert!(manifest.validate().is_ok(), "from_json returned a manifest that does not validate");
    for kernel in &manifest.kernels {
        let dim_value = |name: &str| {
            let i = kernel.dims.iter().position(|d| d.name == name).unwrap_or(0);
            values[i % values.len()]
        };
        let mut args = Vec::new();
        let mut sizes = Vec::new();
        for (i, param) in kernel.params.iter().enumerate() {
            match param {
                Param::Scalar(s) => {
                    args.push(ArgDesc::Scalar(ScalarValue::parse(s.dtype, "1").unwrap_or(ScalarValue::I32(1))))
                }
                Param::Tensor(t) => {
                    // As `cutec run` makes a tensor without an input file: each mode's extent is the product of
                    // its leaves, static or dimension values.
                    let mut shape = Vec::new();
                    for mode in t.layout.shape.modes() {
                        let extent = mode.leaves().iter().try_fold(1i64, |acc, leaf| match leaf {
                            Entry::Int(v) => acc.checked_mul(*v),
                            Entry::Dim(name) => acc.checked_mul(dim_value(name)),
                        });
                        let Some(extent) = extent else { return };
                        shape.push(extent);
                    }
                    let Some(strides) = TensorDesc::row_major_strides(&shape) else { return };
                    let len = shape.iter().try_fold(1u64, |a, &e| a.checked_mul(u64::try_from(e).ok()?));
                    let Some(len) = len else { return };
                    let usize_shape: Vec<usize> = shape.iter().map(|&e| e as usize).collect();
                    sizes.push((t.name.clone(), t.dtype, usize_shape));
                    let ptr = (i as u64 + 1) << 40;
                    args.push(ArgDesc::Tensor(TensorDesc { dtype: t.dtype, shape, strides, ptr, len, device: 0 }));
                }
            }
        }
        let shapes: Vec<(&str, _, &[usize])> = sizes.iter().map(|(n, d, s)| (n.as_str(), *d, s.as_slice())).collect();
        let _ = check_fits(&shapes, 80 << 30, 140 << 30, 0, "fuzz");
        if let Ok(plan) = check_launch(kernel, 0, &args) {
            assert!(plan.grid.iter().chain(&plan.block).all(|&d| d > 0), "a launch with an empty grid or block");
        }
    }
});
