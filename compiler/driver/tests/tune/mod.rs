//! `cutec tune` without a GPU: its usage errors, the compile phase (in parallel, the same PTX as one build at a
//! time, failures reported and not fatal), and the tuning file as `build --tuning` and `run --tuning` read it.

use super::{code, cutec, one_error, primary_text, stderr, temp_dir};
use cutec::DefineValue;
use cutec::build::{BuildOptions, build_source};
use cutec::tune::compile::compile_all;
use cutec::tune::file::source_hash;

const GEMM: &str = "examples/gemm_sm90.cute";
const SHAPE: &str = "M=4096,N=4096,K=4096";

#[test]
fn space_and_shape_mistakes_are_located_usage_errors() {
    #[rustfmt::skip]
    let cases: [(&[&str], &str, &str, &str); 9] = [
        (&["--space", "STAGE=3,4"], "E0411", "kernel `gemm` has no const parameter `STAGE`", "--space STAGE=3,4"),
        (&["--space", "K=64"], "E0411", "`K` is a dynamic dimension of `gemm`, not a const parameter", "--space K=64"),
        (&["--space", "a=1"], "E0411", "`a` is a parameter of `gemm`, not a const parameter", "--space a=1"),
        (&["--space", "BN=true"], "E0411", "`BN` is an int; `true` is not", "--space BN=true"),
        (&["--space", "BN=128", "-D", "BN=64"], "E0404", "`BN` is both swept (--space) and fixed (-D)", "--space BN=128"),
        (&["--space", "BN=128", "--space", "BN=64"], "E0407", "--space BN is given twice", "--space BN=64"),
        (&["--space", "BN=1,2,3,4,5,6,7,8", "--space", "BM=1,2,3,4,5,6,7,8", "--space", "STAGES=1,2,3,4,5,6,7,8",
           "--space", "BK=1,2,3,4,5,6,7,8,9"], "E0411", "the space has 8 x 8 x 8 x 9 configurations", "--space BN=1,2,3,4,5,6,7,8"),
        (&["--flops", "2*M*N*Q"], "E0411", "`Q` is not a dimension of `gemm`", "--flops 2*M*N*Q"),
        (&["--shape", "M=1,N=1,K=1", "--reference", "c=c.npy"], "E0404", "--reference gives the output of one shape",
         "--reference c=c.npy"),
    ];
    for (extra, want_code, says, at) in cases {
        let args = [&["tune", GEMM, "--shape", SHAPE, "--compile-only"], extra].concat();
        let d = one_error(&args, 2);
        assert_eq!(d["code"], want_code, "{args:?}: {d}");
        assert!(d["message"].as_str().unwrap_or_default().starts_with(says), "{args:?}: {d}");
        let start = d["labels"][0]["start"].as_u64().unwrap_or(0);
        assert_eq!(primary_text(&d), Some(format!("<command line>:{start}..{}", start as usize + at.len())), "{d}");
    }
    // The closest const parameter is suggested; a dimension is not suggested as a const parameter.
    let d = one_error(&["tune", GEMM, "--shape", SHAPE, "--space", "STAGE=3"], 2);
    assert_eq!(d["help"][0], "did you mean `STAGES`?", "{d}");
    assert!(d["notes"][0].as_str().unwrap_or_default().contains("BM, BN, BK, STAGES"), "{d}");
    let d = one_error(&["tune", GEMM, "--shape", "M=4096,N=4096", "--space", "BN=128"], 2);
    assert_eq!(d["message"], "this shape gives no value of `K`", "{d}");
    let d = one_error(&["tune", GEMM, "--shape", SHAPE, "--shape", "K=4096,M=4096,N=4096"], 2);
    assert_eq!(d["code"], "E0407", "the same shape in another order: {d}");
    let d = one_error(&["tune", GEMM, "--shape", "M=4096,P=1,N=4096,K=4096"], 2);
    assert_eq!(d["message"], "kernel `gemm` has no dynamic dimension `P`", "{d}");
    // What clap refuses: values that do not parse.
    for bad in [["--space", "BN=128,128"], ["--space", "BN"], ["--shape", "M=x"], ["--jobs", "0"]] {
        let args = [&["tune", GEMM, "--shape", SHAPE][..], &bad[..]].concat();
        assert_eq!(one_error(&args, 2)["code"], "E0403", "{args:?}");
    }
    // The kernel is named when the file has several, and checked when named.
    let d = one_error(&["tune", GEMM, "--kernel", "gem", "--shape", SHAPE], 2);
    assert_eq!((d["code"].as_str(), d["help"][0].as_str()), (Some("E0405"), Some("did you mean `gemm`?")), "{d}");
}

