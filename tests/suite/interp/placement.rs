//! The statements every thread runs beside a warp-specialized loop (issue 32), run on the CPU: the producer's
//! threads (0..127) must write what the program says they write, and the GEMM beside them stay right.
//! `scripts/gpu/ws_every_thread.cute` stores `e = 1` before the pipelined loop and `d = 2 x + 1` after it; the
//! variant adds a sum the threads keep in a loop (a variable only per-thread statements write), stored into `d`.

use super::{assert_close, matmul_nt, run_built};
use cutec::build::{BuildOptions, build_source};
use cutec::run::CpuOptions;
use cutec_tests::repo_root;

#[test]
fn every_thread_writes_what_the_program_says_beside_a_warp_specialized_loop() {
    let file = "scripts/gpu/ws_every_thread.cute";
    let source = std::fs::read_to_string(repo_root().join(file)).expect("the program exists");
    let store = "    d[tile, thread_idx.x] = x[thread_idx.x] * 2.0 + 1.0;\n";
    assert!(source.contains(store), "{file}: no line `{}`", store.trim());
    let summed = "    let mut s = 0.0;\n    for i in 0..T {\n        s += 1.0;\n    }\n    \
                  d[tile, thread_idx.x] = x[thread_idx.x] * 2.0 + s;\n";
    let (m, n, k) = (129usize, 264usize, 72usize);
    let tiles = m.div_ceil(128) * n.div_ceil(128);
    let dims = [("M", m as i64), ("N", n as i64), ("K", k as i64), ("T", tiles as i64)];
    for (what, source, plus) in
        [("stores", source.clone(), 1.0), ("a kept sum", source.replace(store, summed), tiles as f64)]
    {
        let (_, art) = build_source(file, &source, &BuildOptions::default())
            .unwrap_or_else(|f| panic!("{what}: builds: {:?}", f.diagnostics));
        // Two SMs: each CTA runs several tiles, the producer's copies of the stores in its loop over tiles too.
        let cpu = CpuOptions { sms: 2, ..CpuOptions::default() };
        let t = run_built(&art, "gemm", &dims, &["a", "b", "x"], &["c", "d", "e"], &[], cpu)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let want_c = matmul_nt(t.get("a"), t.get("b"), m, n, k);
        assert_close(&format!("{what}: c"), t.get("c"), &want_c, 1.0 / 128.0);
        let x = t.get("x");
        // As the kernel computes it, in f32 (2 x is exact, the sum rounds once).
        let want = |i: usize| f64::from(2.0 * x[i % 384] as f32 + plus as f32);
        let (d, e) = (t.get("d"), t.get("e"));
        assert_eq!((d.len(), e.len()), (tiles * 384, tiles * 384), "{what}: d and e");
        for i in 0..tiles * 384 {
            let at = format!("{what}: tile {}, thread {}", i / 384, i % 384);
            assert!(d[i] == want(i), "{at}: d is {}, the program says {}", d[i], want(i));
            assert!(e[i] == 1.0, "{at}: e is {}, the program says 1", e[i]);
        }
    }
}
