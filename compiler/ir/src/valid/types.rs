//! Type rules of expressions: the one definition both the validator and the builder use.

use super::ValidationError as E;
use crate::arena::Handle;
use crate::expr::{BinaryOp, Expr, MathFn, UnaryOp};
use crate::module::Kernel;
use crate::types::{AddrSpace, Scalar, Type};

/// The type of `expr`, given the types of earlier expressions (`types[i]` is the type of expression `i`).
/// Checks handle ranges, that operands precede their user, and the operand types.
pub fn resolve(kernel: &Kernel, me: Handle<Expr>, expr: &Expr, types: &[Type]) -> Result<Type, E> {
    let ty = |h: Handle<Expr>| -> Result<Type, E> {
        if h >= me || h.index() >= types.len() {
            return Err(E::ForwardOperand { user: me, operand: h });
        }
        Ok(types[h.index()])
    };
    // Arithmetic takes integers and floats other than fp8 (storage formats: converted to compute).
    let numeric = |t: Type| t.scalar().is_some_and(Scalar::is_arithmetic);
    Ok(match *expr {
        Expr::Literal(l) => {
            if let crate::expr::Literal::Int { ty, .. } | crate::expr::Literal::Float { ty, .. } = l {
                let ok = match l {
                    crate::expr::Literal::Int { .. } => ty.is_int(),
                    // An fp8 constant is a converted `f32` one: codegen has no fp8 constants to fold.
                    _ => ty.is_float() && !ty.is_fp8(),
                };
                if !ok {
                    return Err(E::BadLiteral(me));
                }
            }
            l.ty()
        }
        Expr::Param(i) => kernel.params.get(i as usize).ok_or(E::ParamOutOfRange(i))?.ty,
        Expr::AllocPtr(a) => Type::Ptr(kernel.allocs.get(a).ok_or(E::AllocOutOfRange(a.index()))?.space),
        Expr::Special(_) => Type::I32,
        Expr::ReadVar(v) => kernel.vars.get(v).ok_or(E::VarOutOfRange(v.index()))?.ty,
        Expr::Unary { op, value } => {
            let t = ty(value)?;
            let ok = match op {
                UnaryOp::Neg => numeric(t),
                UnaryOp::Not => t.is_int() || t.is_bool(),
            };
            if !ok {
                return Err(E::OperandType {
                    expr: me,
                    found: t,
                    expected: "a number (neg) or an integer or i1 (not)",
                });
            }
            t
        }
        Expr::Binary { op, lhs, rhs } => {
            let (l, r) = (ty(lhs)?, ty(rhs)?);
            if l != r {
                return Err(E::Mismatch { expr: me, left: l, right: r });
            }
            let ok = match op {
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div => numeric(l),
                BinaryOp::Rem | BinaryOp::Shl | BinaryOp::Shr => l.is_int(),
                BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => l.is_int() || l.is_bool(),
            };
            if !ok {
                return Err(E::OperandType { expr: me, found: l, expected: "operands this operator accepts" });
            }
            l
        }
        Expr::Compare { lhs, rhs, .. } => {
            let (l, r) = (ty(lhs)?, ty(rhs)?);
            if l != r {
                return Err(E::Mismatch { expr: me, left: l, right: r });
            }
            if !matches!(l, Type::Scalar(_)) {
                return Err(E::OperandType { expr: me, found: l, expected: "a scalar" });
            }
            Type::I1
        }
        Expr::Select { cond, accept, reject } => {
            let c = ty(cond)?;
            if c != Type::I1 {
                return Err(E::OperandType { expr: me, found: c, expected: "i1" });
            }
            let (a, b) = (ty(accept)?, ty(reject)?);
            if a != b {
                return Err(E::Mismatch { expr: me, left: a, right: b });
            }
            a
        }
        Expr::Convert { value, to } => {
            let t = ty(value)?;
            let lanes = t.lanes().filter(|_| !matches!(t, Type::Ptr(_)));
            match lanes {
                Some(n) if to != Scalar::I1 => Type::vector(to, n as u8),
                _ => return Err(E::OperandType { expr: me, found: t, expected: "a scalar or vector, to a non-i1" }),
            }
        }
        Expr::Math { fun, arg, arg1, arg2 } => {
            let given = 1 + arg1.is_some() as usize + arg2.is_some() as usize;
            if given != fun.arity() || (arg2.is_some() && arg1.is_none()) {
                return Err(E::Arity { expr: me, expected: fun.arity(), found: given });
            }
            let t = ty(arg)?;
            for a in arg1.into_iter().chain(arg2) {
                let u = ty(a)?;
                if u != t {
                    return Err(E::Mismatch { expr: me, left: t, right: u });
                }
            }
            let ok = match fun {
                // The approximations exist for f32 only in v0 (PTX has f16/bf16 forms of some: later).
                MathFn::Exp | MathFn::Exp2 | MathFn::Rsqrt | MathFn::Tanh => t == Type::F32,
                MathFn::Sqrt | MathFn::Fma => t == Type::F32 || t == Type::F64,
                MathFn::Abs | MathFn::Max | MathFn::Min => matches!(t, Type::Scalar(s) if s.is_arithmetic()),
            };
            if !ok {
                return Err(E::OperandType { expr: me, found: t, expected: "a type this math function accepts" });
            }
            t
        }
        Expr::Offset { base, index, elem } => {
            let b = ty(base)?;
            let i = ty(index)?;
            if !i.is_int() || !matches!(i, Type::Scalar(_)) {
                return Err(E::OperandType { expr: me, found: i, expected: "an i32 or i64 index" });
            }
            if matches!(elem, Type::Ptr(_)) {
                return Err(E::OperandType { expr: me, found: elem, expected: "a scalar or vector element" });
            }
            match b {
                Type::Ptr(_) => b,
                _ => return Err(E::OperandType { expr: me, found: b, expected: "a pointer" }),
            }
        }
        // Its statement checks that the operation produces this type.
        Expr::OpResult(t) => t,
        Expr::MapShared { ptr, cta } => {
            let p = ty(ptr)?;
            if p != Type::Ptr(AddrSpace::Shared) {
                return Err(E::OperandType { expr: me, found: p, expected: "a shared-memory pointer" });
            }
            let c = ty(cta)?;
            if c != Type::I32 {
                return Err(E::OperandType { expr: me, found: c, expected: "an i32 CTA rank" });
            }
            Type::Ptr(AddrSpace::SharedCluster)
        }
        Expr::Extract { vector, lane } => match ty(vector)? {
            Type::Vector { scalar, lanes } if lane < lanes as u32 => Type::Scalar(scalar),
            t => return Err(E::OperandType { expr: me, found: t, expected: "a vector with that lane" }),
        },
        Expr::Compose { ty: t, ref parts } => {
            let Type::Vector { scalar, lanes } = t else {
                return Err(E::OperandType { expr: me, found: t, expected: "a vector type" });
            };
            check_vector(scalar, lanes).map_err(|why| E::BadType { ty: t, why })?;
            if parts.len() != lanes as usize {
                return Err(E::Arity { expr: me, expected: lanes as usize, found: parts.len() });
            }
            for &p in parts {
                let pt = ty(p)?;
                if pt != Type::Scalar(scalar) {
                    return Err(E::Mismatch { expr: me, left: Type::Scalar(scalar), right: pt });
                }
            }
            t
        }
    })
}

