//! Expressions: each evaluated where its `Emit` is, from the values of its operands in the thread's registers.
//! Global expressions (literals, parameters, allocation addresses) are computed where they are used.

use crate::Arg;
use crate::error::InterpError;
use crate::machine::{World, undef_error};
use crate::numeric::{self, ArithError};
use crate::thread::Thread;
use crate::value::{Mem, Ptr, Val};
use cutec_ir::{Dim, Expr, Handle, Literal, Loc, Scalar, SpecialReg, Type, UnaryOp};

impl<'k> Thread<'k> {
    /// The value of `h`: a global expression's, or the one its definition computed.
    pub fn value(&self, world: &World<'k>, h: Handle<Expr>, loc: Loc) -> Result<Val, InterpError> {
        match world.kernel.exprs.get(h) {
            Some(e) if e.is_global() => global(world, e, loc),
            Some(_) => match self.vals.get(h.index()) {
                Some(Val::Undef) | None => Err(undef_error(loc, &format!("expression %{}", h.index()))),
                Some(v) => Ok(v.clone()),
            },
            None => Err(InterpError::Internal { loc, message: format!("expression %{} does not exist", h.index()) }),
        }
    }

    /// Evaluates the expression `h` (emitted here).
    pub fn eval(&self, world: &World<'k>, h: Handle<Expr>, loc: Loc) -> Result<Val, InterpError> {
        let Some(e) = world.kernel.exprs.get(h) else {
            return Err(InterpError::Internal { loc, message: format!("expression %{} does not exist", h.index()) });
        };
        let ty = |h: Handle<Expr>| world.info.expr_types.get(h.index()).copied().unwrap_or(Type::I1);
        let scalar = |h: Handle<Expr>| ty(h).scalar().unwrap_or(Scalar::I1);
        let lanes = |h: Handle<Expr>| -> Result<Vec<u64>, InterpError> {
            let v = self.value(world, h, loc)?;
            Ok(v.lanes().to_vec())
        };
        let map2 = |a: Handle<Expr>, b: Handle<Expr>, f: &dyn Fn(u64, u64) -> Result<u64, ArithError>| {
            let (x, y) = (lanes(a)?, lanes(b)?);
            let out: Result<Vec<u64>, ArithError> = x.iter().zip(&y).map(|(&p, &q)| f(p, q)).collect();
            out.map(Val::from_lanes).map_err(|ArithError::DivisionByZero| InterpError::DivisionByZero {
                loc,
                thread: self.thread_ref(world),
            })
        };
        Ok(match *e {
            Expr::Literal(_) | Expr::Param(_) | Expr::AllocPtr(_) => global(world, e, loc)?,
            Expr::Special(reg) => Val::Bits(u64::from(self.special(world, reg))),
            Expr::ReadVar(v) => match self.vars.get(v.index()) {
                Some(Val::Undef) | None => {
                    // A variable read before any write holds whatever its register held: zero here.
                    let t = world.kernel.vars.get(v).map_or(Type::I32, |v| v.ty);
                    Val::from_lanes(vec![0; t.lanes().unwrap_or(1) as usize])
                }
                Some(val) => val.clone(),
            },
            Expr::Unary { op, value } => {
                let s = scalar(value);
                let f = |b| match op {
                    UnaryOp::Neg => numeric::negate(s, b),
                    UnaryOp::Not => numeric::not(s, b),
                };
                Val::from_lanes(lanes(value)?.into_iter().map(f).collect())
            }
            Expr::Binary { op, lhs, rhs } => {
                let s = scalar(lhs);
                map2(lhs, rhs, &|a, b| numeric::binary(op, s, a, b))?
            }
            Expr::Compare { op, lhs, rhs } => {
                let s = scalar(lhs);
                map2(lhs, rhs, &|a, b| Ok(u64::from(numeric::compare(op, s, a, b))))?
            }
            Expr::Select { cond, accept, reject } => {
                let c = self.bits(world, cond, loc)?;
                self.value(world, if c & 1 == 1 { accept } else { reject }, loc)?
            }
            Expr::Convert { value, to } => {
                let from = scalar(value);
                Val::from_lanes(lanes(value)?.into_iter().map(|b| numeric::convert(from, to, b)).collect())
            }
            Expr::Math { fun, arg, arg1, arg2 } => {
                let s = scalar(arg);
                let a = lanes(arg)?;
                let b = match arg1 {
                    Some(h) => lanes(h)?,
                    None => vec![0; a.len()],
                };
                let c = match arg2 {
                    Some(h) => lanes(h)?,
                    None => vec![0; a.len()],
                };
                let out = (0..a.len()).map(|i| numeric::math(fun, s, &[a[i], b[i], c[i]])).collect();
                Val::from_lanes(out)
            }
            Expr::Offset { base, index, elem } => {
                let p = self.ptr(world, base, loc)?;
                let i = self.int(world, index, loc)?;
                let off = p.off.wrapping_add(i.wrapping_mul(i64::from(elem.size_bytes())));
                Val::Ptr(Ptr { mem: p.mem, off })
            }
            Expr::OpResult(_) => {
                return Err(InterpError::Internal { loc, message: "an operation's result is emitted".into() });
            }
            Expr::Extract { vector, lane } => {
                let v = lanes(vector)?;
                Val::Bits(*v.get(lane as usize).ok_or_else(|| InterpError::Internal {
                    loc,
                    message: format!("lane {lane} of a {}-lane vector", v.len()),
                })?)
            }
            Expr::Compose { ref parts, .. } => {
                let mut out = Vec::with_capacity(parts.len());
                for &p in parts {
                    out.push(self.bits(world, p, loc)?);
                }
                Val::Vector(out.into())
            }
            Expr::MapShared { ptr, cta } => {
                let p = self.ptr(world, ptr, loc)?;
                let rank = self.int(world, cta, loc)?;
                let Ok(rank) = u32::try_from(rank) else {
                    let message = format!("mapa to CTA rank {rank}");
                    return Err(InterpError::Collective { loc, thread: self.thread_ref(world), message });
                };
                match p.mem {
                    Mem::Shared { alloc, .. } => {
                        Val::Ptr(Ptr { mem: Mem::Shared { cta: Some(rank), alloc }, off: p.off })
                    }
                    other => {
                        return Err(InterpError::Internal { loc, message: format!("mapa of {other:?}") });
                    }
                }
            }
        })
    }

