//! `cutec run --cpu`: the interpreter behind the command line, its outputs and its diagnostics.

use super::{code, cutec, stderr, temp_dir};

#[test]
fn run_cpu_writes_the_outputs_and_needs_no_gpu() {
    let dir = temp_dir("run-cpu");
    let (x, y) = (dir.join("x.npy"), dir.join("y.npy"));
    let (x_arg, y_arg) = (format!("x={}", x.display()), format!("y={}", y.display()));
    let o = cutec(&[
        "run",
        "examples/copy.cute",
        "--cpu",
        "--kernel",
        "copy",
        "--dim",
        "N=1003",
        "--save-input",
        &x_arg,
        "--output",
        &y_arg,
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("device=cpu") && out.contains("ran kernel=copy ctas=1") && out.contains("nan y 0"), "{out}");
    // The copy's output is its input, byte for byte (the same header and elements).
    assert_eq!(std::fs::read(&y).expect("y written"), std::fs::read(&x).expect("x saved"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn run_cpu_reports_a_race_at_both_statements() {
    let dir = temp_dir("run-cpu-race");
    let src = std::fs::read_to_string(super::root().join("examples/transpose.cute")).expect("exists");
    let racy = dir.join("racy.cute");
    std::fs::write(&racy, src.replace("    sync_threads();\n", "")).expect("written");
    let o = cutec(&[
        "run",
        racy.to_str().expect("utf-8"),
        "--cpu",
        "--kernel",
        "transpose",
        "--dim",
        "M=40",
        "--dim",
        "N=40",
        "--color=never",
    ]);
    assert_eq!(code(&o), 1);
    let err = stderr(&o);
    assert!(err.contains("error[E0508]: race"), "{err}");
    assert!(err.contains("this access") && err.contains("races with this one"), "{err}");
    assert!(err.contains("s[r, thread_idx.x]") && err.contains("s[thread_idx.x, r]"), "{err}");
    let o = cutec(&["explain", "E0508"]);
    assert_eq!(code(&o), 0);
    assert!(String::from_utf8_lossy(&o.stdout).contains("happens-before"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn run_cpu_needs_the_cute_file_and_no_gpu_options() {
    let o = cutec(&["run", "module.ptx", "--cpu", "--kernel", "copy", "--color=never"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("error[E0404]") && stderr(&o).contains("needs the `.cute` file"), "{}", stderr(&o));
    let o = cutec(&["run", "examples/copy.cute", "--cpu", "--bench", "--kernel", "copy", "--color=never"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("--bench"), "{}", stderr(&o));
}

#[test]
fn run_cpu_takes_a_schedule_and_a_number_of_sms() {
    let dims = ["--dim", "M=300", "--dim", "N=520", "--dim", "K=136"];
    let args = [&["run", "examples/gemm_sm90.cute", "--cpu", "--kernel", "gemm"][..], &dims[..]].concat();
    let o = cutec(&[&args[..], &["--schedule", "seed=5", "--sms", "2"]].concat());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // Two SMs: one cluster of two CTAs for the nine tiles.
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("grid=2x1x1 tiles=") && out.contains("ran kernel=gemm ctas=2"), "{out}");
    let o = cutec(&[&args[..], &["--schedule", "soon", "--color=never"]].concat());
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("earliest, latest or seed=N"), "{}", stderr(&o));
    // Both belong to --cpu.
    let o = cutec(&["run", "examples/copy.cute", "--kernel", "copy", "--sms", "2", "--color=never"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}

#[test]
fn tune_compile_only_checks_every_configuration_on_the_cpu() {
    let o = cutec(&[
        "tune",
        "examples/gemm_sm90.cute",
        "--compile-only",
        "--cpu",
        "--shape",
        "M=200,N=264,K=136",
        "--space",
        "STAGES=2,3",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for stages in [2, 3] {
        assert!(out.contains(&format!("cpu M=200,N=264,K=136 STAGES={stages}: agrees with the default")), "{out}");
    }
    // --cpu belongs to --compile-only (with a GPU, tune checks there).
    let o = cutec(&["tune", "examples/gemm_sm90.cute", "--cpu", "--shape", "M=64,N=64,K=64", "--color=never"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}

/// A launch whose tensors would not fit the host's memory is refused before anything is allocated (an
/// allocation failure would abort the process), at the `--dim` that makes it large.
#[test]
fn run_cpu_refuses_tensors_past_the_host_memory_it_allows() {
    let o =
        cutec(&["run", "examples/copy.cute", "--cpu", "--kernel", "copy", "--dim", "N=2000000000", "--color=never"]);
    assert_eq!(code(&o), 1);
    let err = stderr(&o);
    assert!(err.contains("error[E0424]") && err.contains("16000000000 bytes of host memory"), "{err}");
    assert!(err.contains("--dim N=2000000000"), "{err}");
}