/// A vector type back ends can hold in registers: 2, 4 or 8 lanes of a non-`i1` scalar (16 of a one-byte one),
/// at most 16 bytes (the widest PTX memory access), except for 8-byte scalars which go to 2 lanes.
pub fn check_vector(scalar: Scalar, lanes: u8) -> Result<(), &'static str> {
    if scalar == Scalar::I1 {
        return Err("vectors of i1 are not supported");
    }
    if !matches!(lanes, 2 | 4 | 8 | 16) {
        return Err("vectors have 2, 4, 8 or 16 lanes");
    }
    if scalar.size_bytes() * lanes as u32 > 16 {
        return Err("vectors are at most 16 bytes");
    }
    Ok(())
}

/// The rules of a memory access of type `ty` aligned to `align` bytes.
pub fn check_access(ty: Type, align: u32) -> Result<(), &'static str> {
    match ty {
        Type::Ptr(_) => return Err("pointers cannot be loaded or stored in v0"),
        Type::Vector { scalar, lanes } => check_vector(scalar, lanes)?,
        Type::Scalar(_) => {}
    }
    if !align.is_power_of_two() {
        return Err("the alignment must be a power of two");
    }
    let scalar = ty.scalar().map_or(1, Scalar::size_bytes);
    if align < scalar {
        return Err("the alignment must be at least the scalar's size (misaligned accesses trap)");
    }
    Ok(())
}

/// Which address spaces a store may write.
pub fn storable(space: AddrSpace) -> bool {
    matches!(space, AddrSpace::Global | AddrSpace::Shared | AddrSpace::Local | AddrSpace::SharedCluster)
}
