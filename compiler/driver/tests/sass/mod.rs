//! The machine code of the examples, checked without a GPU: each example of [`SASS`] is built by the `cutec`
//! binary to PTX, assembled by ptxas 13.0 for sm_90a (`-v --warn-on-spills`) and disassembled by
//! `cuobjdump --dump-sass`. An example passes when ptxas reports 0 bytes of spill stores and loads, prints no
//! warning and no coded advisory (C7508 `setmaxnreg` ignored, C7509/C7510/C7515 wgmma serialized, C7517/C7519
//! waits injected into the wgmma pipeline: ptxas prints these as `info`, not as warnings), and the SASS holds
//! every opcode its row lists and none it forbids.
//!
//! The tools come from `scripts/install-deps.sh` (PyPI wheels); a missing tool fails the test, never skips it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What one example's SASS must and must not contain. An opcode matches an instruction whose opcode is it or
/// starts with it followed by a `.`: `BAR.SYNC` matches `BAR.SYNC.DEFER_BLOCKING`, `LDS` does not match `LDSM`.
struct Expect {
    example: &'static str,
    /// `-D` values, as typed on the command line.
    defines: &'static [&'static str],
    has: &'static [&'static str],
    lacks: &'static [&'static str],
}

/// One row per example the compiler generates code for. `LDL`/`STL` are local memory: spills or arrays that
/// should have been registers.
#[rustfmt::skip]
const SASS: &[Expect] = &[
    Expect { example: "copy", defines: &[], has: &["LDG.E.128", "STG.E.128"], lacks: &["LDL", "STL"] },
    Expect { example: "grid_copy", defines: &[], has: &["LDG.E", "STG.E"], lacks: &["LDL", "STL", "BAR"] },
    Expect { example: "softmax_warp", defines: &["N=1024"], has: &["SHFL.BFLY", "LDG.E.128", "STG.E.128", "MUFU.EX2"], lacks: &["LDL", "STL", "BAR", "LDS", "STS"] },
    Expect { example: "softmax", defines: &["N=4096"], has: &["SHFL.BFLY", "BAR.SYNC", "LDS", "STS", "LDG.E.128", "STG.E.128"], lacks: &["LDL", "STL"] },
    Expect { example: "rmsnorm", defines: &["N=4096"], has: &["LDG.E.128", "STG.E.128", "F2FP.BF16", "MUFU.RSQ"], lacks: &["LDL", "STL"] },
    Expect { example: "transpose", defines: &[], has: &["BAR.SYNC", "LDS", "STS"], lacks: &["LDL", "STL"] },
    Expect { example: "tma_copy", defines: &[], has: &["UTMALDG.2D", "UTMASTG.2D", "SYNCS.ARRIVE.TRANS64", "SYNCS.PHASECHK.TRANS64.TRYWAIT"], lacks: &["LDL", "STL", "LDG", "STG"] },
    Expect { example: "tma_copy_batched", defines: &[], has: &["UTMALDG.3D", "UTMASTG.3D"], lacks: &["LDL", "STL", "LDG", "STG"] },
    Expect { example: "dsmem_exchange", defines: &[], has: &["ST.E", "UCGABAR_ARV", "UCGABAR_WAIT", "LDS"], lacks: &["LDL", "STL"] },
    Expect { example: "gemm_sm90_manual", defines: &[], has: &["HGMMA.64x256x16.F32.BF16", "UTMALDG.2D", "UTMALDG.2D.MULTICAST", "UTMASTG.2D", "SYNCS.PHASECHK.TRANS64.TRYWAIT", "SYNCS.ARRIVE.TRANS64.RED", "UCGABAR_ARV", "UCGABAR_WAIT", "USETMAXREG", "STSM.16.M88.4"], lacks: &["LDL", "STL", "STS"] },
    Expect { example: "gemm_sm90_manual", defines: &["TMA_STORE=false", "STAGES=4"], has: &["HGMMA.64x256x16.F32.BF16", "UTMALDG.2D", "F2FP.BF16.F32.PACK_AB", "STG.E"], lacks: &["LDL", "STL", "UTMASTG", "STSM"] },
    // Pingpong: each consumer warpgroup on its own 64 x 256 tile (or 128 x 128: two m64 wgmmas per k-step), the
    // epilogue in 64-column pieces through stmatrix and TMA stores.
    Expect { example: "gemm_sm90_pingpong", defines: &[], has: &["HGMMA.64x256x16.F32.BF16", "UTMALDG.2D", "UTMALDG.2D.MULTICAST", "UTMASTG.2D", "SYNCS.PHASECHK.TRANS64.TRYWAIT", "SYNCS.ARRIVE.TRANS64.RED", "UCGABAR_ARV", "UCGABAR_WAIT", "USETMAXREG", "STSM.16.M88.4"], lacks: &["LDL", "STL", "STS"] },
    Expect { example: "gemm_sm90_pingpong", defines: &["BM=128", "BN=128", "STAGES=6"], has: &["HGMMA.64x128x16.F32.BF16", "UTMALDG.2D", "UTMALDG.2D.MULTICAST", "UTMASTG.2D", "SYNCS.PHASECHK.TRANS64.TRYWAIT", "USETMAXREG", "STSM.16.M88.4"], lacks: &["LDL", "STL", "STS", "HGMMA.64x256x16"] },
    Expect { example: "gemm_fp8_manual", defines: &[], has: &["QGMMA.64x256x32.F32.E4M3.E4M3", "UTMALDG.2D", "UTMALDG.2D.MULTICAST", "UTMASTG.2D", "SYNCS.PHASECHK.TRANS64.TRYWAIT", "USETMAXREG", "STSM.16.M88.4", "FMUL"], lacks: &["LDL", "STL", "STS", "HGMMA"] },
    Expect { example: "gemm_fp8_manual", defines: &["TMA_STORE=false", "STAGES=4"], has: &["QGMMA.64x256x32.F32.E4M3.E4M3", "UTMALDG.2D", "F2FP.BF16.F32.PACK_AB", "STG.E"], lacks: &["LDL", "STL", "UTMASTG", "STSM", "HGMMA"] },
    // The fused epilogue beside the next mainloop: the consumers stage the tile (stmatrix) and go on; the
    // producer's spare warps read it back 16 bytes at a time, apply the GELU (MUFU.TANH) and store it with TMA.
    Expect { example: "gemm_epilogue_manual", defines: &[], has: &["HGMMA.64x256x16.F32.BF16", "UTMALDG.2D.MULTICAST", "UTMASTG.2D", "STSM.16.M88.4", "LDS.128", "MUFU.TANH", "SYNCS.ARRIVE.TRANS64", "USETMAXREG"], lacks: &["LDL", "STL"] },
    // The schedules the passes write: HGMMAs not serialized (no C7514), the ring's TMA loads and mbarrier waits,
    // the warp-specialized roles' register budgets, and the stmatrix + TMA-store epilogue `store` picks.
    Expect { example: "gemm_sm90", defines: &[], has: &["HGMMA.64x256x16.F32.BF16", "UTMALDG.2D", "UTMALDG.2D.MULTICAST", "UTMASTG.2D", "SYNCS.PHASECHK.TRANS64.TRYWAIT", "SYNCS.ARRIVE.TRANS64", "UCGABAR_ARV", "UCGABAR_WAIT", "USETMAXREG", "STSM.16.M88.4"], lacks: &["LDL", "STL", "STG"] },
    Expect { example: "gemm_sm90_persistent", defines: &[], has: &["HGMMA.64x256x16.F32.BF16", "UTMALDG.2D", "UTMALDG.2D.MULTICAST", "UTMASTG.2D", "UCGABAR_ARV", "UCGABAR_WAIT", "USETMAXREG", "STSM.16.M88.4"], lacks: &["LDL", "STL", "STG"] },
    Expect { example: "gemm_pipelined", defines: &[], has: &["HGMMA.64x256x16.F32.BF16", "UTMALDG.2D", "UTMASTG.2D", "SYNCS.PHASECHK.TRANS64.TRYWAIT", "STSM.16.M88.4", "BAR.SYNC"], lacks: &["LDL", "STL", "STG", "USETMAXREG"] },
    Expect { example: "gemm_fp8", defines: &[], has: &["QGMMA.64x256x32.F32.E4M3.E4M3", "UTMALDG.2D.MULTICAST", "UCGABAR_ARV", "UCGABAR_WAIT", "UTMASTG.2D", "USETMAXREG"], lacks: &["LDL", "STL", "HGMMA"] },
    // fp8 out: pairs of saturated e4m3 values into the swizzled staging tile, TMA stores; no byte-wide global stores.
    Expect { example: "gemm_fp8_e4m3_out", defines: &[], has: &["QGMMA.64x256x32.F32.E4M3.E4M3", "F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C", "STS.U16", "UTMASTG.2D", "UTMALDG.2D.MULTICAST", "USETMAXREG"], lacks: &["LDL", "STL", "STG", "HGMMA"] },
    // Per-row and per-column scales read in the epilogue (no spill: each thread's rows and columns load once).
    // The scales are tiles copied beside the mainloop (one-dimensional boxes), read from shared memory in pairs.
    Expect { example: "gemm_fp8_rowwise", defines: &[], has: &["QGMMA.64x256x32.F32.E4M3.E4M3", "UTMALDG.2D.MULTICAST", "UTMALDG.1D", "LDS.64", "ELECT", "UTMASTG.2D", "USETMAXREG"], lacks: &["LDL", "STL", "HGMMA", "LDG"] },
    // Split-K: the partials leave as f32 pairs from the accumulator's registers (no TMA store), and the
    // reduction reads W 16 bytes at a time and writes 4 bf16 at once; the e4m3 kernels run QGMMA and scale the
    // partials (FMUL) before they leave.
    Expect { example: "gemm_splitk", defines: &[], has: &["HGMMA.64x256x16.F32.BF16", "HGMMA.64x128x16.F32.BF16", "QGMMA.64x256x32.F32.E4M3.E4M3", "QGMMA.64x128x32.F32.E4M3.E4M3", "UTMALDG.2D", "SYNCS.PHASECHK.TRANS64.TRYWAIT", "USETMAXREG", "STG.E.64", "LDG.E.128", "F2FP.BF16.F32.PACK_AB", "FMUL"], lacks: &["LDL", "STL", "UTMASTG"] },
    // The same with 128-column k-tiles (two 128-byte boxes per row and stage).
    Expect { example: "gemm_splitk", defines: &["BK=128", "BN=128", "STAGES=4"], has: &["HGMMA.64x128x16.F32.BF16", "QGMMA.64x128x32.F32.E4M3.E4M3", "UTMALDG.2D", "STG.E.64"], lacks: &["LDL", "STL", "UTMASTG", "HGMMA.64x256x16"] },
    // Two consumer warpgroups over a k-range that may be empty (a split with no k-tile): the last wgmma wait stays
    // on the path that ran the loop, so ptxas does not serialize the wgmmas (C7515 before).
    Expect { example: "gemm_splitk", defines: &["BM=128", "BN=256", "STAGES=4"], has: &["HGMMA.64x256x16.F32.BF16", "QGMMA.64x256x32.F32.E4M3.E4M3", "UTMALDG.2D", "STG.E.64"], lacks: &["LDL", "STL", "UTMASTG"] },
    // The reduction through distributed shared memory: the partial tile into shared memory, the cluster barrier,
    // the peers' partials 16 bytes at a time (`ld.shared::cluster` is a generic LD), 4 bf16 of C at once; the
    // warp-specialized kernel's ring of mbarriers, and no `setmaxnreg` in either.
    Expect { example: "gemm_splitk_cluster", defines: &[], has: &["HGMMA.64x128x16.F32.BF16", "UTMALDG.2D", "SYNCS.PHASECHK.TRANS64.TRYWAIT", "STS.64", "UCGABAR_ARV", "UCGABAR_WAIT", "LD.E.128", "STG.E.64"], lacks: &["LDL", "STL", "UTMASTG", "USETMAXREG"] },
    // Swapped operands for skinny M: 64 rows of B in wgmma's M slot, 16 rows of A in its N slot (bf16 and e4m3),
    // C^T stored from registers 2 bytes at a time.
    Expect { example: "gemm_swap_ab", defines: &[], has: &["HGMMA.64x16x16.F32.BF16", "QGMMA.64x16x32.F32.E4M3.E4M3", "UTMALDG.2D", "SYNCS.PHASECHK.TRANS64.TRYWAIT", "USETMAXREG", "STG.E.U16", "FMUL"], lacks: &["LDL", "STL", "UTMASTG"] },
    Expect { example: "gemm_swap_ab", defines: &["BM=8"], has: &["HGMMA.64x8x16.F32.BF16", "QGMMA.64x8x32.F32.E4M3.E4M3", "UTMALDG.2D"], lacks: &["LDL", "STL", "UTMASTG"] },
    Expect { example: "gemm_batched", defines: &[], has: &["HGMMA.64x256x16.F32.BF16", "UTMALDG.3D", "UTMASTG.3D", "USETMAXREG"], lacks: &["LDL", "STL"] },
    // The bias is a tile copied beside the mainloop, read from shared memory in pairs: no global load.
    // `store(.., map = gelu)`: the spare warps read the staged tile back 16 bytes at a time (LDS.128) for the GELU.
    // The bias read by the spare warps (`with`): 8 predicated LDG per thread and tile, ahead of the map's loop.
    Expect { example: "gemm_epilogue", defines: &[], has: &["HGMMA.64x256x16.F32.BF16", "MUFU.TANH", "UTMALDG.2D.MULTICAST", "LDG.E", "LDS.128", "UTMASTG.2D", "STSM.16.M88.4", "SYNCS.ARRIVE.TRANS64", "USETMAXREG"], lacks: &["LDL", "STL", "UTMALDG.1D"] },
    Expect { example: "row_sum", defines: &[], has: &["UTMALDG.2D", "SYNCS.PHASECHK.TRANS64.TRYWAIT", "SYNCS.ARRIVE.TRANS64", "LDS", "SHFL.BFLY"], lacks: &["LDL", "STL", "LDG"] },
    // B stored K x N, scheduled: B's MN-major tile in 64-column boxes, each CTA of the cluster multicasting two.
    Expect { example: "gemm_kn", defines: &[], has: &["HGMMA.64x256x16.F32.BF16", "UTMALDG.2D", "UTMALDG.2D.MULTICAST", "UTMASTG.2D", "SYNCS.PHASECHK.TRANS64.TRYWAIT", "SYNCS.ARRIVE.TRANS64", "UCGABAR_ARV", "UCGABAR_WAIT", "USETMAXREG", "STSM.16.M88.4"], lacks: &["LDL", "STL", "STG"] },
    Expect { example: "gemm_kn", defines: &["BN=128", "STAGES=5", "CLUSTER_M=1"], has: &["HGMMA.64x128x16.F32.BF16", "UTMALDG.2D", "UTMASTG.2D", "USETMAXREG", "STSM.16.M88.4"], lacks: &["LDL", "STL", "STG", "UTMALDG.2D.MULTICAST"] },
    Expect { example: "gemm_sm90_kn", defines: &[], has: &["HGMMA.64x256x16.F32.BF16", "UTMALDG.2D", "SYNCS.PHASECHK.TRANS64.TRYWAIT"], lacks: &["LDL", "STL"] },
    Expect { example: "wgmma_rs", defines: &[], has: &["HGMMA.64x128x16.F32.BF16", "UTMALDG.2D", "UTMACCTL.PF", "LDG.E"], lacks: &["LDL", "STL"] },
    Expect { example: "gemm_simt", defines: &[], has: &["FFMA", "LDS", "STS", "BAR.SYNC"], lacks: &["LDL", "STL"] },
];

