//! Kernels built by hand with [`KernelBuilder`]: examples of the builder API, and inputs for the tests of this
//! crate and of the back ends (they exercise what the first examples need before the lowering exists).

use crate::{AddrSpace, CompareOp, KernelBuilder, MathFn, Module, Scalar, ShuffleMode, Type, Unroll};
use crate::{Expr, Handle};

/// `copy.cute` by hand: each thread of a 256-thread CTA copies 4 contiguous `f32` (one 16-byte load and store)
/// when its 4 elements are in bounds, element by element otherwise.
pub fn copy() -> Module {
    const THREADS: i32 = 256;
    const VEC: i32 = 4;
    let mut b = KernelBuilder::new("copy");
    b.kernel_mut().block_size = Some([THREADS as u32, 1, 1]);
    let x = b.ptr_param("x", 16);
    let y = b.ptr_param("y", 16);
    let n = b.scalar_param("N", Scalar::I32);
    let tid = b.thread_idx_x();
    let cta = b.block_idx_x();
    let tile = b.i32(THREADS * VEC);
    let vec = b.i32(VEC);
    let tile_start = b.mul(cta, tile);
    let mine = b.mul(tid, vec);
    let first = b.add(tile_start, mine);
    let last = b.add(first, vec);
    let full = b.compare(CompareOp::Le, last, n);
    b.if_else(
        full,
        |b| {
            let f4 = Type::vector(Scalar::F32, 4);
            let src = b.offset(x, first, Type::F32);
            let v = b.load(src, f4, 16);
            let dst = b.offset(y, first, Type::F32);
            b.store(dst, v, 16);
        },
        |b| {
            let (zero, vec) = (b.i32(0), b.i32(VEC));
            b.for_range("i", zero, vec, 1, Unroll::Full, |b, i| {
                let at = b.add(first, i);
                let inside = b.compare(CompareOp::Lt, at, n);
                b.if_then(inside, |b| {
                    let src = b.offset(x, at, Type::F32);
                    let v = b.load(src, Type::F32, 4);
                    let dst = b.offset(y, at, Type::F32);
                    b.store(dst, v, 4);
                });
            });
        },
    );
    Module { kernels: vec![b.finish()] }
}

/// The reduction of `v` over a warp with butterfly shuffles (`warp_max`/`warp_sum` of `stdlib/reduce.cute`).
fn warp_reduce(b: &mut KernelBuilder, v: Handle<Expr>, combine: MathFnOrAdd) -> Handle<Expr> {
    let mut r = v;
    for i in 0..5 {
        let lane = b.i32(16 >> i);
        let other = b.shuffle(ShuffleMode::Bfly, r, lane);
        r = combine.apply(b, r, other);
    }
    r
}

#[derive(Clone, Copy)]
enum MathFnOrAdd {
    Max,
    Add,
}

impl MathFnOrAdd {
    fn apply(self, b: &mut KernelBuilder, x: Handle<Expr>, y: Handle<Expr>) -> Handle<Expr> {
        match self {
            MathFnOrAdd::Max => b.math(MathFn::Max, &[x, y]),
            MathFnOrAdd::Add => b.add(x, y),
        }
    }
}

