//! Expressions: AST expressions to [`Value`]s, scalars to IR.

use super::value::{Binding, Value};
use super::{LResult, Lower, Reported};
use crate::error::LowerError;
use cutec_diagnostics::Span;
use cutec_grammar::ast::{self, BinaryOp as AstOp, ExprKind};
use cutec_ir::{BinaryOp, CompareOp, Dim, Expr, Handle, Literal, SpecialReg, UnaryOp};
use cutec_sema::{Builtin, ConstValue, Resolution, Scalar, Type};

/// The IR scalar of a language scalar, if v0 supports it.
pub(crate) fn ir_scalar(s: Scalar) -> Option<cutec_ir::Scalar> {
    Some(match s {
        Scalar::Int | Scalar::I32 => cutec_ir::Scalar::I32,
        Scalar::I64 => cutec_ir::Scalar::I64,
        Scalar::F16 => cutec_ir::Scalar::F16,
        Scalar::BF16 => cutec_ir::Scalar::BF16,
        Scalar::F32 => cutec_ir::Scalar::F32,
        Scalar::F64 => cutec_ir::Scalar::F64,
        Scalar::Bool => cutec_ir::Scalar::I1,
        Scalar::E4M3 => cutec_ir::Scalar::E4M3,
        Scalar::E5M2 => cutec_ir::Scalar::E5M2,
        _ => return None,
    })
}

