//! Random mutations of what `cutec run` reads besides the module: `.npy` files, `--dim` values and kernel
//! manifests, through every GPU-free step (`.npy` parsing and conversion, `--dim` parsing, manifest validation,
//! argument planning, the memory check and the launch check). Nothing may panic; every rejection is an error value.
// When the run errors carry codes (RunError::code), assert them here like the diagnostics of mutation.rs.

use std::io::Cursor;
use std::panic::{AssertUnwindSafe, catch_unwind};

use cutec::run::{RunOptions, plan_tensors};
use cutec_manifest::{DType, Kernel, Manifest, Param};
use cutec_runtime::npy::{npy_to_elements, read_npy, write_npy};
use cutec_runtime::{ArgDesc, ScalarValue, TensorDesc, check_fits, check_launch};
use cutec_tests::{Rng, seed};

/// Applies 1 to 3 random edits: delete a run, insert a fragment, duplicate a run, overwrite a byte, truncate.
fn mutate(rng: &mut Rng, input: &[u8], vocab: &[&[u8]]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(3) {
        let at = rng.below(out.len() + 1);
        match rng.below(6) {
            0 => {
                let len = rng.below(12).min(out.len() - at);
                out.drain(at..at + len);
            }
            1 => {
                let frag = vocab[rng.below(vocab.len())];
                out.splice(at..at, frag.iter().copied());
            }
            2 => {
                let len = rng.below(40).min(out.len() - at);
                let piece = out[at..at + len].to_vec();
                let to = rng.below(out.len() + 1);
                out.splice(to..to, piece);
            }
            3 if at < out.len() => out[at] = rng.next_u64() as u8,
            4 => out.truncate(at),
            _ if at < out.len() => out[at] ^= 1 << rng.below(8),
            _ => {}
        }
    }
    out
}

/// Runs `f` for `cases` mutated inputs; `f` writes what it is about to try into its `String` first, so that a
/// panic is reported with the input that caused it.
fn never_panics(name: &str, default_seed: u64, cases: usize, mut f: impl FnMut(&mut Rng, &mut String)) {
    let seed = seed(default_seed);
    let mut rng = Rng::new(seed);
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut input = String::new();
    let result = catch_unwind(AssertUnwindSafe(|| {
        for _ in 0..cases {
            f(&mut rng, &mut input);
        }
    }));
    std::panic::set_hook(previous_hook);
    if result.is_err() {
        panic!("{name}: panicked (seed {seed}; rerun with CUTEC_SEED={seed}) on input:\n{input}");
    }
}

const NPY_VOCAB: &[&[u8]] = &[
    b"(",
    b")",
    b",",
    b"[",
    b"]",
    b"{",
    b"}",
    b"'",
    b"\"",
    b":",
    b"'shape'",
    b"'descr'",
    b"'fortran_order'",
    b"True",
    b"False",
    b"None",
    b"L",
    b"0",
    b"99999999999999999999",
    b"18446744073709551615",
    b"4294967296",
    b"'<f4'",
    b"'>f8'",
    b"'|V2'",
    b"'<c8'",
    b"'<U3'",
    b"\n",
    b"\x00",
    b"\xff\xff\xff\xff",
    b"\x93NUMPY\x02\x00",
];

/// A well-formed file whose header holds extreme values: shapes whose products overflow, odd types and sizes, a
/// little data or none.
fn random_header(rng: &mut Rng) -> Vec<u8> {
    const EXTENTS: &[&str] = &["0", "1", "2", "3", "4294967296", "4611686018427387904", "18446744073709551615"];
    const DESCRS: &[&str] = &["<f4", ">f8", "|b1", "<u2", "|V2", "<i8", "<f18446744073709551615", "<c8", "|u1"];
    let extents: Vec<&str> = (0..rng.below(5)).map(|_| EXTENTS[rng.below(EXTENTS.len())]).collect();
    let shape = if extents.len() == 1 { format!("({},)", extents[0]) } else { format!("({})", extents.join(", ")) };
    let order = ["False", "True"][rng.below(2)];
    let dict =
        format!("{{'descr': '{}', 'fortran_order': {order}, 'shape': {shape}, }}", DESCRS[rng.below(DESCRS.len())]);
    let mut file = b"\x93NUMPY\x01\x00".to_vec();
    file.extend((dict.len() as u16 + 1).to_le_bytes());
    file.extend(dict.as_bytes());
    file.push(b'\n');
    file.extend(std::iter::repeat_n(0u8, [0, 1, 8, 24][rng.below(4)]));
    file
}