/// `block_max`/`block_sum` of `stdlib/reduce.cute`: a warp reduction, partials through shared memory, a second
/// warp reduction; every thread gets the result.
fn block_reduce(b: &mut KernelBuilder, v: Handle<Expr>, combine: MathFnOrAdd, identity: f32) -> Handle<Expr> {
    let partial = b.alloc("partial", AddrSpace::Shared, Scalar::F32, 32, 16);
    let w = warp_reduce(b, v, combine);
    let tid = b.thread_idx_x();
    let (c31, c5, c0) = (b.i32(31), b.i32(5), b.i32(0));
    let lane = b.binary(crate::BinaryOp::And, tid, c31);
    let warp = b.binary(crate::BinaryOp::Shr, tid, c5);
    let lane0 = b.compare(CompareOp::Eq, lane, c0);
    b.if_then(lane0, |b| {
        let p = b.offset(partial, warp, Type::F32);
        b.store(p, w, 4);
    });
    b.barrier();
    let r = b.var("r", Type::F32);
    let id = b.f32(identity);
    b.write(r, id);
    let ntid = b.special(crate::SpecialReg::BlockDim(crate::Dim::X));
    let c32 = b.i32(32);
    let warps = b.div(ntid, c32);
    let has = b.compare(CompareOp::Lt, lane, warps);
    b.if_then(has, |b| {
        let p = b.offset(partial, lane, Type::F32);
        let v = b.load(p, Type::F32, 4);
        b.write(r, v);
    });
    let rv = b.read(r);
    let total = warp_reduce(b, rv, combine);
    b.barrier();
    total
}

/// `softmax.cute` by hand for rows of N = 4096 `f32`, 256 threads, 4-wide vectors: each thread keeps 16 values
/// of its row in a register array.
pub fn softmax() -> Module {
    const N: i32 = 4096;
    const THREADS: i32 = 256;
    const VEC: i32 = 4;
    const CHUNKS: i32 = N / (THREADS * VEC);
    const PER_THREAD: i32 = VEC * CHUNKS;
    let f4 = Type::vector(Scalar::F32, 4);
    let mut b = KernelBuilder::new("softmax");
    b.kernel_mut().block_size = Some([THREADS as u32, 1, 1]);
    let x = b.ptr_param("x", 16);
    let y = b.ptr_param("y", 16);
    let _m = b.scalar_param("M", Scalar::I32);
    let rx = b.alloc("rx", AddrSpace::Local, Scalar::F32, PER_THREAD as u32, 16);
    let tid = b.thread_idx_x();
    let row = b.block_idx_x();
    let n = b.i32(N);
    let row_start = b.mul(row, n);
    let vec = b.i32(VEC);
    let mine = b.mul(tid, vec);
    let thread_start = b.add(row_start, mine);
    let (zero, chunks, per_thread) = (b.i32(0), b.i32(CHUNKS), b.i32(PER_THREAD));

    // copy(tx, rx): one 16-byte load per chunk.
    b.for_range("c", zero, chunks, 1, Unroll::Full, |b, c| {
        let stride = b.i32(THREADS * VEC);
        let col = b.mul(c, stride);
        let at = b.add(thread_start, col);
        let src = b.offset(x, at, Type::F32);
        let v = b.load(src, f4, 16);
        let slot = b.mul(c, vec);
        let dst = b.offset(rx, slot, Type::F32);
        b.store(dst, v, 16);
    });

    let m = b.var("m", Type::F32);
    let neg_inf = b.f32(f32::NEG_INFINITY);
    b.write(m, neg_inf);
    b.for_range("i", zero, per_thread, 1, Unroll::Full, |b, i| {
        let p = b.offset(rx, i, Type::F32);
        let v = b.load(p, Type::F32, 4);
        let cur = b.read(m);
        let mx = b.math(MathFn::Max, &[cur, v]);
        b.write(m, mx);
    });
    let mv = b.read(m);
    let row_max = block_reduce(&mut b, mv, MathFnOrAdd::Max, f32::NEG_INFINITY);

    let s = b.var("s", Type::F32);
    let fzero = b.f32(0.0);
    b.write(s, fzero);
    b.for_range("i", zero, per_thread, 1, Unroll::Full, |b, i| {
        let p = b.offset(rx, i, Type::F32);
        let v = b.load(p, Type::F32, 4);
        let d = b.sub(v, row_max);
        let e = b.math(MathFn::Exp, &[d]);
        b.store(p, e, 4);
        let cur = b.read(s);
        let sum = b.add(cur, e);
        b.write(s, sum);
    });
    let sv = b.read(s);
    let total = block_reduce(&mut b, sv, MathFnOrAdd::Add, 0.0);
    let one = b.f32(1.0);
    let inv = b.div(one, total);
    b.for_range("i", zero, per_thread, 1, Unroll::Full, |b, i| {
        let p = b.offset(rx, i, Type::F32);
        let v = b.load(p, Type::F32, 4);
        let scaled = b.mul(v, inv);
        b.store(p, scaled, 4);
    });

    // copy(rx, ty)
    b.for_range("c", zero, chunks, 1, Unroll::Full, |b, c| {
        let slot = b.mul(c, vec);
        let src = b.offset(rx, slot, Type::F32);
        let v = b.load(src, f4, 16);
        let stride = b.i32(THREADS * VEC);
        let col = b.mul(c, stride);
        let at = b.add(thread_start, col);
        let dst = b.offset(y, at, Type::F32);
        b.store(dst, v, 16);
    });
    Module { kernels: vec![b.finish()] }
}

