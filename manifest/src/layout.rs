//! Layouts of tensor parameters: hierarchical integer tuples whose leaves are static integers or the names of
//! dynamic dimensions.

use std::fmt;

use serde::de::{self, SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A CuTe integer tuple: a static integer, the name of a dynamic dimension, or a tuple of integer tuples.
///
/// JSON: a number (`4096`), a string (`"M"`), or an array (`["M", [2, 64]]`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IntTuple {
    /// A value known at compile time.
    Int(i64),
    /// A dynamic dimension, declared in the kernel's `dims` and bound at launch.
    Dim(String),
    /// A (possibly nested) tuple.
    Tuple(Vec<IntTuple>),
}

impl IntTuple {
    /// Whether this is an integer or a dimension name (not a tuple).
    pub fn is_leaf(&self) -> bool {
        !matches!(self, IntTuple::Tuple(_))
    }

    /// The top-level modes: the elements of a tuple, or the leaf itself as a single mode.
    pub fn modes(&self) -> &[IntTuple] {
        match self {
            IntTuple::Tuple(modes) => modes,
            leaf => std::slice::from_ref(leaf),
        }
    }

    /// The leaves in depth-first (colexicographic-significance) order: for `((2, M), 8)` that is `2, M, 8`.
    pub fn leaves(&self) -> Vec<&IntTuple> {
        let mut out = Vec::new();
        self.collect_leaves(&mut out);
        out
    }

    fn collect_leaves<'a>(&'a self, out: &mut Vec<&'a IntTuple>) {
        match self {
            IntTuple::Tuple(modes) => modes.iter().for_each(|m| m.collect_leaves(out)),
            leaf => out.push(leaf),
        }
    }

    /// Names of the dynamic dimensions among the leaves, in leaf order (with repetitions).
    pub fn dim_names(&self) -> Vec<&str> {
        self.leaves()
            .into_iter()
            .filter_map(|l| match l {
                IntTuple::Dim(name) => Some(name.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Whether `self` and `other` have the same tree structure (CuTe's `congruent`).
    pub fn congruent(&self, other: &IntTuple) -> bool {
        match (self, other) {
            (IntTuple::Tuple(a), IntTuple::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.congruent(y))
            }
            (IntTuple::Tuple(_), _) | (_, IntTuple::Tuple(_)) => false,
            _ => true,
        }
    }
}

impl fmt::Display for IntTuple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntTuple::Int(v) => write!(f, "{v}"),
            IntTuple::Dim(name) => f.write_str(name),
            IntTuple::Tuple(modes) => {
                f.write_str("(")?;
                for (i, m) in modes.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{m}")?;
                }
                f.write_str(")")
            }
        }
    }
}

impl Serialize for IntTuple {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            IntTuple::Int(v) => s.serialize_i64(*v),
            IntTuple::Dim(name) => s.serialize_str(name),
            IntTuple::Tuple(modes) => {
                let mut seq = s.serialize_seq(Some(modes.len()))?;
                for m in modes {
                    seq.serialize_element(m)?;
                }
                seq.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for IntTuple {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = IntTuple;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer, a dimension name (string) or an array of those")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<IntTuple, E> {
                Ok(IntTuple::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<IntTuple, E> {
                i64::try_from(v)
                    .map(IntTuple::Int)
                    .map_err(|_| E::custom(format_args!("integer {v} does not fit in i64")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<IntTuple, E> {
                Ok(IntTuple::Dim(v.to_owned()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<IntTuple, A::Error> {
                let mut modes = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(m) = seq.next_element()? {
                    modes.push(m);
                }
                Ok(IntTuple::Tuple(modes))
            }
        }
        d.deserialize_any(V)
    }
}

/// A CuTe layout `shape : stride` over elements (not bytes). Invariant (checked by manifest validation): `shape` and
/// `stride` are [congruent](IntTuple::congruent), static shape leaves are non-negative, and every dimension name is
/// declared in the kernel's `dims`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layout {
    pub shape: IntTuple,
    pub stride: IntTuple,
}

impl Layout {
    /// Number of top-level modes (the rank the runtime compares an argument's shape with).
    pub fn rank(&self) -> usize {
        self.shape.modes().len()
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.shape, self.stride)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(json: &str) -> IntTuple {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn json_forms() {
        assert_eq!(t("4096"), IntTuple::Int(4096));
        assert_eq!(t("\"M\""), IntTuple::Dim("M".into()));
        let nested = t(r#"["M", [2, 64]]"#);
        assert_eq!(nested.to_string(), "(M, (2, 64))");
        assert_eq!(serde_json::to_string(&nested).unwrap(), r#"["M",[2,64]]"#);
        assert_eq!(nested.leaves().len(), 3);
        assert_eq!(nested.dim_names(), vec!["M"]);
        assert_eq!(nested.modes().len(), 2);
        assert!(serde_json::from_str::<IntTuple>("1.5").is_err());
        assert!(serde_json::from_str::<IntTuple>("{}").is_err());
        assert!(serde_json::from_str::<IntTuple>("18446744073709551615").is_err());
    }

    #[test]
    fn congruence_and_rank() {
        assert!(t(r#"["M", [2, 64]]"#).congruent(&t(r#"[1, ["S", 2]]"#)));
        assert!(!t(r#"["M", [2, 64]]"#).congruent(&t(r#"[1, 2]"#)));
        assert!(!t(r#"[1]"#).congruent(&t(r#"1"#)));
        let l: Layout = serde_json::from_str(r#"{"shape": ["M", 4096], "stride": [4096, 1]}"#).unwrap();
        assert_eq!(l.rank(), 2);
        assert_eq!(l.to_string(), "(M, 4096):(4096, 1)");
        let scalar_like: Layout = serde_json::from_str(r#"{"shape": "N", "stride": 1}"#).unwrap();
        assert_eq!(scalar_like.rank(), 1);
    }
}
