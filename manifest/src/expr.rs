//! Launch-configuration expressions: small integer expression trees over dynamic dimensions.
//!
//! JSON forms: `{"int": 4}`, `{"dim": "M"}`, `{"op": "ceil_div", "args": [{"dim": "M"}, {"int": 128}]}`.
//! As a shorthand on input, a bare integer stands for `{"int": ..}` and a bare string for `{"dim": ..}`; output is
//! always the canonical object form.

use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An operator of an [`Expr`]. Arity: `sub`, `div`, `ceil_div` take exactly two arguments; `add`, `mul`, `min`,
/// `max` take two or more and fold left to right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Add,
    Sub,
    Mul,
    /// Division truncating toward zero (C semantics).
    Div,
    /// Division rounding toward positive infinity.
    CeilDiv,
    Min,
    Max,
}

impl Op {
    /// The manifest spelling (`"ceil_div"`).
    pub const fn name(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Sub => "sub",
            Op::Mul => "mul",
            Op::Div => "div",
            Op::CeilDiv => "ceil_div",
            Op::Min => "min",
            Op::Max => "max",
        }
    }

    const fn is_binary(self) -> bool {
        matches!(self, Op::Sub | Op::Div | Op::CeilDiv)
    }

    /// Whether `n` arguments are allowed.
    pub const fn accepts_arity(self, n: usize) -> bool {
        if self.is_binary() { n == 2 } else { n >= 2 }
    }

    fn apply(self, a: i64, b: i64) -> Result<i64, ExprError> {
        let overflow = || ExprError::Overflow { op: self, lhs: a, rhs: b };
        match self {
            Op::Add => a.checked_add(b).ok_or_else(overflow),
            Op::Sub => a.checked_sub(b).ok_or_else(overflow),
            Op::Mul => a.checked_mul(b).ok_or_else(overflow),
            Op::Div | Op::CeilDiv if b == 0 => Err(ExprError::DivisionByZero { op: self, lhs: a }),
            Op::Div => a.checked_div(b).ok_or_else(overflow),
            Op::CeilDiv => {
                let q = a.checked_div(b).ok_or_else(overflow)?;
                let r = a % b; // cannot overflow: b != 0 and (a, b) != (MIN, -1) after checked_div
                if r != 0 && ((r > 0) == (b > 0)) { q.checked_add(1).ok_or_else(overflow) } else { Ok(q) }
            }
            Op::Min => Ok(a.min(b)),
            Op::Max => Ok(a.max(b)),
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An integer expression over the kernel's dynamic dimensions. Evaluated in `i64` with checked arithmetic.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Expr {
    Int(i64),
    Dim(String),
    Op { op: Op, args: Vec<Expr> },
}

/// Why an [`Expr`] could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExprError {
    #[error("dimension `{name}` is not bound")]
    UnboundDim { name: String },
    #[error("integer overflow in {op}({lhs}, {rhs})")]
    Overflow { op: Op, lhs: i64, rhs: i64 },
    #[error("division by zero in {op}({lhs}, 0)")]
    DivisionByZero { op: Op, lhs: i64 },
    #[error("`{op}` takes {} arguments, found {got}", if op.is_binary() { "exactly 2" } else { "2 or more" })]
    Arity { op: Op, got: usize },
}

impl Expr {
    /// Convenience constructor of an operator node.
    pub fn op(op: Op, args: Vec<Expr>) -> Expr {
        Expr::Op { op, args }
    }

    /// Evaluates the expression; `env` gives the value of each bound dimension.
    ///
    /// Never panics: overflow, division by zero, a wrong arity or an unbound dimension are errors.
    pub fn eval(&self, env: &dyn Fn(&str) -> Option<i64>) -> Result<i64, ExprError> {
        match self {
            Expr::Int(v) => Ok(*v),
            Expr::Dim(name) => env(name).ok_or_else(|| ExprError::UnboundDim { name: name.clone() }),
            Expr::Op { op, args } => {
                if !op.accepts_arity(args.len()) {
                    return Err(ExprError::Arity { op: *op, got: args.len() });
                }
                let mut it = args.iter();
                let mut acc = match it.next() {
                    Some(first) => first.eval(env)?,
                    None => return Err(ExprError::Arity { op: *op, got: 0 }),
                };
                for arg in it {
                    acc = op.apply(acc, arg.eval(env)?)?;
                }
                Ok(acc)
            }
        }
    }

