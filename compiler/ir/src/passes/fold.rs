//! `fold-constants`: evaluates expressions whose operands are literals, applies algebraic identities that
//! index arithmetic produces after unrolling (`x + 0`, `x * 1`, offsets by 0), reads a static CTA size as a
//! literal, and removes `if` statements whose condition is a literal.
//!
//! An expression folds either **in place** into a literal (which is global, so its `Emit` is dropped) or into an
//! **alias** of one of its operands (its users are rewritten to that operand, which is in scope wherever the
//! expression was, since operands are emitted before their users). Arithmetic follows the back end's semantics
//! exactly (wrapping integers, IEEE floats in the operand's precision); what could differ is left alone:
//! division by zero, oversized shifts, conversions to `f16`/`bf16`.

use super::{Analyses, Pass, PassError};
use crate::arena::Handle;
use crate::expr::{BinaryOp, CompareOp, Dim, Expr, Literal, SpecialReg, UnaryOp};
use crate::module::{Kernel, Module};
use crate::stmt::{Block, Stmt};
use crate::types::Scalar;
use crate::visit::{Out, Rewrite};
use std::convert::Infallible;

pub struct FoldConstants;

impl Pass for FoldConstants {
    fn name(&self) -> &'static str {
        "fold-constants"
    }
    fn description(&self) -> &'static str {
        "evaluate literal arithmetic, apply x+0/x*1 identities, read a static block size, drop literal ifs"
    }
    fn run(&self, module: &mut Module, _: &mut Analyses) -> Result<(), PassError> {
        for k in &mut module.kernels {
            fold_kernel(k);
        }
        Ok(())
    }
}

fn fold_kernel(k: &mut Kernel) {
    // alias[i] = the expression that replaces expression i.
    let mut alias: Vec<Option<Handle<Expr>>> = vec![None; k.exprs.len()];
    let resolve =
        |alias: &[Option<Handle<Expr>>], h: Handle<Expr>| alias.get(h.index()).copied().flatten().unwrap_or(h);
    for (i, h) in k.exprs.handles().enumerate() {
        let mut e = k.exprs[h].clone();
        e.map_operands(|op| resolve(&alias, op));
        match fold(k, &e) {
            Some(Folded::Literal(l)) => e = Expr::Literal(l),
            Some(Folded::Alias(to)) => alias[i] = Some(to),
            None => {}
        }
        k.exprs[h] = e;
    }
    let body = std::mem::take(&mut k.body);
    let Ok(body) = Rewriter { k, alias: &alias }.block(body);
    k.body = body;
}

enum Folded {
    Literal(Literal),
    Alias(Handle<Expr>),
}

fn lit(k: &Kernel, h: Handle<Expr>) -> Option<Literal> {
    match k.exprs.get(h) {
        Some(Expr::Literal(l)) => Some(*l),
        _ => None,
    }
}

fn is_int(k: &Kernel, h: Handle<Expr>, v: i64) -> bool {
    matches!(lit(k, h), Some(Literal::Int { value, .. }) if value == v)
}

fn fold(k: &Kernel, e: &Expr) -> Option<Folded> {
    match *e {
        Expr::Special(SpecialReg::BlockDim(d)) => {
            let size = k.block_size?[match d {
                Dim::X => 0,
                Dim::Y => 1,
                Dim::Z => 2,
            }];
            Some(Folded::Literal(Literal::i32(size as i32)))
        }
        Expr::Unary { op, value } => unary(op, lit(k, value)?).map(Folded::Literal),
        Expr::Binary { op, lhs, rhs } => {
            if let (Some(a), Some(b)) = (lit(k, lhs), lit(k, rhs)) {
                return binary(op, a, b).map(Folded::Literal);
            }
            identity(k, op, lhs, rhs)
        }
        Expr::Compare { op, lhs, rhs } => compare(op, lit(k, lhs)?, lit(k, rhs)?).map(Folded::Literal),
        Expr::Select { cond, accept, reject } => match lit(k, cond)? {
            Literal::Bool(c) => Some(Folded::Alias(if c { accept } else { reject })),
            _ => None,
        },
        Expr::Convert { value, to } => convert(lit(k, value)?, to).map(Folded::Literal),
        Expr::Offset { base, index, .. } if is_int(k, index, 0) => Some(Folded::Alias(base)),
        Expr::Extract { vector, lane } => match k.exprs.get(vector) {
            Some(Expr::Compose { parts, .. }) => parts.get(lane as usize).map(|&p| Folded::Alias(p)),
            _ => None,
        },
        _ => None,
    }
}