const INSTALL: &str = "run `bash scripts/install-deps.sh`, then `. scripts/env.sh`";

/// `name` from the directories of `PATH`, then from the directory the CUDA wheels install into (as the compiler
/// finds ptxas); a missing tool fails the test.
fn tool(name: &str) -> PathBuf {
    let wheel_bin = Command::new("python3")
        .args(["-c", "import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], 'cu13', 'bin'))"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(wheel_bin)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("`{name}` not found on PATH nor in the CUDA wheels: {INSTALL}"))
}

/// The ptxas the compiler uses (`CUTEC_PTXAS` first), which must be release 13.0: the GPU machine's toolkit.
fn ptxas() -> PathBuf {
    let ptxas = std::env::var_os("CUTEC_PTXAS").map_or_else(|| tool("ptxas"), PathBuf::from);
    let out = Command::new(&ptxas).arg("--version").output().unwrap_or_else(|e| panic!("{ptxas:?}: {e}; {INSTALL}"));
    let version = String::from_utf8_lossy(&out.stdout);
    assert!(version.contains("release 13.0"), "{ptxas:?} is not ptxas 13.0 ({INSTALL}):\n{version}");
    ptxas
}

/// `cuobjdump` and the directory of the `nvdisasm` it runs (`NVDISASM_PATH` names a directory).
fn cuobjdump() -> (PathBuf, PathBuf) {
    let nvdisasm_dir = match std::env::var_os("NVDISASM_PATH").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => tool("nvdisasm").parent().map(Path::to_path_buf).unwrap_or_default(),
    };
    assert!(nvdisasm_dir.join("nvdisasm").is_file(), "no nvdisasm in NVDISASM_PATH={nvdisasm_dir:?}: {INSTALL}");
    (tool("cuobjdump"), nvdisasm_dir)
}

