//! Type rules of operations ([`Op`]): operand types, and the type of the value for those that have one.

use super::ValidationError as E;
use super::types::check_access;
use crate::arena::Handle;
use crate::expr::Expr;
use crate::op::Op;
use crate::types::{AddrSpace, Scalar, Type};

/// Checks an operation given a way to type (and check the scope of) its operands; gives the type of its value.
pub fn check(op: &Op, ty: &mut dyn FnMut(Handle<Expr>) -> Result<Type, E>) -> Result<Option<Type>, E> {
    let mut expect = |h: Handle<Expr>, ok: &dyn Fn(Type) -> bool, expected: &str| -> Result<Type, E> {
        let t = ty(h)?;
        if !ok(t) {
            return Err(E::StmtType { expr: h, found: t, expected: expected.to_string() });
        }
        Ok(t)
    };
    let shared = |t: Type| t == Type::Ptr(AddrSpace::Shared);
    let i32_ = |t: Type| t == Type::I32;
    match *op {
        Op::Load { ptr, ty: t, align } => {
            expect(ptr, &|t| matches!(t, Type::Ptr(_)), "a pointer")?;
            check_access(t, align).map_err(|why| E::BadAccess { expr: None, ty: t, align, why })?;
            Ok(Some(t))
        }
        Op::Shuffle { value, lane, .. } => {
            let v = expect(value, &|t| t == Type::F32 || t == Type::I32, "f32 or i32")?;
            expect(lane, &i32_, "an i32 lane")?;
            Ok(Some(v))
        }
        Op::MbarrierInit { bar, count: n } | Op::MbarrierArriveExpectTx { bar, bytes: n } => {
            expect(bar, &shared, "a shared-memory mbarrier pointer")?;
            expect(n, &i32_, "i32")?;
            Ok(None)
        }
        Op::MbarrierArriveRemote { bar, cta } => {
            expect(bar, &shared, "a shared-memory mbarrier pointer")?;
            expect(cta, &i32_, "an i32 CTA rank")?;
            Ok(None)
        }
        Op::ClusterBarrier => Ok(None),
        Op::MbarrierArrive { bar } => {
            expect(bar, &shared, "a shared-memory mbarrier pointer")?;
            Ok(None)
        }
        Op::MbarrierWait { bar, parity } => {
            expect(bar, &shared, "a shared-memory mbarrier pointer")?;
            expect(parity, &i32_, "an i32 parity")?;
            Ok(None)
        }
        Op::TmaLoad { dst, map, ref coords, bar, multicast } => {
            if let Some(m) = multicast {
                expect(m, &i32_, "an i32 CTA mask")?;
            }
            expect(dst, &shared, "a shared-memory destination")?;
            expect(map, &|t| t == Type::Ptr(AddrSpace::Param), "a tensor map (ptr<param>)")?;
            if coords.is_empty() || coords.len() > 5 {
                return Err(E::BadOp { op: "tma.load", why: "a tensor has 1 to 5 coordinates" });
            }
            for &c in coords {
                expect(c, &i32_, "an i32 coordinate")?;
            }
            expect(bar, &shared, "a shared-memory mbarrier pointer")?;
            Ok(None)
        }
        Op::TmaLoadUnscheduled { dst: src, map, ref coords, .. } | Op::TmaStore { src, map, ref coords } => {
            if let Op::TmaLoadUnscheduled { multicast: Some(m), .. } = *op {
                expect(m, &i32_, "an i32 CTA mask")?;
            }
            expect(src, &shared, "a shared-memory tile")?;
            expect(map, &|t| t == Type::Ptr(AddrSpace::Param), "a tensor map (ptr<param>)")?;
            if coords.is_empty() || coords.len() > 5 {
                return Err(E::BadOp { op: "tma.store", why: "a tensor has 1 to 5 coordinates" });
            }
            for &c in coords {
                expect(c, &i32_, "an i32 coordinate")?;
            }
            Ok(None)
        }
        Op::Stmatrix { ptr, ref values } => {
            expect(ptr, &shared, "a shared-memory row address")?;
            if ![1, 2, 4].contains(&values.len()) {
                return Err(E::BadOp { op: "stmatrix", why: "it stores 1, 2 or 4 matrices" });
            }
            let pair = |t: Type| matches!(t, Type::Vector { scalar, lanes: 2 } if scalar.size_bytes() == 2);
            for &v in values {
                expect(v, &pair, "two 16-bit elements")?;
            }
            Ok(None)
        }
        Op::PrefetchTensorMap { map } => {
            expect(map, &|t| t == Type::Ptr(AddrSpace::Param), "a tensor map (ptr<param>)")?;
            Ok(None)
        }
        Op::ElectOne => Ok(Some(Type::I1)),
        Op::NamedBarrier { id, threads, .. } => {
            expect(id, &i32_, "an i32 barrier id")?;
            expect(threads, &i32_, "an i32 thread count")?;
            Ok(None)
        }
        Op::BulkWait { pending, .. } if pending > 63 => {
            Err(E::BadOp { op: "bulk.wait_group", why: "the number of pending groups is 0 to 63" })
        }
        Op::BulkCommit | Op::BulkWait { .. } | Op::FenceMbarrierInit => Ok(None),
        Op::Setmaxnreg { regs, .. } if !cutec_target::setmaxnreg_takes(regs) => {
            Err(E::BadOp { op: "setmaxnreg", why: "the register count is a multiple of 8 in 24..=256" })
        }
        Op::Setmaxnreg { .. } => Ok(None),
        Op::Wgmma { shape, acc, a_desc, ref steps, .. } => {
            // A and B are both 16-bit (one type) or both fp8 (any mix); K is 32 bytes of them.
            let k = match (shape.input, shape.input_b) {
                (a @ (Scalar::F16 | Scalar::BF16), b) if a == b => 16,
                (a, b) if a.is_fp8() && b.is_fp8() => 32,
                _ => {
                    return Err(E::BadOp { op: "wgmma.mma_async", why: "inputs are f16 or bf16 (alike), or fp8" });
                }
            };
            if shape.m != 64 || shape.k != k || shape.n == 0 || shape.n > 256 || shape.n % 8 != 0 {
                return Err(E::BadOp {
                    op: "wgmma.mma_async",
                    why: "the shape is m64nNk16 (k32 for fp8) with N a multiple of 8 to 256",
                });
            }
            if k == 32 && a_desc.is_none() {
                return Err(E::BadOp { op: "wgmma.mma_async", why: "fp8 A from registers is not supported yet" });
            }
            if steps.is_empty() {
                return Err(E::BadOp { op: "wgmma.mma_async", why: "a wgmma group has at least one k-step" });
            }
            expect(acc, &|t| t == Type::Ptr(AddrSpace::Local), "a register array (ptr<local>)")?;
            for s in steps {
                match a_desc {
                    Some(_) => expect(s.a, &shared, "a shared-memory operand")?,
                    None => {
                        let local = |t| t == Type::Ptr(AddrSpace::Local);
                        expect(s.a, &local, "an A fragment in registers (ptr<local>)")?
                    }
                };
                expect(s.b, &shared, "a shared-memory operand")?;
                expect(s.scale_d, &|t| t == Type::I1, "i1")?;
            }
            Ok(None)
        }
        Op::FenceProxyAsync | Op::WgmmaFence | Op::WgmmaCommit { .. } | Op::WgmmaWait { .. } => Ok(None),
    }
}
