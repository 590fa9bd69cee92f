//! `-O3`'s LLVM pipeline (`cutec_codegen::O3_PIPELINE`, `default<O3>` without the passes that change nothing
//! cutec emits) holds to its promise: every case of `scripts/ptx_identity.sh` (each example and book listing, with
//! the `-D` variants the GPU harness builds) compiles to the same PTX, byte for byte, as under LLVM's full
//! `default<O3>`. A new example that needs one of the removed passes fails here; `scripts/llvm_pipeline.py`
//! derives the pipeline again.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every case built into `dir` by `cutec` with `extra` appended to each command line.
fn save_all(dir: &Path, extra: &str) -> std::thread::JoinHandle<()> {
    let wrapper = dir.with_extension("sh");
    let script = format!("#!/bin/sh\nexec \"{}\" \"$@\" {extra}\n", env!("CARGO_BIN_EXE_cutec"));
    std::fs::write(&wrapper, script).expect("write the wrapper");
    let status = Command::new("chmod").arg("+x").arg(&wrapper).status().expect("chmod runs");
    assert!(status.success());
    let dir = dir.to_owned();
    std::thread::spawn(move || {
        let o = Command::new("bash")
            .arg("scripts/ptx_identity.sh")
            .arg("save")
            .arg(&dir)
            .arg(&wrapper)
            .current_dir(root())
            .output()
            .expect("ptx_identity.sh runs");
        assert!(o.status.success(), "ptx_identity.sh failed: {}", String::from_utf8_lossy(&o.stderr));
    })
}

#[test]
fn o3_pipeline_gives_default_o3_ptx() {
    let base = std::env::temp_dir().join(format!("cutec-o3-pipeline-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).expect("temp dir");
    let ours = base.join("ours");
    let llvm = base.join("llvm");
    // The default level is -O3; the two sets build side by side.
    let a = save_all(&ours, "");
    let b = save_all(&llvm, "--llvm-passes 'default<O3>'");
    a.join().expect("our pipeline's builds");
    b.join().expect("default<O3>'s builds");
    let mut cases = 0;
    let mut differ = Vec::new();
    for entry in std::fs::read_dir(&llvm).expect("default<O3>'s outputs") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("ptx") {
            continue;
        }
        cases += 1;
        let name = path.file_name().expect("name").to_owned();
        let theirs = std::fs::read(&path).expect("read");
        match std::fs::read(ours.join(&name)) {
            Ok(mine) if mine == theirs => {}
            _ => differ.push(name.to_string_lossy().into_owned()),
        }
    }
    // Every example with code builds (the listings and examples hold more than 30 kernels with PTX).
    assert!(cases >= 30, "only {cases} cases produced PTX under default<O3>");
    differ.sort();
    assert!(
        differ.is_empty(),
        "-O3's pipeline gives other PTX than default<O3> for {differ:?}: rerun scripts/llvm_pipeline.py --write"
    );
    let _ = std::fs::remove_dir_all(&base);
}