/// Runs a command and returns its standard output and error together, failing with both if it fails.
fn run(command: &mut Command) -> String {
    let out = command.output().unwrap_or_else(|e| panic!("{command:?}: {e}"));
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{command:?} failed ({}):\n{text}", out.status);
    text
}

/// ptxas's lines that must not be there: warnings, and advisories with a message code such as `(C7508)`.
fn advisories(log: &str) -> Vec<&str> {
    let coded = |l: &str| {
        l.split("(C")
            .skip(1)
            .any(|rest| rest.split_once(')').is_some_and(|(n, _)| n.bytes().all(|b| b.is_ascii_digit())))
    };
    log.lines().filter(|l| l.to_ascii_lowercase().contains("warning") || coded(l)).map(str::trim).collect()
}

/// (spill store bytes, spill load bytes) of every `N bytes stack frame, N bytes spill stores, N bytes spill
/// loads` line of `ptxas -v` (one per function; `--warn-on-spills` repeats the numbers in its warning).
fn spills(log: &str) -> Vec<(u32, u32)> {
    let bytes = |line: &str, what: &str| -> Option<u32> {
        let item = line.split(',').find(|i| i.trim().ends_with(what))?;
        item.trim().split(' ').next()?.parse().ok()
    };
    log.lines()
        .filter(|l| l.contains("bytes stack frame"))
        .map(|l| {
            (bytes(l, "bytes spill stores").unwrap_or(u32::MAX), bytes(l, "bytes spill loads").unwrap_or(u32::MAX))
        })
        .collect()
}

