//! Tensor maps planned from manifests and argument descriptions, without a GPU.

use cutec_manifest::{DType, Manifest, TmaL2Promotion, TmaOobFill, TmaSwizzle};
use serde_json::json;

use super::*;
use crate::args::{TensorDesc, check_launch};
use crate::tensor_map::TensorMapDesc;

const BASE: u64 = 0x7f00_0000_0000;

/// `k(a: dtype (M, K):(K, 1))` with `maps`, one block per 128 rows.
fn gemm_operand(dtype: &str, maps: serde_json::Value) -> Kernel {
    let m = json!({
        "format_version": 1, "target": "sm_90a", "module": "k.ptx",
        "kernels": [{ "name": "k",
            "params": [{ "kind": "tensor", "name": "a", "dtype": dtype, "space": "gmem",
                         "layout": { "shape": ["M", "K"], "stride": ["K", 1] }, "align_bytes": 16 }],
            "dims": [{ "name": "M", "type": "i32", "from": { "param": "a", "mode": 0 } },
                     { "name": "K", "type": "i32", "from": { "param": "a", "mode": 1 } }],
            "launch": { "grid": [{ "op": "ceil_div", "args": ["M", 128] }], "block": [128] },
            "tensor_maps": maps }]
    });
    match Manifest::from_json(&m.to_string()) {
        Ok(m) => m.kernels[0].clone(),
        Err(e) => panic!("test manifest invalid: {e}"),
    }
}

fn a_map(box_shape: [u32; 2], swizzle: &str) -> serde_json::Value {
    json!([{ "name": "a_tma", "tensor": "a", "modes": [1, 0], "box": box_shape, "swizzle": swizzle,
             "l2_promotion": "256B", "oob_fill": "zero" }])
}

fn tensor(dtype: DType, shape: &[i64], strides: &[i64], ptr: u64) -> ArgDesc {
    ArgDesc::Tensor(TensorDesc {
        dtype,
        shape: shape.to_vec(),
        strides: strides.to_vec(),
        ptr,
        len: 1 << 40,
        device: 0,
    })
}

