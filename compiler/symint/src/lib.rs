//! `cutec-symint`: the one symbolic integer of the compiler.
//!
//! A [`SymInt`] is what every stage means by "an integer that may not be known yet": a shape or stride entry of
//! a layout, a launch dimension, an index. The checker builds them from source expressions, the layout algebra
//! (`cutec-layout`) carries them inside dynamic integers, the manifest writes launch expressions with them
//! (JSON, feature `serde`) and the runtime evaluates those, and the lowering turns them into IR arithmetic.
//! There is no second integer-expression type and no integer that travels as text.
//!
//! # Leaves
//!
//! | leaf | meaning | known |
//! | --- | --- | --- |
//! | [`SymInt::Const`] | a number | at compile time |
//! | [`SymInt::Generic`] | a const generic parameter without a value (no default, no `-D`) | never: using it is an error |
//! | [`SymInt::Dim`] | a dynamic dimension of the kernel (`M` in `Tensor<f32, (M, N):(N, 1)>`) | at launch |
//! | [`SymInt::Param`] | the scalar kernel parameter with this index (and name, for printing) | at launch |
//! | [`SymInt::Value`] | any other run-time value (`thread_idx.x`, a loop variable), by a [`ValueId`] | inside the kernel |
//!
//! The [`ValueId`] of a [`SymInt::Value`] says whose value it is: the checker's ([`ValueId::Node`], the source
//! expression's node id) or the lowering's ([`ValueId::Ir`], an IR expression, made and read back only through
//! `cutec_ir`'s `Handle<Expr>` conversions). The two never meet (the lowering builds its own values), and the
//! owner is part of the id so that one cannot be read as the other; the `name` is only for printing.
//!
//! # Invariants
//!
//! - **Constant parts are folded** by [`SymInt::op`] when both operands are constants and the operation is
//!   defined (no overflow, no division by zero): a `Const` operand pair never survives in an `Op` node unless
//!   evaluating it is an error, which [`SymInt::eval`] then reports.
//! - **Evaluation never panics**: arithmetic is checked; overflow, division by zero and unbound leaves are
//!   [`EvalError`]s.
//! - **Printing** is CuTe's notation for integers inside layouts: no spaces (`128*K`, `ceil_div(M,128)`,
//!   `(M+1)/2`), parentheses only where precedence needs them.

use std::fmt;

pub mod int_tuple;
#[cfg(feature = "serde")]
mod json;
pub use int_tuple::IntTuple;

/// An operation of a symbolic integer. Every operation is binary and evaluates with checked `i64` arithmetic.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Op {
    Add,
    Sub,
    Mul,
    /// Division truncating toward zero (C's `/`, PTX's `div.s32`).
    Div,
    /// Remainder with the sign of the dividend (C's `%`).
    Rem,
    /// Division rounding toward positive infinity.
    CeilDiv,
    /// CuTe's `shape_div`: `a / b` truncated, except that a zero quotient of a non-zero `a` becomes
    /// `sign(a) * sign(b)` (a tile larger than the shape still covers it once).
    ShapeDiv,
    Min,
    Max,
}

impl Op {
    /// Every operation, for tables and tests.
    pub const ALL: [Op; 9] = [Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Rem, Op::CeilDiv, Op::ShapeDiv, Op::Min, Op::Max];