/// The opcode of every instruction of `cuobjdump --dump-sass` output, predicates removed:
/// `/*0150*/  @!P0 LDG.E R9, desc[UR4][R4.64] ;` gives `LDG.E`.
fn opcodes(sass: &str) -> Vec<&str> {
    sass.lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix("/*")?;
            let (address, code) = rest.split_once("*/")?;
            if !address.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            let mut words = code.split_whitespace().skip_while(|w| w.starts_with('@'));
            words.next().map(|w| w.trim_end_matches(';'))
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Whether `opcode` is `wanted` or one of its forms (`wanted` followed by `.`).
fn matches(opcode: &str, wanted: &str) -> bool {
    opcode.strip_prefix(wanted).is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

/// Builds one example to PTX with the `cutec` binary, assembles it and disassembles the cubin; returns ptxas's
/// log and the SASS.
fn assemble(e: &Expect, dir: &Path, ptxas: &Path, cuobjdump: &(PathBuf, PathBuf)) -> (String, String) {
    let ptx = dir.join(format!("{}.ptx", e.example));
    let cubin = dir.join(format!("{}.cubin", e.example));
    let mut build = Command::new(env!("CARGO_BIN_EXE_cutec"));
    build.current_dir(super::root()).args(["build", &format!("examples/{}.cute", e.example), "--emit", "ptx"]);
    for d in e.defines {
        build.args(["-D", d]);
    }
    run(build.arg("-o").arg(&ptx));
    let log = run(Command::new(ptxas).args(["-arch=sm_90a", "-v", "--warn-on-spills"]).arg(&ptx).arg("-o").arg(&cubin));
    let (cuobjdump, nvdisasm_dir) = cuobjdump;
    let sass = run(Command::new(cuobjdump).env("NVDISASM_PATH", nvdisasm_dir).arg("--dump-sass").arg(&cubin));
    (log, sass)
}

#[test]
fn examples_assemble_without_spills_or_advisories_into_the_expected_sass() {
    let (ptxas, cuobjdump) = (ptxas(), cuobjdump());
    let dir = tempfile::tempdir().expect("temp dir");
    let mut failures = Vec::new();
    for e in SASS {
        let (log, sass) = assemble(e, dir.path(), &ptxas, &cuobjdump);
        let name = e.example;
        let spilled = spills(&log);
        if spilled.is_empty() || spilled.iter().any(|&s| s != (0, 0)) {
            failures.push(format!("{name}: spill (store, load) bytes {spilled:?}"));
        }
        for line in advisories(&log) {
            failures.push(format!("{name}: ptxas says `{line}`"));
        }
        let ops = opcodes(&sass);
        if ops.is_empty() {
            failures.push(format!("{name}: no instruction in the SASS:\n{sass}"));
        }
        for wanted in e.has {
            if !ops.iter().any(|op| matches(op, wanted)) {
                failures.push(format!("{name}: no {wanted} in the SASS"));
            }
        }
        for unwanted in e.lacks {
            let found: Vec<&&str> = ops.iter().filter(|op| matches(op, unwanted)).collect();
            if !found.is_empty() {
                failures.push(format!("{name}: {unwanted} must not be in the SASS, found {found:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "the SASS check failed:\n{}", failures.join("\n"));
}

/// The HGMMAs of `wgmma_rs` read A from registers: `HGMMA.64x128x16.F32.BF16 R24, R88, gdesc[UR4], R24` (A is a
/// register, B a descriptor), where the shared-memory form reads `gdesc[..]` for A as well.
#[test]
fn wgmma_rs_reads_a_from_registers() {
    let (ptxas, cuobjdump) = (ptxas(), cuobjdump());
    let dir = tempfile::tempdir().expect("temp dir");
    let row = SASS.iter().find(|e| e.example == "wgmma_rs").expect("a row for wgmma_rs");
    let (_, sass) = assemble(row, dir.path(), &ptxas, &cuobjdump);
    let hgmma: Vec<&str> = sass.lines().filter(|l| l.contains("HGMMA.")).collect();
    assert_eq!(hgmma.len(), 4, "one HGMMA per k-step of BK = 64:\n{sass}");
    for line in hgmma {
        let operands: Vec<&str> = line.split_once("HGMMA.").map_or("", |(_, r)| r).split(',').map(str::trim).collect();
        let a = operands.get(1).copied().unwrap_or_default();
        let b = operands.get(2).copied().unwrap_or_default();
        let register = a.strip_prefix('R').is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()));
        assert!(register && b.starts_with("gdesc["), "A from a register, B from a descriptor: `{}`", line.trim());
    }
}

/// The fp8 GEMM's mainloop is QGMMA (the fp8 tensor-core instruction), one per k32 step of BK = 128, both operands
/// read through shared-memory descriptors: `QGMMA.64x256x32.F32.E4M3.E4M3 R24, gdesc[UR16], R24` (A's and B's
/// descriptors as one uniform register pair).
#[test]
fn gemm_fp8_manual_runs_one_qgmma_per_k_step() {
    let (ptxas, cuobjdump) = (ptxas(), cuobjdump());
    let dir = tempfile::tempdir().expect("temp dir");
    let row = SASS.iter().find(|e| e.example == "gemm_fp8_manual").expect("a row for gemm_fp8_manual");
    let (_, sass) = assemble(row, dir.path(), &ptxas, &cuobjdump);
    let qgmma: Vec<&str> = sass.lines().filter(|l| l.contains("QGMMA.")).collect();
    assert_eq!(qgmma.len(), 4, "one QGMMA per k-step of BK = 128:\n{sass}");
    for line in qgmma {
        let operands: Vec<&str> = line.split_once("QGMMA.").map_or("", |(_, r)| r).split(',').map(str::trim).collect();
        assert!(
            operands.get(1).is_some_and(|a| a.starts_with("gdesc[")),
            "A and B from descriptors: `{}`",
            line.trim()
        );
    }
}

/// ptxas prints its performance advisories as `info` lines with a code; the check above must see them. A
/// `setmaxnreg` in a kernel without `.maxntid` is ignored (C7508).
#[test]
fn ptxas_advisories_fail_the_check() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ptx = dir.path().join("k.ptx");
    let kernel = "{\n\tsetmaxnreg.inc.sync.aligned.u32 240;\n\tret;\n}\n";
    std::fs::write(&ptx, format!(".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{kernel}"))
        .expect("write");
    let cubin = dir.path().join("k.cubin");
    let log =
        run(Command::new(ptxas()).args(["-arch=sm_90a", "-v", "--warn-on-spills"]).arg(&ptx).arg("-o").arg(&cubin));
    let found = advisories(&log);
    assert!(found.len() == 1 && found[0].contains("(C7508)"), "C7508 expected:\n{log}");
    assert_eq!(spills(&log), [(0, 0)], "{log}");
}

#[test]
fn sass_opcodes_are_read_without_predicates_and_matched_by_form() {
    let sass = [
        "\t\tFunction : k",
        "        /*00d0*/                   LDG.E.128 R8, desc[UR4][R2.64] ;          /* 0x0000000402087981 */",
        "                                                                             /* 0x000ea2000c1e1d00 */",
        "        /*0150*/              @!P0 LDSM.16.M88.4 R4, [R9] ;                  /* 0x0000000000000000 */",
        "        /*0160*/                   EXIT ;                                    /* 0x000000000000794d */",
    ]
    .join("\n");
    let ops = opcodes(&sass);
    assert_eq!(ops, ["LDG.E.128", "LDSM.16.M88.4", "EXIT"]);
    assert!(matches(ops[0], "LDG.E") && matches(ops[0], "LDG.E.128") && matches(ops[0], "LDG"));
    assert!(!matches(ops[1], "LDS") && matches(ops[1], "LDSM"));
    assert!(!matches(ops[0], "LDG.E.12"));
}

#[test]
fn spills_and_advisories_are_read_from_the_log() {
    let log = [
        "ptxas warning : Registers are spilled to local memory in function 'k', 8 bytes spill stores, 4 bytes spill \
         loads",
        "ptxas info    : Function properties for k",
        "    0 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads",
        "ptxas info    : Used 4 registers, used 0 barriers",
        "ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized",
        "ptxas info    : Compile time = 7.773 ms",
    ]
    .join("\n");
    let found = advisories(&log);
    assert!(found.len() == 2 && found[1].contains("(C7515)"), "{found:?}");
    assert_eq!(spills(&log), [(8, 4)]);
}