#[test]
fn the_compile_phase_reports_configurations_that_do_not_build_and_goes_on() {
    let dir = temp_dir("tune-compile");
    let out = dir.join("t.json");
    let o = cutec(&[
        "tune",
        GEMM,
        "--shape",
        SHAPE,
        "--space",
        "BN=128,256",
        "--space",
        "STAGES=3,5",
        "--compile-only",
        "-o",
        out.to_str().unwrap_or_default(),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.starts_with(
            "tune gemm in examples/gemm_sm90.cute: 5 configurations (BN: 2 x STAGES: 2; baseline BN=256 STAGES=4)"
        ),
        "{text}"
    );
    // The defaults (4 stages) are outside the space: they are compiled too, as the baseline.
    assert!(text.contains("compiled 5 configurations in ") && text.contains(": 4 built, 1 skipped"), "{text}");
    // 5 stages of 48 KiB do not fit in shared memory, even with the epilogue staged in pieces (4 do: two
    // pieces of 64 x 128 per warpgroup).
    assert!(text.contains("  skipped BN=256 STAGES=5: E0324 a ring of 5 stages"), "{text}");
    assert!(!out.exists(), "--compile-only writes nothing");
    // A file that is not a tuning file is refused before anything is compiled.
    std::fs::write(&out, "{\"version\": 7}").expect("written");
    let d = one_error(&["tune", GEMM, "--shape", SHAPE, "-o", out.to_str().unwrap_or_default()], 1);
    assert_eq!(d["code"], "E0412", "{d}");
    assert!(d["message"].as_str().unwrap_or_default().contains("version 7"), "{d}");
    // A baseline that does not compile ends the tuning: nothing to compare with.
    let d = one_error(&["tune", GEMM, "--shape", SHAPE, "-D", "STAGES=9", "--compile-only"], 1);
    assert_eq!(d["code"], "E0401", "{d}");
    assert!(d["message"].as_str().unwrap_or_default().contains("E0324"), "{d}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn parallel_compilation_gives_the_ptx_of_one_build_at_a_time() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(GEMM);
    let src = std::fs::read_to_string(&path).expect("the example");
    let base = BuildOptions { kernel: Some("gemm".into()), ..BuildOptions::default() };
    let configs: Vec<Vec<(String, DefineValue)>> = [(128, 3), (128, 4), (256, 3), (256, 5), (64, 5), (192, 3)]
        .iter()
        .map(|&(bn, s)| vec![("BN".to_owned(), DefineValue::Int(bn)), ("STAGES".to_owned(), DefineValue::Int(s))])
        .collect();
    let (outcomes, _, assembled) = compile_all(GEMM, &src, &base, &configs, 3, false, &|_, _| {});
    assert!(assembled.is_none());
    assert_eq!(outcomes.len(), configs.len());
    for (c, o) in configs.iter().zip(&outcomes) {
        let mut opts = base.clone();
        opts.defines.extend(c.iter().cloned());
        match (build_source(GEMM, &src, &opts), o) {
            (Ok((_, art)), Ok(built)) => {
                assert!(art.ptx == built.ptx, "{c:?}: the PTX differs");
                assert_eq!(art.manifest, built.manifest, "{c:?}");
            }
            (Err(f), Err(skip)) => assert_eq!(f.diagnostics[0].code, skip.code, "{c:?}"),
            (a, b) => panic!("{c:?}: alone {}, in parallel {}", a.is_ok(), b.is_ok()),
        }
    }
    assert!(outcomes[3].as_ref().is_err_and(|s| s.code == "E0324"), "BN=256 with 5 stages does not fit");
    assert_eq!(outcomes.iter().filter(|o| o.is_ok()).count(), 5);
}

#[test]
fn build_and_run_use_the_tuning_file_entry_for_their_shape() {
    let dir = temp_dir("tuning-file");
    let file = dir.join("t.json");
    let src = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(GEMM))
        .expect("the example");
    let entry = |m: i64, device: &str, bn: i64| {
        serde_json::json!({ "source_hash": source_hash(&src), "kernel": "gemm", "device": device,
            "shape": { "M": m, "N": 4096, "K": 4096 }, "consts": { "BN": bn, "STAGES": 4 },
            "time_us": 500.0, "default_time_us": 600.0 })
    };
    let json = serde_json::json!({ "version": 1, "entries": [entry(4096, "NVIDIA H200", 128), entry(8192, "NVIDIA H200", 128),
        entry(8192, "NVIDIA H100", 64)] });
    std::fs::write(&file, json.to_string()).expect("written");
    let f = file.to_str().unwrap_or_default();
    let consts = |extra: &[&str]| {
        let args = [&["build", GEMM, "--emit", "manifest", "-o", "-", "--tuning", f, "--color=never"], extra].concat();
        let o = cutec(&args);
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
        let m: serde_json::Value = serde_json::from_slice(&o.stdout).expect("a manifest");
        (m["kernels"][0]["const_params"].clone(), stderr(&o))
    };
    // An exact match: its consts, with a note saying so.
    let (c, err) = consts(&["--shape", "K=4096,N=4096,M=4096"]);
    assert_eq!((c["BN"].as_i64(), c["STAGES"].as_i64()), (Some(128), Some(4)), "{err}");
    assert!(
        err.contains("note[E0441]: tuning: `gemm` at K=4096,N=4096,M=4096 on NVIDIA H200: BN=128 STAGES=4"),
        "{err}"
    );
    // -D wins over the file.
    let (c, err) = consts(&["--shape", SHAPE, "-D", "STAGES=3"]);
    assert_eq!((c["BN"].as_i64(), c["STAGES"].as_i64()), (Some(128), Some(3)), "{err}");
    assert!(err.contains("-D STAGES=3 overrides the file's STAGES=4"), "{err}");
    // No entry for the shape: the defaults, with a warning listing what the file has.
    let (c, err) = consts(&["--shape", "M=1024,N=4096,K=4096"]);
    assert_eq!((c["BN"].as_i64(), c["STAGES"].as_i64()), (Some(256), Some(4)), "{err}");
    assert!(err.contains("warning[E0441]: tuning: no entry for `gemm` at M=1024,N=4096,K=4096"), "{err}");
    assert!(err.contains("K=4096,M=4096,N=4096 on NVIDIA H200"), "{err}");
    // Entries for two devices and none chosen (no GPU here): a usage error; choosing one works.
    let d = one_error(
        &["build", GEMM, "--emit", "manifest", "-o", "-", "--tuning", f, "--shape", "M=8192,N=4096,K=4096"],
        2,
    );
    assert!(d["message"].as_str().unwrap_or_default().contains("several devices (NVIDIA H200, NVIDIA H100)"), "{d}");
    let (c, _) = consts(&["--shape", "M=8192,N=4096,K=4096", "--tuning-device", "NVIDIA H100"]);
    assert_eq!(c["BN"].as_i64(), Some(64));
    // An edited source no longer matches.
    let edited = dir.join("gemm.cute");
    std::fs::write(&edited, format!("{src}\n// edited\n")).expect("written");
    let o = cutec(&[
        "build",
        edited.to_str().unwrap_or_default(),
        "--emit",
        "manifest",
        "-o",
        "-",
        "--tuning",
        f,
        "--shape",
        SHAPE,
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("another text of its source"), "{}", stderr(&o));
    // Usage: --shape without --tuning, --tuning on a compiled module; a broken file is an error of the input.
    assert_eq!(one_error(&["build", GEMM, "--shape", SHAPE], 2)["code"], "E0404");
    assert_eq!(one_error(&["build", GEMM, "--tuning", f], 2)["code"], "E0403", "--tuning needs --shape");
    assert_eq!(one_error(&["run", "gemm.ptx", "--kernel", "gemm", "--tuning", f], 2)["code"], "E0404");
    std::fs::write(&file, "[]").expect("written");
    assert_eq!(one_error(&["build", GEMM, "--tuning", f, "--shape", SHAPE], 1)["code"], "E0412");
    std::fs::remove_dir_all(&dir).ok();
}
