//! Expressions (`add`, `cmp.lt`, `select`, `mapa`, ...), as [`crate::print`] writes them.

use super::{PResult, Parser};
use crate::expr::{BinaryOp, CompareOp, Dim, Expr, MathFn, SpecialReg, UnaryOp};

impl Parser {
    /// The expression named `m` with its operands.
    pub(super) fn expr(&mut self, m: &str) -> PResult<Expr> {
        if let Some(op) = binary(m) {
            let v = self.operands(2)?;
            return Ok(Expr::Binary { op, lhs: v[0], rhs: v[1] });
        }
        if let Some(op) = compare(m) {
            let v = self.operands(2)?;
            return Ok(Expr::Compare { op, lhs: v[0], rhs: v[1] });
        }
        if let Some(fun) = math(m) {
            let mut args = vec![self.operand()?];
            while self.eat_punct(',') {
                args.push(self.operand()?);
            }
            return Ok(Expr::Math { fun, arg: args[0], arg1: args.get(1).copied(), arg2: args.get(2).copied() });
        }
        Ok(match m {
            "sreg" => {
                let r = self.word()?;
                match special(&r) {
                    Some(reg) => Expr::Special(reg),
                    None => return self.error(format!("unknown special register `{r}`")),
                }
            }
            "read" => Expr::ReadVar(self.var()?),
            "neg" => Expr::Unary { op: UnaryOp::Neg, value: self.operand()? },
            "not" => Expr::Unary { op: UnaryOp::Not, value: self.operand()? },
            "select" => {
                let v = self.operands(3)?;
                Expr::Select { cond: v[0], accept: v[1], reject: v[2] }
            }
            "convert" => {
                let value = self.operand()?;
                self.keyword("to")?;
                Expr::Convert { value, to: self.scalar()? }
            }
            "offset" => {
                let v = self.operands(2)?;
                self.keyword("x")?;
                Expr::Offset { base: v[0], index: v[1], elem: self.ty()? }
            }
            "mapa" => {
                let ptr = self.operand()?;
                self.punct(',')?;
                self.keyword("cta")?;
                Expr::MapShared { ptr, cta: self.operand()? }
            }
            "extract" => {
                let vector = self.operand()?;
                self.punct(',')?;
                Expr::Extract { vector, lane: self.integer()? }
            }
            "compose" => {
                let ty = self.ty()?;
                self.punct('[')?;
                let mut parts = Vec::new();
                while !self.eat_punct(']') {
                    if !parts.is_empty() {
                        self.punct(',')?;
                    }
                    parts.push(self.operand()?);
                }
                Expr::Compose { ty, parts }
            }
            other => return self.error(format!("unknown expression `{other}`")),
        })
    }
}

fn special(name: &str) -> Option<SpecialReg> {
    if name == "laneid" {
        return Some(SpecialReg::LaneId);
    }
    if name == "cluster_ctarank" {
        return Some(SpecialReg::ClusterCtaRank);
    }
    let (reg, d) = name.rsplit_once('.')?;
    let d = match d {
        "x" => Dim::X,
        "y" => Dim::Y,
        "z" => Dim::Z,
        _ => return None,
    };
    Some(match reg {
        "tid" => SpecialReg::ThreadIdx(d),
        "ctaid" => SpecialReg::BlockIdx(d),
        "ntid" => SpecialReg::BlockDim(d),
        "nctaid" => SpecialReg::GridDim(d),
        _ => return None,
    })
}

fn binary(name: &str) -> Option<BinaryOp> {
    Some(match name {
        "add" => BinaryOp::Add,
        "sub" => BinaryOp::Sub,
        "mul" => BinaryOp::Mul,
        "div" => BinaryOp::Div,
        "rem" => BinaryOp::Rem,
        "and" => BinaryOp::And,
        "or" => BinaryOp::Or,
        "xor" => BinaryOp::Xor,
        "shl" => BinaryOp::Shl,
        "shr" => BinaryOp::Shr,
        _ => return None,
    })
}

fn compare(name: &str) -> Option<CompareOp> {
    Some(match name.strip_prefix("cmp.")? {
        "eq" => CompareOp::Eq,
        "ne" => CompareOp::Ne,
        "lt" => CompareOp::Lt,
        "le" => CompareOp::Le,
        "gt" => CompareOp::Gt,
        "ge" => CompareOp::Ge,
        _ => return None,
    })
}

fn math(name: &str) -> Option<MathFn> {
    Some(match name {
        "exp" => MathFn::Exp,
        "exp2" => MathFn::Exp2,
        "sqrt" => MathFn::Sqrt,
        "rsqrt" => MathFn::Rsqrt,
        "tanh" => MathFn::Tanh,
        "abs" => MathFn::Abs,
        "max" => MathFn::Max,
        "min" => MathFn::Min,
        "fma" => MathFn::Fma,
        _ => return None,
    })
}