#[test]
fn mutated_npy_files_are_read_or_refused() {
    const CASES: usize = 4_000;
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    for (i, dtype) in DType::ALL.into_iter().enumerate() {
        let shape: &[usize] = [&[3, 2][..], &[5], &[], &[2, 0, 3], &[1, 1, 4]][i % 5];
        let count: usize = shape.iter().product();
        let mut file = Vec::new();
        let bytes = cutec_runtime::fill::random_elements(dtype, count, 1, 0);
        write_npy(&mut file, dtype, shape, &bytes, &mut |_| {}).expect("writing to memory");
        seeds.push(file);
    }
    let (mut read, mut refused) = (0usize, 0usize);
    never_panics("npy", 0x4E9F, CASES, |rng, shown| {
        let input = if rng.below(2) == 0 {
            let pick = rng.below(seeds.len());
            mutate(rng, &seeds[pick], NPY_VOCAB)
        } else {
            random_header(rng)
        };
        *shown = format!("{:?}", String::from_utf8_lossy(&input));
        match read_npy(Cursor::new(&input), &mut |_| {}) {
            Ok(array) => {
                let elements: usize = array.shape.iter().product();
                assert_eq!(array.bytes.len(), elements * array.size, "the data must match the header's shape");
                read += 1;
                for dtype in DType::ALL {
                    if let Ok(bytes) = npy_to_elements(dtype, array.clone()) {
                        assert_eq!(bytes.len(), elements * dtype.size_bytes() as usize, "{dtype}");
                    }
                }
            }
            Err(e) => {
                assert!(!e.to_string().is_empty());
                refused += 1;
            }
        }
    });
    eprintln!("npy mutation test: {CASES} files, {read} read, {refused} refused");
    assert!(read > CASES / 100 && refused > CASES / 4, "mutations should both pass and fail: {read} read");
}

/// The manifests of the examples the back end compiles.
fn example_manifests() -> Vec<String> {
    [("copy", None), ("transpose", None), ("gemm_simt", None), ("softmax", Some(4096)), ("rmsnorm", Some(4096))]
        .into_iter()
        .map(|(name, n)| {
            let path = cutec_tests::repo_root().join(format!("examples/{name}.cute"));
            let src = std::fs::read_to_string(&path).expect("readable");
            let opts = cutec::build::BuildOptions {
                defines: n.map(|n| vec![("N".to_string(), n.into())]).unwrap_or_default(),
                ..Default::default()
            };
            match cutec::build::build_source(name, &src, &opts) {
                Ok((_, art)) => art.manifest.to_json_pretty(),
                Err(_) => panic!("examples/{name}.cute does not build"),
            }
        })
        .collect()
}

/// Options naming every dimension (with `dims`' values in turn) and every scalar (as `1`).
fn options(kernel: &Kernel, dims: &[i64]) -> RunOptions {
    RunOptions {
        kernel: kernel.name.clone(),
        dims: kernel.dims.iter().zip(dims.iter().cycle()).map(|(d, &v)| (d.name.clone(), v)).collect(),
        scalars: kernel
            .params
            .iter()
            .filter(|p| matches!(p, Param::Scalar(_)))
            .map(|p| (p.name().to_owned(), "1".to_owned()))
            .collect(),
        ..RunOptions::default()
    }
}

/// Plans the arguments, checks them against 80 GiB of free memory, and checks the launch with made-up addresses:
/// what `cutec run` does before and instead of touching the GPU. Returns whether the launch check accepted.
fn plan_and_check(kernel: &Kernel, opts: &RunOptions) -> bool {
    let Ok(tensors) = plan_tensors(kernel, opts) else { return false };
    let shapes: Vec<(&str, DType, &[usize])> = tensors.iter().map(|(n, d, s)| (n.as_str(), *d, s.as_slice())).collect();
    let _ = check_fits(&shapes, 80 << 30, 140 << 30, 0, "a device");
    let mut tensors = tensors.into_iter();
    let mut args = Vec::new();
    for (i, param) in kernel.params.iter().enumerate() {
        args.push(match param {
            Param::Scalar(s) => ArgDesc::Scalar(ScalarValue::parse(s.dtype, "1").unwrap_or(ScalarValue::I32(1))),
            Param::Tensor(_) => {
                let Some((_, dtype, shape)) = tensors.next() else { return false };
                let shape: Vec<i64> = shape.iter().map(|&e| e as i64).collect();
                let Some(strides) = TensorDesc::row_major_strides(&shape) else { return false };
                let len = shape.iter().try_fold(1u64, |a, &e| a.checked_mul(e as u64)).unwrap_or(u64::MAX);
                ArgDesc::Tensor(TensorDesc { dtype, shape, strides, ptr: (i as u64 + 1) << 40, len, device: 0 })
            }
        });
    }
    check_launch(kernel, 0, &args).is_ok()
}

