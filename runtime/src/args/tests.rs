use cutec_manifest::{DType, Manifest};
use serde_json::json;

use super::*;

const BASE: u64 = 0x7f00_0000_0000;

fn kernel(params: serde_json::Value, dims: serde_json::Value, launch: serde_json::Value) -> Kernel {
    let m = json!({
        "format_version": 1, "target": "sm_90a", "module": "k.ptx",
        "kernels": [{ "name": "k", "params": params, "dims": dims, "launch": launch }]
    });
    match Manifest::from_json(&m.to_string()) {
        Ok(m) => m.kernels[0].clone(),
        Err(e) => panic!("test manifest invalid: {e}"),
    }
}

/// softmax(x: f32[M, 4096], y: f32[M, 4096], scale: f32), 4 rows per block of 128 threads.
fn softmax() -> Kernel {
    let t = |name: &str| {
        json!({ "kind": "tensor", "name": name, "dtype": "f32", "space": "gmem",
                "layout": { "shape": ["M", 4096], "stride": [4096, 1] }, "align_bytes": 16 })
    };
    kernel(
        json!([t("x"), t("y"), { "kind": "scalar", "name": "scale", "dtype": "f32" }]),
        json!([{ "name": "M", "type": "i32", "from": { "param": "x", "mode": 0 } }]),
        json!({ "grid": [{ "op": "ceil_div", "args": ["M", 4] }], "block": [128],
                "smem_bytes": { "op": "mul", "args": [4, 4096] } }),
    )
}

fn tensor(dtype: DType, shape: &[i64], ptr: u64) -> ArgDesc {
    ArgDesc::Tensor(TensorDesc {
        dtype,
        shape: shape.to_vec(),
        strides: TensorDesc::row_major_strides(shape).unwrap(),
        ptr,
        len: shape.iter().product::<i64>() as u64,
        device: 0,
    })
}

fn args(m_x: i64, m_y: i64) -> Vec<ArgDesc> {
    vec![
        tensor(DType::F32, &[m_x, 4096], BASE),
        tensor(DType::F32, &[m_y, 4096], BASE + (1 << 32)),
        ArgDesc::Scalar(ScalarValue::F32(0.5)),
    ]
}