/// One of each remaining expression kind (conversions to and from `bf16`, the math functions, shuffles of each
/// mode, vector lanes, select, a loop with `break` and `continue` the back end keeps), for coverage.
pub fn kitchen_sink() -> Module {
    let mut b = KernelBuilder::new("kitchen_sink");
    // Whole warps: the shuffles need every lane of a warp (`check-collectives` proves it).
    b.kernel_mut().block_size = Some([128, 1, 1]);
    let x = b.ptr_param("x", 16);
    let n = b.scalar_param("n", Scalar::I32);
    let tid = b.thread_idx_x();
    let p = b.offset(x, tid, Type::F32);
    let v = b.load(p, Type::F32, 4);
    let h = b.convert(v, Scalar::BF16);
    let back = b.convert(h, Scalar::F32);
    let t = b.math(MathFn::Tanh, &[back]);
    let r = b.math(MathFn::Rsqrt, &[t]);
    let q = b.math(MathFn::Sqrt, &[r]);
    let e2 = b.math(MathFn::Exp2, &[q]);
    let a = b.math(MathFn::Abs, &[e2]);
    let f = b.math(MathFn::Fma, &[a, v, t]);
    let mn = b.math(MathFn::Min, &[f, v]);
    let lane = b.special(crate::SpecialReg::LaneId);
    let one = b.i32(1);
    let d = b.shuffle(ShuffleMode::Down, mn, one);
    let u = b.shuffle(ShuffleMode::Up, d, one);
    let i = b.shuffle(ShuffleMode::Idx, lane, one);
    let fi = b.convert(i, Scalar::F32);
    let sum = b.add(u, fi);
    let parts = vec![sum, v, t, r];
    let vec = b.compose(Type::vector(Scalar::F32, 4), parts);
    let third = b.extract(vec, 2);
    let neg = b.unary(crate::UnaryOp::Neg, third);
    let pos = b.compare(CompareOp::Gt, neg, sum);
    let chosen = b.select(pos, neg, sum);
    let acc = b.var("acc", Type::F32);
    b.write(acc, chosen);
    let zero = b.i32(0);
    b.for_range("k", zero, n, 1, Unroll::Disable, |b, k| {
        let seven = b.i32(7);
        let rem = b.rem(k, seven);
        let z = b.i32(0);
        let skip = b.compare(CompareOp::Eq, rem, z);
        b.if_then(skip, |b| b.continue_());
        let hundred = b.i32(100);
        let stop = b.compare(CompareOp::Gt, k, hundred);
        b.if_then(stop, |b| b.break_());
        let cur = b.read(acc);
        let kf = b.convert(k, Scalar::F32);
        let next = b.add(cur, kf);
        b.write(acc, next);
    });
    let out = b.read(acc);
    let wide = b.convert(tid, Scalar::I64);
    let q = b.offset(x, wide, Type::F32);
    b.store(q, out, 4);
    Module { kernels: vec![b.finish()] }
}
