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
      "const_params": { "N": 4096, "ROWS_PER_BLOCK": 4, "FAST": true },
      "tensor_maps": [ { "name": "x_tma0", "tensor": "x", "modes": [1, 0], "box": [32, 4],
                         "swizzle": "128B", "l2_promotion": "128B", "oob_fill": "zero" } ]
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
            PtxParam::TensorMap(m) => format!("map {} ({}, align {})", m.name, p.size_bytes(), p.align_bytes()),
        })
        .collect();
    assert_eq!(abi, ["ptr x (8)", "ptr y (8)", "scalar scale (4)", "dim M (4)", "map x_tma0 (128, align 64)"]);
    let map = k.tensor_map("x_tma0").unwrap();
    assert_eq!((map.tensor.as_str(), &map.modes[..], &map.box_shape[..]), ("x", &[1, 0][..], &[32, 4][..]));
    assert_eq!(
        (map.swizzle, map.l2_promotion, map.oob_fill),
        (TmaSwizzle::B128, TmaL2Promotion::B128, TmaOobFill::Zero)
    );
}

#[test]
fn pretty_json_round_trips() {
    let m = Manifest::from_json(SOFTMAX).unwrap();
    let text = m.to_json_pretty();
    assert!(text.ends_with("}\n"));
    assert!(text.contains(r#""op": "ceil_div""#));
    assert!(text.contains(r#""box": ["#) && text.contains(r#""swizzle": "128B""#), "{text}");
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
            "parameter `x`: shape (M,4096) and stride (4096,(1,2)) are not congruent",
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
        k.as_object_mut().unwrap().remove("tensor_maps");
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

#[test]
fn tensor_maps_round_trip_in_every_spelling_and_are_omitted_when_empty() {
    let spellings = [
        ("none", TmaSwizzle::None, "none", TmaL2Promotion::None, "zero", TmaOobFill::Zero),
        ("32B", TmaSwizzle::B32, "64B", TmaL2Promotion::B64, "nan", TmaOobFill::Nan),
        ("64B", TmaSwizzle::B64, "128B", TmaL2Promotion::B128, "zero", TmaOobFill::Zero),
        ("128B", TmaSwizzle::B128, "256B", TmaL2Promotion::B256, "nan", TmaOobFill::Nan),
    ];
    for (sw, swizzle, l2, l2_promotion, fill, oob_fill) in spellings {
        let m = with(|v| {
            let map = &mut kernel0(v)["tensor_maps"][0];
            (map["swizzle"], map["l2_promotion"], map["oob_fill"]) = (sw.into(), l2.into(), fill.into());
            map["box"] = serde_json::json!([4, 2]);
        })
        .unwrap();
        let map = &m.kernels[0].tensor_maps[0];
        assert_eq!((map.swizzle, map.l2_promotion, map.oob_fill), (swizzle, l2_promotion, oob_fill));
        assert_eq!(map.box_shape, [4, 2]);
        let text = m.to_json_pretty();
        assert!(text.contains(&format!(r#""swizzle": "{sw}""#)), "{text}");
        assert_eq!(Manifest::from_json(&text).unwrap(), m);
    }
    let m = with(|v| {
        kernel0(v).as_object_mut().unwrap().remove("tensor_maps");
    })
    .unwrap();
    assert!(m.kernels[0].tensor_maps.is_empty());
    assert!(!m.to_json_pretty().contains("tensor_maps"));
    for (field, value, says) in [
        ("swizzle", "16B", "unknown variant `16B`"),
        ("oob_fill", "NaN", "unknown variant `NaN`"),
        ("boxx", "1", "unknown field `boxx`"),
    ] {
        let e = with(|v| kernel0(v)["tensor_maps"][0][field] = value.into()).unwrap_err();
        assert!(e.to_string().contains(says), "{e}");
    }
    let e = with(|v| {
        kernel0(v)["tensor_maps"][0].as_object_mut().unwrap().remove("swizzle");
    })
    .unwrap_err();
    assert!(e.to_string().contains("missing field `swizzle`"), "{e}");
}

#[test]
fn tensor_map_validation_errors_name_the_map_and_the_rule() {
    type Edit = Box<dyn FnOnce(&mut serde_json::Value)>;
    let map = |edit: fn(&mut serde_json::Value)| -> Edit { Box::new(move |v| edit(&mut kernel0(v)["tensor_maps"][0])) };
    let nested = |v: &mut serde_json::Value| {
        let k = kernel0(v);
        k["params"][0]["layout"] = serde_json::json!({ "shape": ["M", [2, 2048]], "stride": [4096, [2048, 1]] });
    };
    let cases: Vec<(Edit, &str)> = vec![
        (map(|m| m["tensor"] = "z".into()), "tensor map `x_tma0` describes `z`, which is not a parameter"),
        (map(|m| m["tensor"] = "scale".into()), "describes `scale`, which is a scalar"),
        (map(|m| m["name"] = "y".into()), "the name `y` is used twice"),
        (map(|m| m["name"] = "M".into()), "the name `M` is used twice"),
        (map(|m| m["name"] = "x tma".into()), "`x tma` is not a valid tensor map name"),
        (
            Box::new(|v| {
                let m = kernel0(v)["tensor_maps"][0].clone();
                kernel0(v)["tensor_maps"].as_array_mut().unwrap().push(m);
            }),
            "the name `x_tma0` is used twice",
        ),
        (map(|m| m["modes"] = serde_json::json!([1])), "has 1 modes and 2 box extents"),
        (map(|m| (m["modes"], m["box"]) = (serde_json::json!([]), serde_json::json!([]))), "has 0 modes and 0 box"),
        (
            map(|m| {
                (m["modes"], m["box"]) = (serde_json::json!([1, 0, 0, 0, 0, 0]), serde_json::json!([4, 4, 4, 4, 4, 4]))
            }),
            "has 6 modes and 6 box extents; a tensor map has 1 to 5 dimensions",
        ),
        (map(|m| m["modes"] = serde_json::json!([1, 2])), "dimension 1 is mode 2 of `x`, which has rank 2"),
        (map(|m| m["modes"] = serde_json::json!([1, 1])), "lists mode 1 of `x` twice"),
        (map(|m| m["modes"] = serde_json::json!([0, 1])), "innermost dimension is mode 0 of `x`, whose stride is 4096"),
        (
            Box::new(move |v| {
                nested(v);
                kernel0(v)["tensor_maps"][0]["modes"] = serde_json::json!([1, 0]);
            }),
            "mode 1 of `x` is the nested mode (2,2048):(2048,1); each map dimension is one leaf mode",
        ),
        (map(|m| m["box"] = serde_json::json!([32, 0])), "box[1] is 0; TMA takes 1 to 256"),
        (map(|m| m["box"] = serde_json::json!([32, 257])), "box[1] is 257"),
        (map(|m| m["box"] = serde_json::json!([2, 4])), "inner row (box[0] = 2 f32) is 8 bytes; TMA moves rows of a"),
        (map(|m| m["box"] = serde_json::json!([64, 4])), "inner row is 256 bytes, more than the 128-byte span"),
        (map(|m| m["swizzle"] = "32B".into()), "inner row is 128 bytes, more than the 32-byte span"),
        (Box::new(|v| kernel0(v)["params"][0]["align_bytes"] = 8.into()), "whose align_bytes is 8; TMA needs a 16"),
        (
            Box::new(|v| {
                kernel0(v)["params"][0]["dtype"] = "i32".into();
                kernel0(v)["tensor_maps"][0]["oob_fill"] = "nan".into();
            }),
            "NaN fill needs an f16, bf16, f32 or f64 tensor, and `x` is i32",
        ),
    ];
    for (edit, expected) in cases {
        let e = with(edit).unwrap_err();
        assert!(e.to_string().contains(expected), "expected {expected:?} in {:?}", e.to_string());
        assert!(e.to_string().starts_with("kernel `softmax`"), "{e}");
    }
    // A map of some of a tensor's modes, of every box shape the rules allow, is valid.
    let m = with(|v| {
        let k = kernel0(v);
        k["params"][0]["layout"] = serde_json::json!({ "shape": ["M", 4, 1024], "stride": [4096, 1024, 1] });
        k["params"][0]["dtype"] = "bf16".into();
        let map = &mut k["tensor_maps"][0];
        (map["modes"], map["box"], map["swizzle"]) =
            (serde_json::json!([2, 0]), serde_json::json!([64, 256]), "128B".into());
    })
    .unwrap();
    assert_eq!(m.kernels[0].tensor_maps[0].modes, [2, 0]);
}

#[test]
fn persistent_launches_at_most_one_cta_per_sm_in_whole_clusters() {
    let json = |persistent: bool| {
        with(|v| {
            let launch =
                serde_json::json!({ "grid": ["M", 1], "block": [128], "cluster": [2], "persistent": persistent });
            kernel0(v)["launch"] = launch;
        })
        .unwrap()
    };
    let (plain, persistent) = (json(false), json(true));
    let (l, p) = (&plain.kernels[0].launch, &persistent.kernels[0].launch);
    assert!(!l.persistent && p.persistent);
    // A plain grid is launched as it is.
    assert_eq!(l.hardware_grid([1000, 3, 1], Some([2, 1, 1]), 132), [1000, 3, 1]);
    // Fewer tiles than SMs: one CTA per tile, in clusters of 2.
    assert_eq!(p.hardware_grid([8, 4, 1], Some([2, 1, 1]), 132), [32, 1, 1]);
    // More tiles than SMs: 66 clusters of 2 CTAs.
    assert_eq!(p.hardware_grid([64, 32, 1], Some([2, 1, 1]), 132), [132, 1, 1]);
    // Clusters along y stay one cluster high; the layers along z are tiles too.
    assert_eq!(p.hardware_grid([4, 4, 3], Some([2, 2, 1]), 132), [24, 2, 1]);
    assert_eq!(p.hardware_grid([64, 64, 1], Some([2, 2, 1]), 132), [66, 2, 1]);
    // Without a cluster, and on a device with fewer SMs than a cluster has CTAs (one cluster then).
    assert_eq!(p.hardware_grid([5, 1, 1], None, 132), [5, 1, 1]);
    assert_eq!(p.hardware_grid([5, 7, 1], None, 16), [16, 1, 1]);
    assert_eq!(p.hardware_grid([8, 8, 1], Some([4, 1, 1]), 2), [4, 1, 1]);
    // The field is written only when set, so manifests of other kernels are unchanged.
    assert!(!plain.to_json_pretty().contains("persistent"));
    assert!(persistent.to_json_pretty().contains("\"persistent\": true"));
}

#[test]
fn flops_round_trip_and_may_name_only_declared_dimensions() {
    let flops = serde_json::json!({ "op": "mul", "args": [{ "int": 2 }, { "dim": "M" }] });
    let m = with(|v| kernel0(v)["flops"] = flops.clone()).expect("valid");
    let f = m.kernels[0].flops.as_ref().expect("kept");
    assert_eq!(f.eval_dims(&|d| (d == "M").then_some(21)), Ok(42));
    assert_eq!(Manifest::from_json(&m.to_json_pretty()).expect("valid"), m);
    // Absent when not counted, and left out when written.
    let plain = Manifest::from_json(SOFTMAX).expect("valid");
    assert_eq!(plain.kernels[0].flops, None);
    assert!(!plain.to_json_pretty().contains("flops"));
    let e = with(|v| kernel0(v)["flops"] = serde_json::json!({ "dim": "Q" })).expect_err("undeclared");
    assert!(
        e.to_string().contains("`Q`") && e.to_string().contains("flops") && !e.to_string().contains("launch.flops"),
        "{e}"
    );
}