    /// The value if the expression mentions no dimension and evaluates without error.
    pub fn eval_static(&self) -> Option<i64> {
        self.eval(&|_| None).ok()
    }

    /// Calls `f` on every dimension name the expression mentions.
    pub fn for_each_dim<'a>(&'a self, f: &mut dyn FnMut(&'a str)) {
        match self {
            Expr::Int(_) => {}
            Expr::Dim(name) => f(name),
            Expr::Op { args, .. } => args.iter().for_each(|a| a.for_each_dim(f)),
        }
    }

    /// The first operator node (depth-first) with a wrong number of arguments.
    pub fn check_arity(&self) -> Result<(), ExprError> {
        match self {
            Expr::Op { op, args } => {
                if !op.accepts_arity(args.len()) {
                    return Err(ExprError::Arity { op: *op, got: args.len() });
                }
                args.iter().try_for_each(Expr::check_arity)
            }
            _ => Ok(()),
        }
    }
}

impl From<i64> for Expr {
    fn from(v: i64) -> Expr {
        Expr::Int(v)
    }
}

impl From<&str> for Expr {
    fn from(name: &str) -> Expr {
        Expr::Dim(name.to_owned())
    }
}

impl fmt::Display for Expr {
    /// Function-call notation: `ceil_div(M, 128)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Int(v) => write!(f, "{v}"),
            Expr::Dim(name) => f.write_str(name),
            Expr::Op { op, args } => {
                write!(f, "{op}(")?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                f.write_str(")")
            }
        }
    }
}