    /// The name used in JSON and in function-call notation (`ceil_div`).
    pub const fn name(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Sub => "sub",
            Op::Mul => "mul",
            Op::Div => "div",
            Op::Rem => "rem",
            Op::CeilDiv => "ceil_div",
            Op::ShapeDiv => "shape_div",
            Op::Min => "min",
            Op::Max => "max",
        }
    }

    /// The operation named `name` ([`Op::name`]).
    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.name() == name)
    }

    /// Whether `a op b == b op a`.
    pub const fn is_commutative(self) -> bool {
        matches!(self, Op::Add | Op::Mul | Op::Min | Op::Max)
    }

    /// Evaluates with checked arithmetic.
    pub fn apply(self, a: i64, b: i64) -> Result<i64, EvalError> {
        let overflow = || EvalError::Overflow { op: self, lhs: a, rhs: b };
        match self {
            Op::Add => a.checked_add(b).ok_or_else(overflow),
            Op::Sub => a.checked_sub(b).ok_or_else(overflow),
            Op::Mul => a.checked_mul(b).ok_or_else(overflow),
            Op::Div | Op::Rem | Op::CeilDiv | Op::ShapeDiv if b == 0 => {
                Err(EvalError::DivisionByZero { op: self, lhs: a })
            }
            Op::Div => a.checked_div(b).ok_or_else(overflow),
            Op::Rem => a.checked_rem(b).ok_or_else(overflow),
            Op::CeilDiv => {
                let q = a.checked_div(b).ok_or_else(overflow)?;
                // Cannot overflow: b != 0 and (a, b) != (MIN, -1) after checked_div.
                let r = a % b;
                if r != 0 && ((r > 0) == (b > 0)) { q.checked_add(1).ok_or_else(overflow) } else { Ok(q) }
            }
            Op::ShapeDiv => {
                let q = a.checked_div(b).ok_or_else(overflow)?;
                Ok(if q != 0 { q } else { a.signum() * b.signum() })
            }
            Op::Min => Ok(a.min(b)),
            Op::Max => Ok(a.max(b)),
        }
    }

    /// Binding strength in infix notation; `None` for operations printed as calls.
    const fn precedence(self) -> Option<u8> {
        match self {
            Op::Add | Op::Sub => Some(1),
            Op::Mul | Op::Div | Op::Rem | Op::ShapeDiv => Some(2),
            Op::CeilDiv | Op::Min | Op::Max => None,
        }
    }

    /// The infix symbol. `shape_div` prints as `/`: it is `/` wherever the shapes divide, which is where a
    /// printed layout is read.
    const fn symbol(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div | Op::ShapeDiv => "/",
            Op::Rem => "%",
            Op::CeilDiv | Op::Min | Op::Max => "",
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A symbolic integer. See the crate docs for what each leaf means.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum SymInt {
    Const(i64),
    /// A const generic parameter without a value.
    Generic(String),
    /// A dynamic dimension of the kernel, bound at launch from a tensor argument's shape or stride.
    Dim(String),
    /// The scalar kernel parameter with this index, bound at launch; `name` is for printing.
    Param {
        index: u32,
        name: String,
    },
    /// A run-time value inside the kernel: `id` says whose (see the crate docs), `name` is for printing.
    Value {
        id: ValueId,
        name: String,
    },
    Op(Op, Box<SymInt>, Box<SymInt>),
}

/// The id of a run-time value leaf ([`SymInt::Value`]), with its owner: the checker and the lowering number their
/// values independently, so an id without its owner could be looked up in the wrong table.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum ValueId {
    /// The checker's: the id of the source expression (`cutec_grammar::ast::NodeId`) in its module.
    Node(u32),
    /// The lowering's: an expression of the IR kernel being built. Written only by `cutec_ir`'s
    /// `From<Handle<Expr>>` and read only by `Handle::<Expr>::from_value_id`, which keep the index to themselves.
    Ir(u32),
}

/// Why a [`SymInt`] could not be evaluated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// A leaf without a value: `name` is the leaf as printed.
    Unbound {
        name: String,
    },
    Overflow {
        op: Op,
        lhs: i64,
        rhs: i64,
    },
    DivisionByZero {
        op: Op,
        lhs: i64,
    },
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Unbound { name } => write!(f, "`{name}` has no value here"),
            EvalError::Overflow { op, lhs, rhs } => write!(f, "integer overflow in {op}({lhs}, {rhs})"),
            EvalError::DivisionByZero { op, lhs } => write!(f, "division by zero in {op}({lhs}, 0)"),
        }
    }
}

impl std::error::Error for EvalError {}

impl From<i64> for SymInt {
    fn from(v: i64) -> SymInt {
        SymInt::Const(v)
    }
}

impl SymInt {
    /// A dynamic dimension.
    pub fn dim(name: impl Into<String>) -> SymInt {
        SymInt::Dim(name.into())
    }

    /// A run-time value.
    pub fn value(id: ValueId, name: impl Into<String>) -> SymInt {
        SymInt::Value { id, name: name.into() }
    }

    /// `a op b`, folded when both are constants and the operation is defined on them.
    pub fn op(op: Op, a: SymInt, b: SymInt) -> SymInt {
        if let (SymInt::Const(x), SymInt::Const(y)) = (&a, &b)
            && let Ok(v) = op.apply(*x, *y)
        {
            return SymInt::Const(v);
        }
        SymInt::Op(op, Box::new(a), Box::new(b))
    }

    pub fn as_const(&self) -> Option<i64> {
        match self {
            SymInt::Const(v) => Some(*v),
            _ => None,
        }
    }

    pub fn is_const(&self) -> bool {
        matches!(self, SymInt::Const(_))
    }

    /// Whether `f` holds for some leaf.
    pub fn any_leaf(&self, f: &mut dyn FnMut(&SymInt) -> bool) -> bool {
        match self {
            SymInt::Op(_, a, b) => a.any_leaf(f) || b.any_leaf(f),
            leaf => f(leaf),
        }
    }

    /// Whether a const generic without a value occurs.
    pub fn has_generic(&self) -> bool {
        self.any_leaf(&mut |l| matches!(l, SymInt::Generic(_)))
    }

    /// Whether the value is known before the kernel starts: no [`SymInt::Value`] and no [`SymInt::Generic`].
    pub fn is_launch_time(&self) -> bool {
        !self.any_leaf(&mut |l| matches!(l, SymInt::Value { .. } | SymInt::Generic(_)))
    }

    /// Calls `f` on every dimension name, depth first, left to right.
    pub fn for_each_dim<'a>(&'a self, f: &mut dyn FnMut(&'a str)) {
        match self {
            SymInt::Dim(name) => f(name),
            SymInt::Op(_, a, b) => {
                a.for_each_dim(f);
                b.for_each_dim(f);
            }
            _ => {}
        }
    }