const DIM_VOCAB: &[&[u8]] = &[
    b"=",
    b"-",
    b"+",
    b"0x",
    b"_",
    b" ",
    b"0",
    b"1",
    b"9223372036854775807",
    b"18446744073709551616",
    b"-9223372036854775808",
    b"M",
    b"N",
    b"K",
    b"e9",
    b".5",
    b"\xc3\xa9",
    b"\x00",
    b"==",
];

#[test]
fn mutated_dim_values_are_planned_or_refused() {
    const CASES: usize = 3_000;
    let kernels: Vec<Kernel> = example_manifests()
        .iter()
        .flat_map(|json| Manifest::from_json(json).expect("the compiler's manifests are valid").kernels)
        .collect();
    let (mut parsed, mut launched) = (0usize, 0usize);
    never_panics("--dim", 0xD1A5, CASES, |rng, shown| {
        let kernel = &kernels[rng.below(kernels.len())];
        let mut opts = options(kernel, &[1000, 777, 333]);
        let Some(target) = kernel.dims.get(rng.below(kernel.dims.len().max(1))) else { return };
        let text = format!("{}={}", target.name, [4096, 1, 1_000_003][rng.below(3)]);
        let mutated = String::from_utf8_lossy(&mutate(rng, text.as_bytes(), DIM_VOCAB)).into_owned();
        *shown = format!("--dim {mutated:?} for kernel {}", kernel.name);
        match cutec::parse_define(&mutated) {
            Ok((name, value)) => {
                parsed += 1;
                opts.dims.retain(|(n, _)| *n != target.name);
                opts.dims.push((name, value));
                launched += usize::from(plan_and_check(kernel, &opts));
            }
            Err(e) => assert!(!e.is_empty()),
        }
    });
    eprintln!("--dim mutation test: {CASES} values, {parsed} parsed, {launched} passed the launch check");
    assert!(parsed > CASES / 4 && launched > 0, "{parsed} parsed, {launched} launched");
}

const JSON_VOCAB: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"\"",
    b"null",
    b"true",
    b"0",
    b"-1",
    b"1e400",
    b"9223372036854775807",
    b"18446744073709551616",
    b"\"M\"",
    b"\"N\"",
    b"\"div\"",
    b"\"mul\"",
    b"\"grid\"",
    b"\"block\"",
    b"\"dims\"",
    b"\"shape\"",
    b"\"stride\"",
    b"\"i32\"",
    b"\"u64\"",
    b"\"bf16\"",
    b"\"tensor\"",
    b"\"scalar\"",
    b"\"write\"",
    b"{\"op\": \"div\", \"args\": [32, 0]}",
    b"[\"M\", \"M\"]",
];

#[test]
fn mutated_manifests_are_loaded_or_refused() {
    const CASES: usize = 3_000;
    let manifests = example_manifests();
    let (mut loaded, mut launched) = (0usize, 0usize);
    never_panics("manifest", 0x3A2F, CASES, |rng, shown| {
        let pick = rng.below(manifests.len());
        let input = mutate(rng, manifests[pick].as_bytes(), JSON_VOCAB);
        let text = String::from_utf8_lossy(&input).into_owned();
        shown.clone_from(&text);
        match Manifest::from_json(&text) {
            Ok(manifest) => {
                loaded += 1;
                assert!(manifest.validate().is_ok(), "from_json returned a manifest that does not validate");
                for kernel in &manifest.kernels {
                    for dims in [[1000, 777, 333], [0, 1, 2], [i64::MAX, 3, -5]] {
                        launched += usize::from(plan_and_check(kernel, &options(kernel, &dims)));
                    }
                }
            }
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    });
    eprintln!("manifest mutation test: {CASES} manifests, {loaded} loaded, {launched} launch checks passed");
    assert!(loaded > CASES / 50 && launched > 0, "{loaded} loaded, {launched} launched");
}