impl Serialize for Expr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Expr::Int(v) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("int", v)?;
                m.end()
            }
            Expr::Dim(name) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("dim", name)?;
                m.end()
            }
            Expr::Op { op, args } => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("op", op)?;
                m.serialize_entry("args", args)?;
                m.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Expr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Expr;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(r#"an expression: {"int": N}, {"dim": "NAME"}, {"op": OP, "args": [..]}, N or "NAME""#)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Expr, E> {
                Ok(Expr::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Expr, E> {
                i64::try_from(v).map(Expr::Int).map_err(|_| E::custom(format_args!("integer {v} does not fit in i64")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Expr, E> {
                Ok(Expr::Dim(v.to_owned()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Expr, A::Error> {
                let (mut int, mut dim, mut op, mut args) = (None::<i64>, None::<String>, None::<Op>, None::<Vec<Expr>>);
                while let Some(key) = map.next_key::<String>()? {
                    let dup = || {
                        de::Error::duplicate_field(match key.as_str() {
                            "int" => "int",
                            "dim" => "dim",
                            "op" => "op",
                            _ => "args",
                        })
                    };
                    match key.as_str() {
                        "int" if int.is_none() => int = Some(map.next_value()?),
                        "dim" if dim.is_none() => dim = Some(map.next_value()?),
                        "op" if op.is_none() => op = Some(map.next_value()?),
                        "args" if args.is_none() => args = Some(map.next_value()?),
                        "int" | "dim" | "op" | "args" => return Err(dup()),
                        other => return Err(de::Error::unknown_field(other, &["int", "dim", "op", "args"])),
                    }
                }
                match (int, dim, op, args) {
                    (Some(v), None, None, None) => Ok(Expr::Int(v)),
                    (None, Some(name), None, None) => Ok(Expr::Dim(name)),
                    (None, None, Some(op), Some(args)) => Ok(Expr::Op { op, args }),
                    (None, None, Some(_), None) => Err(de::Error::missing_field("args")),
                    _ => Err(de::Error::custom(
                        r#"an expression object has exactly one of: "int", "dim", or "op" with "args""#,
                    )),
                }
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(json: &str) -> Expr {
        serde_json::from_str(json).unwrap()
    }

    fn env(name: &str) -> Option<i64> {
        match name {
            "M" => Some(1000),
            "N" => Some(4096),
            "Z" => Some(0),
            "BIG" => Some(i64::MAX),
            _ => None,
        }
    }

    #[test]
    fn parse_print_and_evaluate() {
        let x = e(r#"{"op": "ceil_div", "args": [{"dim": "M"}, {"int": 128}]}"#);
        assert_eq!(x.to_string(), "ceil_div(M, 128)");
        assert_eq!(x.eval(&env), Ok(8));
        assert_eq!(serde_json::to_string(&x).unwrap(), r#"{"op":"ceil_div","args":[{"dim":"M"},{"int":128}]}"#);
        // Shorthands parse to the same tree.
        assert_eq!(e(r#"{"op": "ceil_div", "args": ["M", 128]}"#), x);
        let y = e(r#"{"op": "mul", "args": ["M", {"op": "min", "args": ["N", 64, 100]}, 2]}"#);
        assert_eq!(y.eval(&env), Ok(1000 * 64 * 2));
        assert_eq!(e(r#"{"op":"max","args":[1,{"op":"sub","args":["M",1001]}]}"#).eval(&env), Ok(1));
        assert_eq!(e(r#"{"op":"div","args":["M",3]}"#).eval(&env), Ok(333));
        assert_eq!(e(r#"{"op":"add","args":["M","N"]}"#).eval(&env), Ok(5096));
        assert_eq!(e("7").eval_static(), Some(7));
        assert_eq!(e("\"M\"").eval_static(), None);
    }

    #[test]
    fn ceil_div_rounds_toward_positive_infinity() {
        let cd = |a: i64, b: i64| Op::CeilDiv.apply(a, b);
        assert_eq!(cd(1024, 128), Ok(8));
        assert_eq!(cd(1025, 128), Ok(9));
        assert_eq!(cd(0, 128), Ok(0));
        assert_eq!(cd(-7, 2), Ok(-3));
        assert_eq!(cd(7, -2), Ok(-3));
        assert_eq!(cd(-7, -2), Ok(4));
        assert_eq!(cd(i64::MAX, 2), Ok(i64::MAX / 2 + 1));
        assert_eq!(cd(i64::MIN, -1), Err(ExprError::Overflow { op: Op::CeilDiv, lhs: i64::MIN, rhs: -1 }));
    }

    #[test]
    fn errors_are_values_not_panics() {
        assert_eq!(
            e(r#"{"op":"mul","args":["BIG",2]}"#).eval(&env),
            Err(ExprError::Overflow { op: Op::Mul, lhs: i64::MAX, rhs: 2 })
        );
        assert_eq!(
            e(r#"{"op":"ceil_div","args":["M","Z"]}"#).eval(&env),
            Err(ExprError::DivisionByZero { op: Op::CeilDiv, lhs: 1000 })
        );
        assert_eq!(
            e(r#"{"op":"div","args":[1,0]}"#).eval(&env).unwrap_err().to_string(),
            "division by zero in div(1, 0)"
        );
        assert_eq!(e(r#"{"dim":"K"}"#).eval(&env), Err(ExprError::UnboundDim { name: "K".into() }));
        let bad = e(r#"{"op":"sub","args":[1,2,3]}"#);
        assert_eq!(bad.eval(&env), Err(ExprError::Arity { op: Op::Sub, got: 3 }));
        assert_eq!(bad.check_arity().unwrap_err().to_string(), "`sub` takes exactly 2 arguments, found 3");
        assert!(e(r#"{"op":"add","args":[]}"#).check_arity().is_err());
        assert_eq!(
            e(r#"{"op":"add","args":[1,{"op":"max","args":[2]}]}"#).check_arity(),
            Err(ExprError::Arity { op: Op::Max, got: 1 })
        );
    }

    #[test]
    fn malformed_json_is_rejected() {
        for bad in [
            r#"{"int": 1, "dim": "M"}"#,
            r#"{"op": "add"}"#,
            r#"{"op": "pow", "args": [1, 2]}"#,
            r#"{"int": 1, "extra": 2}"#,
            r#"{"int": 1.5}"#,
            r#"[1, 2]"#,
            r#"{}"#,
        ] {
            assert!(serde_json::from_str::<Expr>(bad).is_err(), "{bad} should not parse");
        }
    }

    #[test]
    fn dims_are_listed() {
        let x = e(r#"{"op":"add","args":["M",{"op":"mul","args":["N","M"]}]}"#);
        let mut seen = Vec::new();
        x.for_each_dim(&mut |d| seen.push(d));
        assert_eq!(seen, ["M", "N", "M"]);
    }
}