fn refusal(kernel: &Kernel, args: &[ArgDesc]) -> String {
    match tensor_map_desc(kernel, &kernel.tensor_maps[0], args) {
        Ok(planned) => panic!("expected a refusal, got {planned:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_gemm_operand_becomes_its_map_innermost_mode_first() {
    let k = gemm_operand("bf16", a_map([64, 128], "128B"));
    let args = [tensor(DType::Bf16, &[1000, 784], &[784, 1], BASE)];
    let plan = check_launch(&k, 0, &args).expect("a valid launch");
    let want = TensorMapDesc {
        dtype: DType::Bf16,
        global_dims: vec![784, 1000],
        global_strides: vec![784 * 2],
        box_dims: vec![64, 128],
        element_strides: vec![1, 1],
        swizzle: TmaSwizzle::B128,
        l2_promotion: TmaL2Promotion::B256,
        oob_fill: TmaOobFill::Zero,
    };
    assert_eq!(plan.tensor_maps, [PlannedTensorMap { name: "a_tma".into(), desc: want, address: BASE }]);
    // The pointer and the dims stay the PTX parameters before the map.
    assert_eq!(plan.params.len(), 3);
}

#[test]
fn the_element_type_is_the_tensors() {
    for (dtype, elements) in
        [("f32", 32), ("f16", 64), ("f64", 16), ("i32", 32), ("u32", 32), ("i64", 16), ("e4m3", 128), ("bool", 16)]
    {
        let k = gemm_operand(dtype, a_map([elements, 8], "128B"));
        let d: DType = dtype.parse().expect("a dtype");
        let planned = tensor_map_desc(&k, &k.tensor_maps[0], &[tensor(d, &[100, 256], &[256, 1], BASE)])
            .unwrap_or_else(|e| panic!("{dtype}: {e}"));
        assert_eq!(planned.desc.dtype, d);
        assert_eq!(planned.desc.global_strides, [256 * u64::from(d.size_bytes())], "{dtype}");
    }
}

#[test]
fn only_the_listed_modes_are_dimensions_and_an_extent_1_mode_has_stride_0() {
    // x: (B, M, 64):(S, 64, 1) with S from the argument; the map takes modes 2 and 1 (one batch at a time).
    let m = json!({
        "format_version": 1, "target": "sm_90a", "module": "k.ptx",
        "kernels": [{ "name": "k",
            "params": [{ "kind": "tensor", "name": "x", "dtype": "f16", "space": "gmem",
                         "layout": { "shape": ["B", "M", 64], "stride": ["S", 64, 1] }, "align_bytes": 16 }],
            "dims": [{ "name": "B", "type": "i32", "from": { "param": "x", "mode": 0 } },
                     { "name": "M", "type": "i32", "from": { "param": "x", "mode": 1 } },
                     { "name": "S", "type": "i64", "from": { "param": "x", "mode": 0, "of": "stride" } }],
            "launch": { "grid": ["B"], "block": [128] },
            "tensor_maps": [{ "name": "x_tma", "tensor": "x", "modes": [2, 1, 0], "box": [64, 32, 1],
                              "swizzle": "128B", "l2_promotion": "none", "oob_fill": "nan" }] }]
    });
    let k = Manifest::from_json(&m.to_string()).expect("valid").kernels[0].clone();
    let planned = |shape: &[i64], strides: &[i64]| {
        check_launch(&k, 0, &[tensor(DType::F16, shape, strides, BASE)]).map(|p| p.tensor_maps[0].desc.clone())
    };
    let d = planned(&[3, 100, 64], &[6400, 64, 1]).expect("valid");
    assert_eq!((d.global_dims, d.global_strides), (vec![64, 100, 3], vec![128, 12800]));
    assert_eq!((d.box_dims, d.oob_fill), (vec![64, 32, 1], TmaOobFill::Nan));
    // One batch: torch's stride for it is whatever; the map's is 0.
    let d = planned(&[1, 100, 64], &[6401, 64, 1]).expect("an extent-1 mode's stride does not matter");
    assert_eq!(d.global_strides, [128, 0]);
    // Mode 0 is not listed: only modes 1 and 2 are dimensions of a two-mode map.
    let mut two = k.clone();
    two.tensor_maps[0].modes = vec![2, 1];
    two.tensor_maps[0].box_shape = vec![64, 32];
    let p = tensor_map_desc(&two, &two.tensor_maps[0], &[tensor(DType::F16, &[3, 100, 64], &[6408, 64, 1], BASE)])
        .expect("the batch stride is not the map's business");
    assert_eq!((p.desc.global_dims, p.desc.global_strides), (vec![64, 100], vec![128]));
}

#[test]
fn a_row_stride_that_is_not_a_multiple_of_16_bytes_is_refused_naming_the_map_the_tensor_and_the_mode() {
    let k = gemm_operand("bf16", a_map([64, 128], "128B"));
    let e = check_launch(&k, 0, &[tensor(DType::Bf16, &[1000, 777], &[777, 1], BASE)]).expect_err("refused");
    assert_eq!(
        e,
        ArgError::TensorMap {
            map: "a_tma".into(),
            tensor: "a".into(),
            refusal: TensorMapRefusal::Stride { mode: 0, bytes: 1554 }
        }
    );
    assert_eq!(
        e.to_string(),
        "tensor map `a_tma` of `a`: the stride of mode 0 is 1554 bytes; TMA needs a multiple of 16 bytes"
    );
}

#[test]
fn extents_strides_and_addresses_the_driver_refuses_are_named() {
    let k = gemm_operand("bf16", a_map([64, 128], "128B"));
    let cases: [(&[i64], &[i64], u64, &str); 6] = [
        // An empty tensor: its extent of 0 is what TMA cannot take (an extent-0 mode's stride is not looked at).
        (&[0, 784], &[-1, 1], BASE, "mode 0 has extent 0; TMA needs 1 to 2^32"),
        (&[16, 0], &[784, 1], BASE, "mode 1 has extent 0; TMA needs 1 to 2^32"),
        (&[(1 << 32) + 1, 784], &[784, 1], BASE, "mode 0 has extent 4294967297; TMA needs 1 to 2^32"),
        (
            &[16, 784],
            &[1 << 39, 1],
            BASE,
            "the stride of mode 0 is 1099511627776 bytes; TMA needs less than 2^40 bytes",
        ),
        (&[16, 784], &[-784, 1], BASE, "the stride of mode 0 is -1568 bytes; TMA needs a non-negative stride"),
        (&[16, 784], &[784, 1], BASE + 8, "the address 0x7f0000000008 is not a multiple of 16"),
    ];
    for (shape, strides, ptr, says) in cases {
        let e = refusal(&k, &[tensor(DType::Bf16, shape, strides, ptr)]);
        assert!(e.starts_with("tensor map `a_tma` of `a`: ") && e.contains(says), "expected `{says}` in `{e}`");
    }
    // Through the whole launch check too: an empty tensor is no launch error of its own, its map is.
    let e = check_launch(&k, 0, &[tensor(DType::Bf16, &[0, 784], &[784, 1], BASE)]).expect_err("refused");
    assert!(matches!(e, ArgError::TensorMap { refusal: TensorMapRefusal::Extent { mode: 0, extent: 0 }, .. }), "{e}");
}

#[test]
fn rules_of_the_map_itself_still_refuse_an_unvalidated_manifest() {
    let mut k = gemm_operand("bf16", a_map([64, 128], "128B"));
    k.tensor_maps[0].box_shape = vec![4, 128];
    let args = [tensor(DType::Bf16, &[16, 784], &[784, 1], BASE)];
    assert_eq!(
        refusal(&k, &args),
        "tensor map `a_tma` of `a`: the box's inner row is 8 bytes; TMA moves rows of a multiple of 16 bytes"
    );
    k.tensor_maps[0].box_shape = vec![64];
    assert!(refusal(&k, &args).contains("box_dims has 1 entries"));
    k.tensor_maps[0].tensor = "b".into();
    assert_eq!(refusal(&k, &args), "inconsistent manifest: tensor map `a_tma`: `b` is not a tensor argument");
    let mut k = gemm_operand("bf16", a_map([64, 128], "128B"));
    k.tensor_maps[0].modes = vec![0, 1];
    let e = refusal(&k, &args);
    assert!(e.contains("the innermost mode 0 of `a` has stride 784"), "{e}");
}
