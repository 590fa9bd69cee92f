//! The JSON form of launch-time expressions (the manifest's): `{"int": 4}`, `{"dim": "M"}`,
//! `{"op": "ceil_div", "args": [{"dim": "M"}, {"int": 128}]}`.
//!
//! On input a bare integer stands for `{"int": ..}` and a bare string for `{"dim": ..}`, and `add`, `mul`,
//! `min`, `max` accept two or more arguments (folded left to right); every other operation takes exactly two.
//! Output is always the canonical binary object form. Only launch-time leaves have a JSON form: writing a
//! const generic, a parameter or a run-time value is an error.

use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::ser::{self, SerializeMap};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{Op, SymInt};

impl Serialize for Op {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Op {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Op::from_name(&name).ok_or_else(|| {
            let names: Vec<&str> = Op::ALL.iter().map(|o| o.name()).collect();
            de::Error::custom(format_args!("unknown operation `{name}`, expected one of {}", names.join(", ")))
        })
    }
}

impl Serialize for SymInt {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SymInt::Const(v) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("int", v)?;
                m.end()
            }
            SymInt::Dim(name) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("dim", name)?;
                m.end()
            }
            SymInt::Op(op, a, b) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("op", op)?;
                m.serialize_entry("args", &[a.as_ref(), b.as_ref()])?;
                m.end()
            }
            other => Err(ser::Error::custom(format_args!("`{other}` is not known at launch time"))),
        }
    }
}

/// Whether `op` accepts `n` arguments in JSON.
fn accepts_arity(op: Op, n: usize) -> bool {
    if matches!(op, Op::Add | Op::Mul | Op::Min | Op::Max) { n >= 2 } else { n == 2 }
}

impl<'de> Deserialize<'de> for SymInt {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SymInt;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(r#"an expression: {"int": N}, {"dim": "NAME"}, {"op": OP, "args": [..]}, N or "NAME""#)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<SymInt, E> {
                Ok(SymInt::Const(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<SymInt, E> {
                i64::try_from(v)
                    .map(SymInt::Const)
                    .map_err(|_| E::custom(format_args!("integer {v} does not fit in i64")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SymInt, E> {
                Ok(SymInt::Dim(v.to_owned()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SymInt, A::Error> {
                let (mut int, mut dim, mut op, mut args) =
                    (None::<i64>, None::<String>, None::<Op>, None::<Vec<SymInt>>);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "int" if int.is_none() => int = Some(map.next_value()?),
                        "dim" if dim.is_none() => dim = Some(map.next_value()?),
                        "op" if op.is_none() => op = Some(map.next_value()?),
                        "args" if args.is_none() => args = Some(map.next_value()?),
                        "int" => return Err(de::Error::duplicate_field("int")),
                        "dim" => return Err(de::Error::duplicate_field("dim")),
                        "op" => return Err(de::Error::duplicate_field("op")),
                        "args" => return Err(de::Error::duplicate_field("args")),
                        other => return Err(de::Error::unknown_field(other, &["int", "dim", "op", "args"])),
                    }
                }
                match (int, dim, op, args) {
                    (Some(v), None, None, None) => Ok(SymInt::Const(v)),
                    (None, Some(name), None, None) => Ok(SymInt::Dim(name)),
                    (None, None, Some(op), Some(args)) => {
                        if !accepts_arity(op, args.len()) {
                            let want = if matches!(op, Op::Add | Op::Mul | Op::Min | Op::Max) {
                                "2 or more"
                            } else {
                                "exactly 2"
                            };
                            return Err(de::Error::custom(format_args!(
                                "`{op}` takes {want} arguments, found {}",
                                args.len()
                            )));
                        }
                        let mut it = args.into_iter();
                        let first = it.next().ok_or_else(|| de::Error::custom("an operation without arguments"))?;
                        // Not `SymInt::op`: the manifest's tree is kept as written (evaluation reports errors).
                        Ok(it.fold(first, |acc, x| SymInt::Op(op, Box::new(acc), Box::new(x))))
                    }
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