impl Lower<'_> {
    pub fn ir_scalar(&mut self, s: Scalar, span: Span) -> LResult<cutec_ir::Scalar> {
        match ir_scalar(s) {
            Some(t) => Ok(t),
            None => self.unsupported(span, format!("the type `{s}`")),
        }
    }

    /// The scalar type the checker gave an expression.
    pub fn scalar_type(&mut self, e: &ast::Expr) -> LResult<Scalar> {
        match self.type_of(e.id) {
            Type::Scalar(s) => Ok(*s),
            other => {
                let other = other.to_string();
                self.unsupported(e.span, format!("a value of type `{other}` here"))
            }
        }
    }

    /// A value as an IR scalar of type `want`, converting as the language's promotions do.
    pub fn scalar(&mut self, v: &Value, want: Scalar, span: Span) -> LResult<Handle<Expr>> {
        let to = self.ir_scalar(want, span)?;
        match *v {
            Value::Const(c) => Ok(match to {
                cutec_ir::Scalar::I1 => self.b.bool(c != 0),
                t if t.is_float() => self.b.lit(Literal::Float { value: c as f64, ty: t }),
                t => self.b.lit(Literal::Int { value: c, ty: t }),
            }),
            Value::Scalar(h, have) => {
                if have == want || ir_scalar(have) == Some(to) {
                    Ok(h)
                } else {
                    self.ir_scalar(have, span)?;
                    Ok(self.b.convert(h, to))
                }
            }
            _ => self.fail(span, LowerError::Expected { what: "a number" }),
        }
    }

    /// Lowers an expression.
    pub fn expr(&mut self, e: &ast::Expr) -> LResult<Value> {
        self.at(e.span);
        match &e.kind {
            ExprKind::Int(v) => match i64::try_from(*v) {
                Ok(v) => Ok(Value::Const(v)),
                Err(_) => self.unsupported(e.span, "an integer literal this large"),
            },
            ExprKind::Float(f) => {
                let s = self.scalar_type(e).unwrap_or(Scalar::F32);
                let s = if s.is_float() && !s.is_fp8() { s } else { Scalar::F32 };
                let t = self.ir_scalar(s, e.span)?;
                Ok(Value::Scalar(self.b.lit(Literal::Float { value: *f, ty: t }), s))
            }
            ExprKind::Bool(v) => Ok(Value::Scalar(self.b.bool(*v), Scalar::Bool)),
            ExprKind::Name { .. } => self.name(e),
            ExprKind::Wildcard => Ok(Value::Wildcard),
            ExprKind::Tuple(items) => Ok(Value::Tuple(items.iter().map(|i| self.expr(i)).collect::<LResult<_>>()?)),
            ExprKind::Layout { shape, stride } => {
                let (s, d) = (self.expr(shape)?, self.expr(stride)?);
                let (s, d) = (self.int_tuple(&s, shape.span)?, self.int_tuple(&d, stride.span)?);
                let l = cutec_layout::Layout::new(s, d);
                Ok(Value::Layout(self.layout_result(l, e.span)?))
            }
            ExprKind::Unary { op, operand } => self.unary(e, *op, operand),
            ExprKind::Binary { op, lhs, rhs } => self.binary(e, *op, lhs, rhs),
            ExprKind::Call { callee, args } => self.call(e, callee, args),
            ExprKind::Compose { outer, inner } => {
                let (a, b) = (self.expr(outer)?, self.expr(inner)?);
                self.at(e.span);
                self.builtin(
                    e,
                    Builtin::Layout(cutec_layout::LayoutOp::Composition),
                    &[a, b],
                    &[outer.span, inner.span],
                )
            }
            ExprKind::Field { base, field } => {
                let v = self.expr(base)?;
                let dim = match field.name.as_str() {
                    "x" => Dim::X,
                    "y" => Dim::Y,
                    "z" => Dim::Z,
                    _ => return self.unsupported(field.span, format!("the field `{}`", field.name)),
                };
                self.at(e.span);
                let reg = match v {
                    Value::Dim3(Builtin::ThreadIdx) => SpecialReg::ThreadIdx(dim),
                    Value::Dim3(b @ (Builtin::BlockIdx | Builtin::GridDim)) => {
                        let h = self.block_coordinate(dim, b == Builtin::GridDim);
                        return Ok(Value::Scalar(h, Scalar::Int));
                    }
                    Value::Dim3(Builtin::BlockDim) => SpecialReg::BlockDim(dim),
                    _ => return self.unsupported(e.span, "this field access"),
                };
                Ok(Value::Scalar(self.b.special(reg), Scalar::Int))
            }
            ExprKind::Index { base, indices } => {
                let t = self.expr(base)?;
                let coord = self.index_coord(indices)?;
                self.at(e.span);
                self.index(t, coord, e.span)
            }
            ExprKind::Cast { value, .. } => {
                let v = self.expr(value)?;
                let to = self.scalar_type(e)?;
                self.at(e.span);
                Ok(Value::Scalar(self.scalar(&v, to, e.span)?, to))
            }
            ExprKind::MethodCall { receiver, args, .. } => self.method_call(e, receiver, args),
            ExprKind::Str(_) => self.unsupported(e.span, "a string"),
            ExprKind::Error => Err(Reported),
        }
    }

    /// The coordinate of `t[i, j, ...]`: one index is the coordinate itself, several form a tuple.
    pub(super) fn index_coord(&mut self, indices: &[ast::Expr]) -> LResult<Value> {
        let mut values = indices.iter().map(|i| self.expr(i)).collect::<LResult<Vec<_>>>()?;
        Ok(if values.len() == 1 { values.remove(0) } else { Value::Tuple(values) })
    }

    fn name(&mut self, e: &ast::Expr) -> LResult<Value> {
        let Some(res) = self.resolution(e.id) else {
            return self.internal(e.span, "this name was not resolved by the checker");
        };
        match res {
            Resolution::Local(id) => match self.frame()?.bindings.get(id).cloned() {
                Some(Binding::Value(v)) => Ok(*v),
                Some(Binding::Var(var, s)) => Ok(Value::Scalar(self.read_var(var), s)),
                Some(Binding::Poisoned) => Err(Reported),
                None => self.internal(e.span, "a binding the lowering did not see"),
            },
            Resolution::Param(i) => match self.frame()?.args.get(i.index()).cloned() {
                Some(v) => Ok(v),
                None => self.internal(e.span, "a parameter out of range"),
            },
            Resolution::ConstGeneric(g) => match self.frame()?.info.const_generic(*g) {
                Some(g) => match g.value {
                    Some(v) => Ok(Value::Const(v)),
                    None => self.no_value(&g.name, e.span),
                },
                None => self.internal(e.span, "a const generic the lowering did not see"),
            },
            Resolution::DynDim(d) => match self.dims.get(d.index()) {
                Some(&h) if self.frames.len() == 1 => Ok(Value::Scalar(h, Scalar::Int)),
                _ => self.unsupported(e.span, "a dynamic dimension of a device function's parameter"),
            },
            Resolution::Const(m, i) => match self.program.constant(*m, *i).and_then(|c| c.value) {
                Some(ConstValue::Int(v)) => Ok(Value::Const(v)),
                Some(ConstValue::Bool(v)) => Ok(Value::Scalar(self.b.bool(v), Scalar::Bool)),
                Some(ConstValue::Float(v)) => Ok(Value::Scalar(self.b.f32(v as f32), Scalar::F32)),
                None => Err(Reported),
            },
            // A swizzle (`Swizzle<5, 0, 5>`) or a Hopper swizzle atom (`SW128_K<bf16>`): the checker's value.
            Resolution::Builtin(
                Builtin::Swizzle
                | Builtin::Sw128K
                | Builtin::Sw64K
                | Builtin::Sw32K
                | Builtin::Sw128Mn
                | Builtin::Sw64Mn
                | Builtin::Sw32Mn,
            ) => {
                let folded = self.frame().ok().and_then(|f| self.program.folded(f.module, e.id)).cloned();
                match folded {
                    Some(v) => self.value_of_algebra(v, e.span),
                    None => self.fail(
                        e.span,
                        LowerError::NotConstant { problem: "this swizzle's parameters must be constants".into() },
                    ),
                }
            }
            Resolution::Builtin(b) => self.builtin_value(*b, e.span),
            _ => self.unsupported(e.span, "this name as a value"),
        }
    }

    fn builtin_value(&mut self, b: Builtin, span: Span) -> LResult<Value> {
        match b {
            Builtin::ThreadIdx | Builtin::BlockIdx | Builtin::BlockDim | Builtin::GridDim => Ok(Value::Dim3(b)),
            // Lanes and warps of a one-dimensional CTA.
            Builtin::LaneIdx | Builtin::WarpIdx => {
                let tid = self.b.thread_idx_x();
                let (op, k) = if b == Builtin::LaneIdx { (BinaryOp::And, 31) } else { (BinaryOp::Shr, 5) };
                let k = self.b.i32(k);
                Ok(Value::Scalar(self.b.binary(op, tid, k), Scalar::Int))
            }
            Builtin::Inf => Ok(Value::Scalar(self.b.f32(f32::INFINITY), Scalar::F32)),
            Builtin::Wgmma => Ok(Value::Mma),
            Builtin::BlockRankInCluster => Ok(Value::Scalar(self.b.special(SpecialReg::ClusterCtaRank), Scalar::Int)),
            _ => self.unsupported(span, format!("the builtin `{b:?}` as a value")),
        }
    }

    fn unary(&mut self, e: &ast::Expr, op: ast::UnaryOp, operand: &ast::Expr) -> LResult<Value> {
        let v = self.expr(operand)?;
        self.at(e.span);
        match (op, &v) {
            (ast::UnaryOp::Neg, Value::Const(c)) => Ok(Value::Const(c.wrapping_neg())),
            (ast::UnaryOp::BitNot, Value::Const(c)) => Ok(Value::Const(!c)),
            _ => {
                let s = self.scalar_type(e)?;
                let h = self.scalar(&v, s, e.span)?;
                let op = if op == ast::UnaryOp::Neg { UnaryOp::Neg } else { UnaryOp::Not };
                Ok(Value::Scalar(self.b.unary(op, h), s))
            }
        }
    }

    fn binary(&mut self, e: &ast::Expr, op: AstOp, lhs: &ast::Expr, rhs: &ast::Expr) -> LResult<Value> {
        let (l, r) = (self.expr(lhs)?, self.expr(rhs)?);
        self.at(e.span);
        if let (Value::Const(a), Value::Const(b)) = (&l, &r)
            && let Some(v) = fold_int(op, *a, *b)
        {
            return Ok(match v {
                Folded::Int(v) => Value::Const(v),
                Folded::Bool(v) => Value::Scalar(self.b.bool(v), Scalar::Bool),
            });
        }
        if let Some(cmp) = compare_op(op) {
            let operand = match (self.type_of(lhs.id), self.type_of(rhs.id)) {
                (Type::Scalar(a), Type::Scalar(b)) => cutec_sema::promote(*a, *b).unwrap_or(*a),
                _ => return self.unsupported(e.span, "comparing these values"),
            };
            let (a, b) = (self.scalar(&l, operand, lhs.span)?, self.scalar(&r, operand, rhs.span)?);
            return Ok(Value::Scalar(self.b.compare(cmp, a, b), Scalar::Bool));
        }
        let s = self.scalar_type(e)?;
        let (a, b) = (self.scalar(&l, s, lhs.span)?, self.scalar(&r, s, rhs.span)?);
        let Some(op) = arithmetic_op(op) else {
            return self.unsupported(e.span, format!("the operator `{}`", op.as_str()));
        };
        Ok(Value::Scalar(self.b.binary(op, a, b), s))
    }

    /// Applies a compound assignment's operator (`+=` ...) to two scalar values of type `s`.
    pub fn apply_op(&mut self, op: AstOp, l: &Value, r: &Value, s: Scalar, span: Span) -> LResult<Value> {
        let (a, b) = (self.scalar(l, s, span)?, self.scalar(r, s, span)?);
        let Some(op) = arithmetic_op(op) else {
            return self.unsupported(span, format!("the assignment operator `{}=`", op.as_str()));
        };
        Ok(Value::Scalar(self.b.binary(op, a, b), s))
    }
}