    /// `self` with each non-constant leaf `l` replaced by `f(l)` where that is `Some`; operations are folded again
    /// ([`SymInt::op`]), and so are the identities `x + 0`, `x - 0`, `x * 1` and `x * 0`.
    pub fn substitute(&self, f: &dyn Fn(&SymInt) -> Option<SymInt>) -> SymInt {
        match self {
            SymInt::Const(_) => self.clone(),
            SymInt::Op(op, a, b) => {
                let (a, b) = (a.substitute(f), b.substitute(f));
                match (op, a.as_const(), b.as_const()) {
                    (Op::Add, Some(0), _) | (Op::Mul, Some(1), _) => b,
                    (Op::Add | Op::Sub, _, Some(0)) | (Op::Mul, _, Some(1)) => a,
                    (Op::Mul, Some(0), _) | (Op::Mul, _, Some(0)) => SymInt::Const(0),
                    _ => SymInt::op(*op, a, b),
                }
            }
            leaf => f(leaf).unwrap_or_else(|| leaf.clone()),
        }
    }

    /// Evaluates; `leaf` gives the value of each non-constant leaf it knows.
    pub fn eval(&self, leaf: &dyn Fn(&SymInt) -> Option<i64>) -> Result<i64, EvalError> {
        match self {
            SymInt::Const(v) => Ok(*v),
            SymInt::Op(op, a, b) => op.apply(a.eval(leaf)?, b.eval(leaf)?),
            other => leaf(other).ok_or_else(|| EvalError::Unbound { name: other.to_string() }),
        }
    }

    /// Evaluates with the dimensions `dims` gives (the runtime's view: every other leaf is unbound).
    pub fn eval_dims(&self, dims: &dyn Fn(&str) -> Option<i64>) -> Result<i64, EvalError> {
        self.eval(&|l| match l {
            SymInt::Dim(name) => dims(name),
            _ => None,
        })
    }

    /// The value when it is a constant expression that evaluates without error.
    pub fn eval_static(&self) -> Option<i64> {
        self.eval(&|_| None).ok()
    }

    /// A positive integer that is known to divide the value (1 when nothing is known; a constant `0` is divided
    /// by everything and gives `i64::MAX`). Products multiply, sums take the gcd.
    pub fn known_divisor(&self) -> i64 {
        self.known_divisor_by(&|_| 1)
    }

    /// [`SymInt::known_divisor`] where `leaf` knows a divisor of some non-constant leaves.
    pub fn known_divisor_by(&self, leaf: &dyn Fn(&SymInt) -> i64) -> i64 {
        match self {
            SymInt::Const(0) => i64::MAX,
            SymInt::Const(c) => c.checked_abs().unwrap_or(1).max(1),
            SymInt::Op(Op::Mul, a, b) => a.known_divisor_by(leaf).saturating_mul(b.known_divisor_by(leaf)),
            SymInt::Op(Op::Add | Op::Sub, a, b) => gcd(a.known_divisor_by(leaf), b.known_divisor_by(leaf)),
            SymInt::Op(..) => 1,
            other => leaf(other).max(1),
        }
    }

    /// The greatest common divisor of two known divisors (`i64::MAX` stands for "anything").
    pub fn gcd(a: i64, b: i64) -> i64 {
        gcd(a, b)
    }

    fn write(&self, f: &mut fmt::Formatter<'_>, parent: u8) -> fmt::Result {
        match self {
            SymInt::Const(v) if *v < 0 && parent > 0 => write!(f, "({v})"),
            SymInt::Const(v) => write!(f, "{v}"),
            SymInt::Generic(n) | SymInt::Dim(n) | SymInt::Value { name: n, .. } | SymInt::Param { name: n, .. } => {
                f.write_str(n)
            }
            SymInt::Op(op, a, b) => match op.precedence() {
                None => {
                    write!(f, "{}(", op.name())?;
                    a.write(f, 0)?;
                    f.write_str(",")?;
                    b.write(f, 0)?;
                    f.write_str(")")
                }
                Some(p) => {
                    let paren = p < parent;
                    if paren {
                        f.write_str("(")?;
                    }
                    a.write(f, p)?;
                    f.write_str(op.symbol())?;
                    // The right operand binds tighter: `a-(b+c)`, `a/(b*c)`, but `a+b*c`, and `a*b*c` for the
                    // associative `+` and `*`.
                    let associative = matches!(op, Op::Add | Op::Mul) && matches!(**b, SymInt::Op(o, ..) if o == *op);
                    b.write(f, if associative { p } else { p + 1 })?;
                    if paren {
                        f.write_str(")")?;
                    }
                    Ok(())
                }
            },
        }
    }
}

impl fmt::Display for SymInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, 0)
    }
}

/// The greatest common divisor of two positive divisors (`i64::MAX` stands for "anything").
fn gcd(a: i64, b: i64) -> i64 {
    if a == i64::MAX {
        return b;
    }
    if b == i64::MAX {
        return a;
    }
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    i64::try_from(a).unwrap_or(1).max(1)
}

#[cfg(test)]
mod tests;
