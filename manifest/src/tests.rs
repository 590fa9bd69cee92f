//! Tests of parsing, validation and printing of whole manifests.

use super::*;

pub(crate) const SOFTMAX: &str = r#"{
  "format_version": 1,
  "target": "sm_90a",
  "module": "softmax.ptx",
  "kernels": [
    {
      "name": "softmax",
      "params": [
        { "kind": "tensor", "name": "x", "dtype": "f32", "space": "gmem",
          "layout": { "shape": ["M", 4096], "stride": [4096, 1] }, "align_bytes": 16, "access": "read" },
        { "kind": "tensor", "name": "y", "dtype": "f32", "space": "gmem",
          "layout": { "shape": ["M", 4096], "stride": [4096, 1] }, "align_bytes": 16 },
        { "kind": "scalar", "name": "scale", "dtype": "f32" }
      ],
      "dims": [ { "name": "M", "type": "i32", "from": { "param": "x", "mode": 0 } } ],
      "launch": {
        "grid": [ { "op": "ceil_div", "args": [ { "dim": "M" }, { "int": 4 } ] } ],
        "block": [ { "int": 128 } ],
        "smem_bytes": { "int": 0 },
        "static_smem_bytes": 512
      },
      "const_params": { "N": 4096, "ROWS_PER_BLOCK": 4, "FAST": true }
    }
  ]
}"#;

fn with(edit: impl FnOnce(&mut serde_json::Value)) -> Result<Manifest, ManifestError> {
    let mut v: serde_json::Value = serde_json::from_str(SOFTMAX).unwrap();
    edit(&mut v);
    Manifest::from_json(&v.to_string())
}

fn kernel0(v: &mut serde_json::Value) -> &mut serde_json::Value {
    &mut v["kernels"][0]
}

#[test]
fn parses_the_documented_example() {
    let m = Manifest::from_json(SOFTMAX).unwrap();
    let k = m.kernel("softmax").unwrap();
    assert_eq!(k.params.len(), 3);
    assert_eq!(k.param("y").unwrap().dtype(), DType::F32);
    let access: Vec<Access> = k.tensors().map(|t| t.access).collect();
    assert_eq!(access, [Access::Read, Access::ReadWrite]); // y: the default
    assert_eq!(k.dim("M").unwrap().ty, IntType::I32);
    assert_eq!(k.dim("M").unwrap().from.of, DimComponent::Shape);
    assert_eq!(k.launch.grid[0].to_string(), "ceil_div(M,4)");
    assert_eq!(k.launch.cluster, None);
    assert_eq!(k.const_params["FAST"], ConstValue::Bool(true));
    assert_eq!(k.const_params["N"], ConstValue::Int(4096));
    let abi: Vec<String> = k
        .ptx_params()
        .map(|p| match p {
            PtxParam::Pointer(t) => format!("ptr {} ({})", t.name, p.size_bytes()),
            PtxParam::Scalar(s) => format!("scalar {} ({})", s.name, p.size_bytes()),
            PtxParam::Dim(d) => format!("dim {} ({})", d.name, p.size_bytes()),
        })
        .collect();
    assert_eq!(abi, ["ptr x (8)", "ptr y (8)", "scalar scale (4)", "dim M (4)"]);
}