/// The IR operation of an arithmetic or bitwise source operator; `&&` and `||` on `bool` (`i1`) values are the
/// bitwise `and` and `or`. `None` for comparisons, which lower to `compare`.
fn arithmetic_op(op: AstOp) -> Option<BinaryOp> {
    Some(match op {
        AstOp::Add => BinaryOp::Add,
        AstOp::Sub => BinaryOp::Sub,
        AstOp::Mul => BinaryOp::Mul,
        AstOp::Div => BinaryOp::Div,
        AstOp::Rem => BinaryOp::Rem,
        AstOp::Shl => BinaryOp::Shl,
        AstOp::Shr => BinaryOp::Shr,
        AstOp::BitAnd | AstOp::And => BinaryOp::And,
        AstOp::BitOr | AstOp::Or => BinaryOp::Or,
        AstOp::BitXor => BinaryOp::Xor,
        AstOp::Eq | AstOp::Ne | AstOp::Lt | AstOp::Le | AstOp::Gt | AstOp::Ge => return None,
    })
}

enum Folded {
    Int(i64),
    Bool(bool),
}

/// Compile-time integer arithmetic with the language's semantics (`int` is a 32-bit signed integer; overflow,
/// division by zero and out-of-range shifts are left to run time).
fn fold_int(op: AstOp, a: i64, b: i64) -> Option<Folded> {
    let fits = |v: i64| i32::try_from(v).is_ok().then_some(Folded::Int(v));
    match op {
        AstOp::Add => fits(a.checked_add(b)?),
        AstOp::Sub => fits(a.checked_sub(b)?),
        AstOp::Mul => fits(a.checked_mul(b)?),
        AstOp::Div => fits(a.checked_div(b)?),
        AstOp::Rem => fits(a.checked_rem(b)?),
        AstOp::Shl if (0..32).contains(&b) => fits(((a as i32) << b) as i64),
        AstOp::Shr if (0..32).contains(&b) => fits(a >> b),
        AstOp::BitAnd => fits(a & b),
        AstOp::BitOr => fits(a | b),
        AstOp::BitXor => fits(a ^ b),
        AstOp::Eq => Some(Folded::Bool(a == b)),
        AstOp::Ne => Some(Folded::Bool(a != b)),
        AstOp::Lt => Some(Folded::Bool(a < b)),
        AstOp::Le => Some(Folded::Bool(a <= b)),
        AstOp::Gt => Some(Folded::Bool(a > b)),
        AstOp::Ge => Some(Folded::Bool(a >= b)),
        _ => None,
    }
}

fn compare_op(op: AstOp) -> Option<CompareOp> {
    Some(match op {
        AstOp::Eq => CompareOp::Eq,
        AstOp::Ne => CompareOp::Ne,
        AstOp::Lt => CompareOp::Lt,
        AstOp::Le => CompareOp::Le,
        AstOp::Gt => CompareOp::Gt,
        AstOp::Ge => CompareOp::Ge,
        _ => None?,
    })
}
