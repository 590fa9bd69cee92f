//! Integer division, remainder and shifts have a defined result for every operand (PTX's), so no kernel lets
//! LLVM assume "this cannot happen" and fold a store away: each kernel here stores only where an operation that
//! is undefined in plain LLVM IR (`sdiv` by zero, `MIN / -1`, a shift by the bit width) is certain to happen.

use crate::common::compile_ok;
use cutec_ir::{BinaryOp, CompareOp, Handle, KernelBuilder, Module, PipelineOptions, Scalar, run_pipeline};

type Expr = Handle<cutec_ir::Expr>;

/// A kernel `k(w: ptr, v: i32, y: i32)` whose body `body(b, w, v, y)` makes; compiled after the pipeline.
fn ptx_of(body: impl FnOnce(&mut KernelBuilder, Expr, Expr, Expr)) -> String {
    let mut b = KernelBuilder::new("k");
    let w = b.ptr_param("w", 4);
    let v = b.scalar_param("v", Scalar::I32);
    let y = b.scalar_param("y", Scalar::I32);
    body(&mut b, w, v, y);
    let mut module = Module { kernels: vec![b.finish()] };
    if let Err(e) = run_pipeline(&mut module, PipelineOptions { verify_each: true, ..Default::default() }) {
        panic!("{e}\n{}", cutec_ir::print(&module));
    }
    compile_ok(&module, &[]).ptx
}

/// The `st.global` lines of the PTX.
fn stores(ptx: &str) -> Vec<&str> {
    ptx.lines().filter(|l| l.contains("st.global")).collect()
}

/// `if y == value { then(b) }`.
fn when_y_is(b: &mut KernelBuilder, y: Expr, value: i32, then: impl FnOnce(&mut KernelBuilder)) {
    let c = b.i32(value);
    let cond = b.compare(CompareOp::Eq, y, c);
    b.if_then(cond, then);
}

#[test]
fn division_by_zero_is_minus_one_and_keeps_the_store() {
    let ptx = ptx_of(|b, w, v, y| {
        when_y_is(b, y, 0, |b| {
            let q = b.div(v, y);
            b.store(w, q, 4);
        })
    });
    let st = stores(&ptx);
    assert!(st.len() == 1 && st[0].contains("-1;"), "{ptx}");
}

#[test]
fn remainder_by_zero_is_the_dividend_and_keeps_the_store() {
    let ptx = ptx_of(|b, w, v, y| {
        when_y_is(b, y, 0, |b| {
            let r = b.rem(v, y);
            b.store(w, r, 4);
        })
    });
    assert_eq!(stores(&ptx).len(), 1, "{ptx}");
}

#[test]
fn min_divided_by_minus_one_wraps_and_keeps_the_store() {
    let ptx = ptx_of(|b, w, v, y| {
        when_y_is(b, y, -1, |b| {
            let min = b.i32(i32::MIN);
            let is_min = b.compare(CompareOp::Eq, v, min);
            b.if_then(is_min, |b| {
                let q = b.div(v, y);
                b.store(w, q, 4);
            });
        })
    });
    let st = stores(&ptx);
    assert!(st.len() == 1 && st[0].contains("-2147483648;"), "{ptx}");
}

#[test]
fn shifts_by_the_width_or_more_clamp_and_keep_the_store() {
    for op in [BinaryOp::Shl, BinaryOp::Shr] {
        let ptx = ptx_of(|b, w, v, y| {
            let (width, last) = (b.i32(32), b.i32(31));
            let wide = b.compare(CompareOp::Ge, y, width);
            b.if_then(wide, |b| {
                // `v << y` is 0 and `v >> y` is `v >> 31` (the sign fill): the condition is true.
                let shifted = b.binary(op, v, y);
                let expected = if op == BinaryOp::Shl { b.i32(0) } else { b.binary(BinaryOp::Shr, v, last) };
                let same = b.compare(CompareOp::Eq, shifted, expected);
                b.if_then(same, |b| {
                    let one = b.i32(1);
                    b.store(w, one, 4);
                });
            });
        });
        let st = stores(&ptx);
        assert!(st.len() == 1 && st[0].contains(", 1;"), "{op:?}:\n{ptx}");
        // Proven true from the clamping, the inner condition is gone: one comparison with 32 (or 31) is left.
        assert!(!ptx.contains("shl.b32") && !ptx.contains("shr.s32"), "{op:?}:\n{ptx}");
    }
}

/// The hand-built kernels of the suite keep every store too (the examples are checked in `tests/suite`).
#[test]
fn every_global_store_of_the_fixtures_reaches_the_ptx() {
    for mut module in [cutec_ir::fixtures::copy(), cutec_ir::fixtures::softmax(), cutec_ir::fixtures::kitchen_sink()] {
        run_pipeline(&mut module, PipelineOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let ptx = compile_ok(&module, &[]).ptx;
        for k in &module.kernels {
            if cutec_ir::effects::has_store_to(k, cutec_ir::AddrSpace::Global) {
                assert!(ptx.contains("st.global"), "{} lost its stores:\n{ptx}", k.name);
            }
        }
    }
}