#[test]
fn pretty_json_round_trips() {
    let m = Manifest::from_json(SOFTMAX).unwrap();
    let text = m.to_json_pretty();
    assert!(text.ends_with("}\n"));
    assert!(text.contains(r#""op": "ceil_div""#));
    assert_eq!(Manifest::from_json(&text).unwrap(), m);
}

#[test]
fn defaults_and_shorthands() {
    let m = with(|v| {
        let k = kernel0(v);
        k["launch"] = serde_json::json!({ "grid": ["M", 1], "block": [128], "cluster": [2] });
        k.as_object_mut().unwrap().remove("const_params");
    })
    .unwrap();
    let l = &m.kernels[0].launch;
    assert_eq!(l.grid, vec![Expr::Dim("M".into()), Expr::Const(1)]);
    assert_eq!(l.smem_bytes, Expr::Const(0));
    assert_eq!(l.static_smem_bytes, 0);
    assert_eq!(l.cluster, Some(vec![Expr::Const(2)]));
}

#[test]
fn format_version_is_checked_first() {
    let e = with(|v| v["format_version"] = 2.into()).unwrap_err();
    assert!(matches!(e, ManifestError::UnsupportedFormatVersion { ref found } if found == "2"), "{e}");
    assert_eq!(e.to_string(), "unsupported manifest format_version 2 (this reader understands version 1)");
    // Even when the rest would not parse as version 1.
    let e = Manifest::from_json(r#"{"format_version": "1.0", "stuff": []}"#).unwrap_err();
    assert!(matches!(e, ManifestError::UnsupportedFormatVersion { .. }), "{e}");
    let e = Manifest::from_json(r#"{"kernels": []}"#).unwrap_err();
    assert!(matches!(e, ManifestError::MissingFormatVersion), "{e}");
    let e = Manifest::from_json("{").unwrap_err();
    assert!(e.to_string().starts_with("invalid manifest JSON"), "{e}");
}

#[test]
fn schema_errors() {
    let e = with(|v| kernel0(v)["params"][0]["dtype"] = "float".into()).unwrap_err();
    assert!(e.to_string().contains("unknown variant `float`"), "{e}");
    let e = with(|v| kernel0(v)["params"][0]["algn_bytes"] = 16.into()).unwrap_err();
    assert!(e.to_string().contains("unknown field `algn_bytes`"), "{e}");
    let e = with(|v| kernel0(v)["params"][0]["kind"] = "pointer".into()).unwrap_err();
    assert!(e.to_string().contains("unknown variant `pointer`"), "{e}");
    let e = with(|v| kernel0(v)["params"][0]["space"] = "smem".into()).unwrap_err();
    assert!(e.to_string().contains("unknown variant `smem`"), "{e}");
}

#[test]
fn validation_errors_name_the_culprit() {
    type Edit = Box<dyn FnOnce(&mut serde_json::Value)>;
    let cases: Vec<(Edit, &str)> = vec![
        (Box::new(|v| v["target"] = "hopper".into()), "target `hopper` is not an NVIDIA architecture name"),
        (
            Box::new(|v| {
                let k = v["kernels"][0].clone();
                v["kernels"].as_array_mut().unwrap().push(k);
            }),
            "kernel `softmax` is defined twice",
        ),
        (Box::new(|v| kernel0(v)["name"] = "soft max".into()), "`soft max` is not a valid kernel name"),
        (Box::new(|v| kernel0(v)["params"][1]["name"] = "x".into()), "the name `x` is used twice"),
        (Box::new(|v| kernel0(v)["params"][1]["name"] = "M".into()), "the name `M` is used twice"),
        (
            Box::new(|v| kernel0(v)["params"][0]["layout"]["stride"] = serde_json::json!([4096, [1, 2]])),
            "parameter `x`: shape (M, 4096) and stride (4096, (1, 2)) are not congruent",
        ),
        (
            Box::new(|v| kernel0(v)["params"][0]["layout"]["shape"] = serde_json::json!(["M", -1])),
            "negative static extent -1",
        ),
        (
            Box::new(|v| kernel0(v)["params"][1]["layout"]["shape"] = serde_json::json!(["K", 4096])),
            "dimension `K` used in the shape of `y` is not declared",
        ),
        (
            Box::new(|v| kernel0(v)["params"][0]["align_bytes"] = 2.into()),
            "parameter `x`: align_bytes 2 must be a power of two and at least the size of f32 (4 bytes)",
        ),
        (Box::new(|v| kernel0(v)["params"][0]["align_bytes"] = 12.into()), "align_bytes 12 must be a power of two"),
        (Box::new(|v| kernel0(v)["dims"][0]["from"]["param"] = "z".into()), "comes from `z`, which is not a parameter"),
        (Box::new(|v| kernel0(v)["dims"][0]["from"]["param"] = "scale".into()), "`scale`, which is a scalar"),
        (Box::new(|v| kernel0(v)["dims"][0]["from"]["mode"] = 2.into()), "from x.shape[2], but `x` has rank 2"),
        (Box::new(|v| kernel0(v)["dims"][0]["from"]["mode"] = 1.into()), "x.shape[1], which is `4096`, not `M`"),
        (Box::new(|v| kernel0(v)["dims"][0]["from"]["of"] = "stride".into()), "x.stride[0], which is `4096`, not `M`"),
        (Box::new(|v| kernel0(v)["launch"]["grid"] = serde_json::json!([])), "launch.grid has 0 entries"),
        (Box::new(|v| kernel0(v)["launch"]["block"] = serde_json::json!([1, 1, 1, 1])), "launch.block has 4 entries"),
        (
            Box::new(|v| kernel0(v)["launch"]["grid"] = serde_json::json!([{"op": "sub", "args": ["M"]}])),
            // Checked while parsing: the expression tree is binary.
            "`sub` takes exactly 2 arguments, found 1",
        ),
        (
            Box::new(|v| kernel0(v)["launch"]["smem_bytes"] = serde_json::json!({"op": "mul", "args": ["N", 4]})),
            "dimension `N` used in launch.smem_bytes is not declared",
        ),
    ];
    for (edit, expected) in cases {
        let e = with(edit).unwrap_err();
        assert!(e.to_string().contains(expected), "expected {expected:?} in {:?}", e.to_string());
    }
}

#[test]
fn dims_from_strides_and_nested_layouts_validate() {
    let m = with(|v| {
        let k = kernel0(v);
        k["params"][0]["layout"] = serde_json::json!({ "shape": ["M", [32, "K"]], "stride": ["ldx", [1, 32]] });
        k["dims"] = serde_json::json!([
            { "name": "M", "type": "i64", "from": { "param": "x", "mode": 0 } },
            { "name": "ldx", "type": "i64", "from": { "param": "x", "mode": 0, "of": "stride" } },
            { "name": "K", "type": "i32", "from": { "param": "y", "mode": 1 } }
        ]);
        k["params"][1]["layout"] = serde_json::json!({ "shape": ["M", "K"], "stride": ["K", 1] });
    })
    .unwrap();
    assert_eq!(m.kernels[0].dims.len(), 3);
    assert_eq!(m.kernels[0].ptx_params().count(), 6);
}

#[test]
fn requirements_round_trip_and_must_name_a_dimension_and_a_positive_divisor() {
    let with = |req: serde_json::Value| {
        serde_json::json!({
            "format_version": 1, "target": "sm_90a", "module": "k.ptx",
            "kernels": [{ "name": "k",
                "params": [{ "kind": "tensor", "name": "x", "dtype": "f32", "space": "gmem",
                             "layout": { "shape": ["N"], "stride": [1] }, "align_bytes": 4 }],
                "dims": [{ "name": "N", "type": "i32", "from": { "param": "x", "mode": 0 } }],
                "launch": { "grid": ["N"], "block": [1] },
                "requires": req }]
        })
        .to_string()
    };
    let m = Manifest::from_json(&with(serde_json::json!([{ "dim": "N", "multiple_of": 8 }]))).expect("valid");
    assert_eq!(m.kernels[0].requires, [Requirement { dim: "N".into(), multiple_of: 8, message: None }]);
    assert_eq!(Manifest::from_json(&m.to_json_pretty()).expect("valid"), m);
    for bad in
        [serde_json::json!([{ "dim": "Q", "multiple_of": 8 }]), serde_json::json!([{ "dim": "N", "multiple_of": 0 }])]
    {
        let e = Manifest::from_json(&with(bad)).expect_err("invalid");
        assert!(e.to_string().contains("needs a declared dimension and a positive divisor"), "{e}");
    }
}