/// `x + 0`, `0 + x`, `x - 0`, `x * 1`, `1 * x`, `x / 1` on integers give `x`; `x * 0` gives 0.
fn identity(k: &Kernel, op: BinaryOp, lhs: Handle<Expr>, rhs: Handle<Expr>) -> Option<Folded> {
    let zero_of = |h| match lit(k, h) {
        Some(Literal::Int { ty, .. }) => Some(Literal::Int { value: 0, ty }),
        _ => None,
    };
    match op {
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Or | BinaryOp::Xor | BinaryOp::Shl | BinaryOp::Shr
            if is_int(k, rhs, 0) =>
        {
            Some(Folded::Alias(lhs))
        }
        BinaryOp::Add | BinaryOp::Or | BinaryOp::Xor if is_int(k, lhs, 0) => Some(Folded::Alias(rhs)),
        BinaryOp::Mul | BinaryOp::Div if is_int(k, rhs, 1) => Some(Folded::Alias(lhs)),
        BinaryOp::Mul if is_int(k, lhs, 1) => Some(Folded::Alias(rhs)),
        BinaryOp::Mul | BinaryOp::And if is_int(k, rhs, 0) => zero_of(rhs).map(Folded::Literal),
        BinaryOp::Mul | BinaryOp::And if is_int(k, lhs, 0) => zero_of(lhs).map(Folded::Literal),
        _ => None,
    }
}

/// Wraps an integer to the width of `ty`.
fn wrap(value: i64, ty: Scalar) -> Literal {
    let value = if ty == Scalar::I32 { value as i32 as i64 } else { value };
    Literal::Int { value, ty }
}

/// Rounds a float to the precision of `ty` (only f32 and f64 fold).
fn float(value: f64, ty: Scalar) -> Option<Literal> {
    match ty {
        Scalar::F32 => Some(Literal::Float { value: value as f32 as f64, ty }),
        Scalar::F64 => Some(Literal::Float { value, ty }),
        _ => None,
    }
}

fn unary(op: UnaryOp, a: Literal) -> Option<Literal> {
    match (op, a) {
        (UnaryOp::Neg, Literal::Int { value, ty }) => Some(wrap(value.wrapping_neg(), ty)),
        (UnaryOp::Neg, Literal::Float { value, ty }) => float(-value, ty),
        (UnaryOp::Not, Literal::Int { value, ty }) => Some(wrap(!value, ty)),
        (UnaryOp::Not, Literal::Bool(b)) => Some(Literal::Bool(!b)),
        _ => None,
    }
}