    fn special(&self, world: &World<'k>, reg: SpecialReg) -> u32 {
        let d = |d: Dim| d.index();
        match reg {
            SpecialReg::ThreadIdx(x) => self.tid[d(x)],
            SpecialReg::BlockIdx(x) => world.ctas.get(self.cta).map_or(0, |c| c.block[d(x)]),
            SpecialReg::BlockDim(x) => world.launch.block[d(x)],
            SpecialReg::GridDim(x) => world.launch.grid[d(x)],
            SpecialReg::LaneId => self.lane(),
            SpecialReg::ClusterCtaRank => self.cta as u32,
        }
    }
}

/// The value of a global expression.
fn global(world: &World<'_>, e: &Expr, loc: Loc) -> Result<Val, InterpError> {
    Ok(match *e {
        Expr::Literal(Literal::Bool(b)) => Val::bool(b),
        Expr::Literal(Literal::Int { value, ty }) => Val::Bits(numeric::int_bits(ty, value)),
        Expr::Literal(Literal::Float { value, ty }) => Val::Bits(numeric::from_f64(ty, value)),
        Expr::Param(i) => match world.args.get(i as usize) {
            Some(Arg::Buffer(_)) => Val::Ptr(Ptr { mem: Mem::Global(i), off: 0 }),
            Some(Arg::TensorMap(_)) => Val::Ptr(Ptr { mem: Mem::Param(i), off: 0 }),
            Some(Arg::Scalar(bits)) => Val::Bits(*bits),
            None => return Err(InterpError::Internal { loc, message: format!("parameter {i} does not exist") }),
        },
        Expr::AllocPtr(a) => match world.shared_offsets.get(a.index()) {
            Some(Some(off)) => {
                Val::Ptr(Ptr { mem: Mem::Shared { cta: None, alloc: a.index() as u32 }, off: *off as i64 })
            }
            Some(None) => Val::Ptr(Ptr { mem: Mem::Local(a.index() as u32), off: 0 }),
            None => return Err(InterpError::Internal { loc, message: format!("allocation {a:?} does not exist") }),
        },
        _ => return Err(InterpError::Internal { loc, message: "not a global expression".into() }),
    })
}