fn err(k: &Kernel, a: &[ArgDesc]) -> String {
    match check_launch(k, 0, a) {
        Ok(plan) => panic!("expected an error, got {plan:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_good_launch_is_planned() {
    let plan = check_launch(&softmax(), 0, &args(1001, 1001)).unwrap();
    assert_eq!(plan.grid, [251, 1, 1]);
    assert_eq!(plan.block, [128, 1, 1]);
    assert_eq!(plan.cluster, None);
    assert_eq!(plan.smem_bytes, 16384);
    assert_eq!(
        plan.params,
        vec![
            ParamValue::Pointer(BASE),
            ParamValue::Pointer(BASE + (1 << 32)),
            ParamValue::Scalar(ScalarValue::F32(0.5)),
            ParamValue::Dim { ty: IntType::I32, value: 1001 },
        ]
    );
    assert_eq!(plan.dims, vec![BoundDim { name: "M".into(), value: 1001, origin: "x.shape[0]".into() }]);
    let sizes: Vec<u32> = plan.params.iter().map(ParamValue::size_bytes).collect();
    assert_eq!(sizes, [8, 8, 4, 4]);
    assert_eq!(plan.params[3].to_le_bytes()[..4], 1001i32.to_le_bytes());
}

#[test]
fn wrong_arity() {
    let mut a = args(8, 8);
    a.pop();
    assert_eq!(
        err(&softmax(), &a),
        "kernel `k` takes 3 arguments (x: tensor f32, y: tensor f32, scale: scalar f32), got 2"
    );
}

#[test]
fn dtype_mismatch() {
    let mut a = args(8, 8);
    a[1] = tensor(DType::Bf16, &[8, 4096], BASE);
    assert_eq!(err(&softmax(), &a), "argument `y`: expected dtype f32, got bf16");
    let mut a = args(8, 8);
    a[2] = ArgDesc::Scalar(ScalarValue::F64(0.5));
    assert_eq!(err(&softmax(), &a), "argument `scale`: expected dtype f32, got f64");
}

#[test]
fn kind_mismatch() {
    let mut a = args(8, 8);
    a.swap(1, 2);
    assert_eq!(err(&softmax(), &a), "argument `y`: expected a tensor, got a scalar");
}

#[test]
fn rank_mismatch() {
    let mut a = args(8, 8);
    a[0] = tensor(DType::F32, &[8 * 4096], BASE);
    assert_eq!(
        err(&softmax(), &a),
        "argument `x`: expected rank 2 (the kernel's layout is (M,4096):(4096,1)), got rank 1 (shape [32768])"
    );
}

#[test]
fn inconsistent_dimension_names_both_parameters() {
    let e = check_launch(&softmax(), 0, &args(32, 16)).unwrap_err();
    assert_eq!(
        e,
        ArgError::DimMismatch {
            dim: "M".into(),
            bound: 32,
            origin: "x.shape[0]".into(),
            param: "y".into(),
            of: DimComponent::Shape,
            mode: 0,
            got: 16,
        }
    );
    assert_eq!(e.to_string(), "dimension `M` is 32 (from x.shape[0]), but argument `y` has shape[0] = 16");
}

#[test]
fn static_extent_and_stride_mismatch() {
    let mut a = args(8, 8);
    a[1] = tensor(DType::F32, &[8, 1024], BASE);
    assert_eq!(err(&softmax(), &a), "argument `y`: shape[1] is 1024, but the kernel was compiled for 4096");
    // Column-major data: the extents match but the strides do not.
    let mut a = args(8, 8);
    if let ArgDesc::Tensor(t) = &mut a[0] {
        t.strides = vec![1, 8];
    }
    assert_eq!(err(&softmax(), &a), "argument `x`: stride[0] is 1, but the kernel was compiled for 4096");
}

#[test]
fn misaligned_pointer() {
    let mut a = args(8, 8);
    a[1] = tensor(DType::F32, &[8, 4096], BASE + 4);
    let e = check_launch(&softmax(), 0, &a).unwrap_err();
    assert_eq!(e, ArgError::Misaligned { param: "y".into(), ptr: BASE + 4, align: 16 });
    assert_eq!(
        e.to_string(),
        "argument `y`: pointer 0x7f0000000004 is not aligned to 16 bytes as the kernel requires \
         (it is 4 bytes past a multiple)"
    );
}

#[test]
fn wrong_device() {
    let mut a = args(8, 8);
    if let ArgDesc::Tensor(t) = &mut a[0] {
        t.device = 1;
    }
    assert_eq!(err(&softmax(), &a), "argument `x` is on device 1, but the kernel is loaded on device 0");
}

#[test]
fn buffer_too_small() {
    let mut a = args(8, 8);
    if let ArgDesc::Tensor(t) = &mut a[1] {
        t.len = 8 * 4096 - 1;
    }
    assert_eq!(
        err(&softmax(), &a),
        "argument `y`: the layout (M,4096):(4096,1) reaches element 32767, but the buffer holds 32767 elements"
    );
}

#[test]
fn dimension_out_of_its_type() {
    let big = 1i64 << 31;
    let mut a = args(big, big);
    for t in a.iter_mut().take(2) {
        if let ArgDesc::Tensor(t) = t {
            t.len = u64::MAX;
        }
    }
    assert_eq!(
        err(&softmax(), &a),
        "dimension `M` = 2147483648 (from x.shape[0]) does not fit in i32, its parameter type"
    );
}

#[test]
fn launch_expressions_are_evaluated_and_range_checked() {
    // M = 0: ceil_div(0, 4) = 0 blocks is not a launch.
    assert_eq!(err(&softmax(), &args(0, 0)), "launch.grid.x = ceil_div(M,4) = 0 is outside [1, 2147483647]");
    let t = json!({ "kind": "tensor", "name": "x", "dtype": "u8", "space": "gmem",
                    "layout": { "shape": ["N"], "stride": [1] }, "align_bytes": 1 });
    let dims = json!([{ "name": "N", "type": "i64", "from": { "param": "x", "mode": 0 } }]);
    let x = |n: i64| vec![tensor(DType::U8, &[n], BASE)];

    let k = kernel(
        json!([t]),
        dims.clone(),
        json!({ "grid": [{ "op": "mul", "args": ["N", 9223372036854775807i64] }], "block": [1] }),
    );
    assert_eq!(
        err(&k, &x(2)),
        "launch.grid.x = N*9223372036854775807: integer overflow in mul(2, 9223372036854775807)"
    );
    let k = kernel(json!([t]), dims.clone(), json!({ "grid": [{ "op": "div", "args": [1024, "N"] }], "block": [1] }));
    assert_eq!(err(&k, &x(0)), "launch.grid.x = 1024/N: division by zero in div(1024, 0)");
    let k = kernel(json!([t]), dims.clone(), json!({ "grid": [1, 1, "N"], "block": [64, 32] }));
    assert_eq!(err(&k, &x(1)), "block 64x32x1 has 2048 threads; at most 1024 are allowed");
    assert_eq!(err(&k, &x(70000)), "launch.grid.z = N = 70000 is outside [1, 65535]");
    let k = kernel(json!([t]), dims.clone(), json!({ "grid": ["N"], "block": [128], "cluster": [2] }));
    assert_eq!(err(&k, &x(7)), "grid.x = 7 is not a multiple of cluster.x = 2");
    let plan = check_launch(&k, 0, &x(8)).unwrap();
    assert_eq!((plan.grid, plan.cluster), ([8, 1, 1], Some([2, 1, 1])));
    assert_eq!(plan.params[1], ParamValue::Dim { ty: IntType::I64, value: 8 });
    // A cluster of one CTA is the implicit one of every launch: a plain launch.
    let k = kernel(json!([t]), dims.clone(), json!({ "grid": ["N"], "block": [128], "cluster": [1, 1, 1] }));
    assert_eq!(check_launch(&k, 0, &x(7)).unwrap().cluster, None);
    // A persistent kernel's grid counts tiles, which it numbers in 32 bits; the cluster still divides them.
    let persistent = json!({ "grid": ["N", 65535, 2], "block": [128], "cluster": [2], "persistent": true });
    let k = kernel(json!([t]), dims.clone(), persistent);
    assert_eq!(err(&k, &x(7)), "grid.x = 7 is not a multiple of cluster.x = 2");
    assert_eq!(check_launch(&k, 0, &x(16384)).unwrap().grid, [16384, 65535, 2]);
    assert_eq!(err(&k, &x(16386)), "launch.tiles = 16386*65535*2 = 2147713020 is outside [1, 2147483647]");
    let k =
        kernel(json!([t]), dims, json!({ "grid": [1], "block": [1], "smem_bytes": { "op": "sub", "args": [0, "N"] } }));
    assert_eq!(err(&k, &x(1)), "launch.smem_bytes = 0-N = -1 is outside [0, 4294967295]");
}

#[test]
fn nested_modes_and_dimensions_from_strides() {
    // x: (M, (32, K)):(ldx, (1, 32)) -- a padded row-major matrix whose columns the kernel tiles by 32.
    let x = json!({ "kind": "tensor", "name": "x", "dtype": "f32", "space": "gmem",
                    "layout": { "shape": ["M", [32, "K"]], "stride": ["ldx", [1, 32]] }, "align_bytes": 4 });
    let y = json!({ "kind": "tensor", "name": "y", "dtype": "f32", "space": "gmem",
                    "layout": { "shape": ["K"], "stride": ["ldx"] }, "align_bytes": 4 });
    let k = kernel(
        json!([x, y]),
        json!([
            { "name": "M", "type": "i32", "from": { "param": "x", "mode": 0 } },
            { "name": "ldx", "type": "i64", "from": { "param": "x", "mode": 0, "of": "stride" } },
            { "name": "K", "type": "i32", "from": { "param": "y", "mode": 0, "of": "shape" } }
        ]),
        json!({ "grid": ["M"], "block": [32] }),
    );
    let desc = |shape: Vec<i64>, strides: Vec<i64>, len: u64| {
        ArgDesc::Tensor(TensorDesc { dtype: DType::F32, shape, strides, ptr: BASE, len, device: 0 })
    };
    // 4 rows, row stride 160; K is bound from y's extent (4), so x must have 32 * 4 = 128 columns.
    let ok = [desc(vec![4, 128], vec![160, 1], 4 * 160), desc(vec![4], vec![160], 4 * 160)];
    let plan = check_launch(&k, 0, &ok).unwrap();
    let bound: Vec<(&str, i64)> = plan.dims.iter().map(|b| (b.name.as_str(), b.value)).collect();
    assert_eq!(bound, [("M", 4), ("ldx", 160), ("K", 4)]);

    // The nested mode's extent 32 * K = 128 does not match 96 columns.
    let bad = [desc(vec![4, 96], vec![160, 1], 4 * 160), desc(vec![4], vec![160], 4 * 160)];
    assert_eq!(
        err(&k, &bad),
        "argument `x`: shape[1] = 96 does not match the kernel's layout mode (32,K):(1,32) (extent 128)"
    );
    // Columns with stride 2: the nested mode needs the first leaf's stride to be the argument's stride.
    let bad = [desc(vec![4, 128], vec![320, 2], 4 * 320), desc(vec![4], vec![320], 4 * 320)];
    assert_eq!(
        err(&k, &bad),
        "argument `x`: stride[1] = 2 does not match the kernel's layout mode (32,K):(1,32) \
         (a leaf of extent 32 has stride 1; this argument gives it 2)"
    );
    // y's row stride disagrees with ldx bound from x.
    let bad = [desc(vec![4, 128], vec![160, 1], 4 * 160), desc(vec![4], vec![128], 4 * 160)];
    assert_eq!(err(&k, &bad), "dimension `ldx` is 160 (from x.stride[0]), but argument `y` has stride[0] = 128");
    // The last row needs no padding after its 128 elements; one element less is out of bounds.
    let tight = [desc(vec![4, 128], vec![160, 1], 3 * 160 + 128), desc(vec![4], vec![160], 3 * 160 + 1)];
    assert!(check_launch(&k, 0, &tight).is_ok());
    let short = [desc(vec![4, 128], vec![160, 1], 3 * 160 + 127), desc(vec![4], vec![160], 3 * 160 + 1)];
    assert!(err(&k, &short).contains("reaches element 607, but the buffer holds 607 elements"));
}

#[test]
fn strides_of_unit_modes_are_ignored_and_empty_tensors_need_no_memory() {
    let t = json!({ "kind": "tensor", "name": "x", "dtype": "f32", "space": "gmem",
                    "layout": { "shape": [1, "N"], "stride": [4096, 1] }, "align_bytes": 4 });
    let k = kernel(
        json!([t]),
        json!([{ "name": "N", "type": "i32", "from": { "param": "x", "mode": 1 } }]),
        json!({ "grid": [1], "block": [32] }),
    );
    let a = [ArgDesc::Tensor(TensorDesc {
        dtype: DType::F32,
        shape: vec![1, 0],
        strides: vec![0, 1],
        ptr: 0,
        len: 0,
        device: 0,
    })];
    assert!(check_launch(&k, 0, &a).is_ok());
}

#[test]
fn malformed_descriptions_are_errors() {
    let mut a = args(8, 8);
    if let ArgDesc::Tensor(t) = &mut a[0] {
        t.strides.pop();
    }
    assert_eq!(err(&softmax(), &a), "argument `x`: invalid tensor description: 2 extents but 1 strides");
    let mut a = args(8, 8);
    if let ArgDesc::Tensor(t) = &mut a[0] {
        t.shape[1] = -4096;
    }
    assert_eq!(err(&softmax(), &a), "argument `x`: invalid tensor description: negative extent -4096");
}

#[test]
fn row_major_strides() {
    assert_eq!(TensorDesc::row_major_strides(&[2, 3, 4]), Some(vec![12, 4, 1]));
    assert_eq!(TensorDesc::row_major_strides(&[]), Some(vec![]));
    assert_eq!(TensorDesc::row_major_strides(&[0, 5]), Some(vec![5, 1]));
    assert_eq!(TensorDesc::row_major_strides(&[i64::MAX, 2, 2]), None);
}

#[test]
fn a_dimension_that_breaks_a_requirement_is_refused_naming_it() {
    let mut k = softmax();
    k.requires = vec![cutec_manifest::Requirement {
        dim: "M".into(),
        multiple_of: 4,
        message: Some("rows come in fours".into()),
    }];
    assert!(check_launch(&k, 0, &args(8, 8)).is_ok());
    assert_eq!(
        err(&k, &args(10, 10)),
        "dimension `M` = 10 (from x.shape[0]) is not a multiple of 4, which the kernel requires: rows come in fours"
    );
}

#[test]
fn an_argument_beyond_32_bit_indexing_is_refused() {
    let k = softmax();
    // 524288 x 4096 = 2^31 elements: offsets would wrap in the kernel's 32-bit index arithmetic.
    let big = |m: i64| {
        vec![
            tensor(DType::F32, &[m, 4096], BASE),
            tensor(DType::F32, &[m, 4096], BASE + (1 << 40)),
            ArgDesc::Scalar(ScalarValue::F32(0.5)),
        ]
    };
    assert!(err(&k, &big(524_288)).contains("kernels index with 32-bit integers"));
    // The largest row count under the limit is accepted.
    let rows = (MAX_INDEX + 1) / 4096;
    assert!(check_launch(&k, 0, &big(rows)).is_ok());
}