fn binary(op: BinaryOp, a: Literal, b: Literal) -> Option<Literal> {
    use BinaryOp::*;
    match (a, b) {
        (Literal::Int { value: x, ty }, Literal::Int { value: y, .. }) => {
            let bits = if ty == Scalar::I32 { 32 } else { 64 };
            let v = match op {
                Add => x.wrapping_add(y),
                Sub => x.wrapping_sub(y),
                Mul => x.wrapping_mul(y),
                // Division by zero and MIN / -1: left to codegen, which gives them their defined values.
                Div | Rem if y == 0 || (y == -1 && wrap(x, ty) == wrap(i64::MIN, ty)) => return None,
                Div => x / y,
                Rem => x % y,
                And => x & y,
                Or => x | y,
                Xor => x ^ y,
                Shl | Shr if !(0..bits).contains(&y) => return None,
                Shl => x << y,
                Shr => x >> y,
            };
            Some(wrap(v, ty))
        }
        (Literal::Float { value: x, ty }, Literal::Float { value: y, .. }) => {
            let v = match op {
                Add => x + y,
                Sub => x - y,
                Mul => x * y,
                Div => x / y,
                _ => return None,
            };
            // Each f32 operation rounds once: computing in f64 and rounding to f32 is exact for + - * /.
            float(v, ty)
        }
        (Literal::Bool(x), Literal::Bool(y)) => match op {
            And => Some(Literal::Bool(x & y)),
            Or => Some(Literal::Bool(x | y)),
            Xor => Some(Literal::Bool(x ^ y)),
            _ => None,
        },
        _ => None,
    }
}

fn compare(op: CompareOp, a: Literal, b: Literal) -> Option<Literal> {
    use std::cmp::Ordering;
    let ord = match (a, b) {
        (Literal::Int { value: x, .. }, Literal::Int { value: y, .. }) => Some(x.cmp(&y)),
        (Literal::Float { value: x, .. }, Literal::Float { value: y, .. }) => x.partial_cmp(&y),
        (Literal::Bool(x), Literal::Bool(y)) => Some(x.cmp(&y)),
        _ => return None,
    };
    // With a NaN operand every comparison is false except `ne` (C's semantics, as the back end emits them).
    let r = match ord {
        None => op == CompareOp::Ne,
        Some(o) => match op {
            CompareOp::Eq => o == Ordering::Equal,
            CompareOp::Ne => o != Ordering::Equal,
            CompareOp::Lt => o == Ordering::Less,
            CompareOp::Le => o != Ordering::Greater,
            CompareOp::Gt => o == Ordering::Greater,
            CompareOp::Ge => o != Ordering::Less,
        },
    };
    Some(Literal::Bool(r))
}

fn convert(a: Literal, to: Scalar) -> Option<Literal> {
    match (a, to) {
        (Literal::Int { value, .. }, Scalar::I32 | Scalar::I64) => Some(wrap(value, to)),
        (Literal::Int { value, .. }, Scalar::F32 | Scalar::F64) => float(value as f64, to),
        (Literal::Bool(b), Scalar::I32 | Scalar::I64) => Some(wrap(b as i64, to)),
        (Literal::Float { value, .. }, Scalar::F32 | Scalar::F64) => float(value, to),
        _ => None,
    }
}

/// Rewrites statement operands through `alias`, drops the emission of expressions that became literals or
/// aliases, and splices `if`s with a literal condition.
struct Rewriter<'a> {
    k: &'a Kernel,
    alias: &'a [Option<Handle<Expr>>],
}

impl Rewrite for Rewriter<'_> {
    type Error = Infallible;

    fn operand(&mut self, h: Handle<Expr>) -> Handle<Expr> {
        self.alias.get(h.index()).copied().flatten().unwrap_or(h)
    }

    fn emit(&mut self, h: Handle<Expr>, mut out: Out<'_>) -> Result<(), Infallible> {
        let dead = self.alias.get(h.index()).copied().flatten().is_some();
        if !dead && !self.k.exprs.get(h).is_some_and(Expr::is_global) {
            out.push(Stmt::Emit(h));
        }
        Ok(())
    }

    fn if_(&mut self, cond: Handle<Expr>, accept: Block, reject: Block, mut out: Out<'_>) -> Result<(), Infallible> {
        let cond = self.operand(cond);
        let accept = self.block(accept)?;
        let reject = self.block(reject)?;
        match lit(self.k, cond) {
            // Splicing is sound: the taken block's emissions stay visible only to what follows them.
            Some(Literal::Bool(c)) => out.append(if c { accept } else { reject }),
            _ => out.push(Stmt::If { cond, accept, reject }),
        }
        Ok(())
    }
}
