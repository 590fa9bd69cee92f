//! Layouts of tensor parameters: hierarchical integer tuples whose leaves are static integers or the names of
//! dynamic dimensions.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A CuTe integer tuple of the manifest: a static integer, the name of a dynamic dimension, or a tuple of
/// integer tuples. The tree, its printing (CuTe's `(M,(2,64))`) and its JSON form are `cutec-symint`'s.
///
/// JSON: a number (`4096`), a string (`"M"`), or an array (`["M", [2, 64]]`).
pub type IntTuple = cutec_symint::IntTuple<Entry>;

/// A leaf of a manifest layout: a shape or stride entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Entry {
    /// A value known at compile time.
    Int(i64),
    /// A dynamic dimension, declared in the kernel's `dims` and bound at launch.
    Dim(String),
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Entry::Int(v) => write!(f, "{v}"),
            Entry::Dim(name) => f.write_str(name),
        }
    }
}

impl From<i64> for Entry {
    fn from(v: i64) -> Entry {
        Entry::Int(v)
    }
}

/// The names of the dynamic dimensions among the leaves of `t`, in leaf order (with repetitions).
pub fn dim_names(t: &IntTuple) -> Vec<&str> {
    t.leaves()
        .into_iter()
        .filter_map(|l| match l {
            Entry::Dim(name) => Some(name.as_str()),
            Entry::Int(_) => None,
        })
        .collect()
}

impl Serialize for Entry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Entry::Int(v) => s.serialize_i64(*v),
            Entry::Dim(name) => s.serialize_str(name),
        }
    }
}

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Entry;
            // An entry is read inside a tuple, so the expectation names both.
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer, a dimension name (string) or an array of those")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Entry, E> {
                Ok(Entry::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Entry, E> {
                i64::try_from(v).map(Entry::Int).map_err(|_| E::custom(format_args!("integer {v} does not fit in i64")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Entry, E> {
                Ok(Entry::Dim(v.to_owned()))
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
        self.shape.rank()
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
        assert_eq!(t("4096"), IntTuple::Int(Entry::Int(4096)));
        assert_eq!(t("\"M\""), IntTuple::Int(Entry::Dim("M".into())));
        let nested = t(r#"["M", [2, 64]]"#);
        assert_eq!(nested.to_string(), "(M,(2,64))");
        assert_eq!(serde_json::to_string(&nested).unwrap(), r#"["M",[2,64]]"#);
        assert_eq!(nested.leaves().len(), 3);
        assert_eq!(dim_names(&nested), vec!["M"]);
        assert_eq!(nested.modes().len(), 2);
        assert!(serde_json::from_str::<IntTuple>("1.5").is_err());
        assert!(serde_json::from_str::<IntTuple>("{}").is_err());
        assert!(serde_json::from_str::<IntTuple>("18446744073709551615").is_err());
        // The leaf's messages are the manifest's, whatever the JSON value.
        for bad in ["1.5", "{}", "null", "true"] {
            let e = serde_json::from_str::<IntTuple>(bad).unwrap_err().to_string();
            assert!(e.contains("expected an integer, a dimension name (string) or an array of those"), "{e}");
        }
    }

    #[test]
    fn congruence_and_rank() {
        assert!(t(r#"["M", [2, 64]]"#).congruent(&t(r#"[1, ["S", 2]]"#)));
        assert!(!t(r#"["M", [2, 64]]"#).congruent(&t(r#"[1, 2]"#)));
        assert!(!t(r#"[1]"#).congruent(&t(r#"1"#)));
        let l: Layout = serde_json::from_str(r#"{"shape": ["M", 4096], "stride": [4096, 1]}"#).unwrap();
        assert_eq!(l.rank(), 2);
        assert_eq!(l.to_string(), "(M,4096):(4096,1)");
        let scalar_like: Layout = serde_json::from_str(r#"{"shape": "N", "stride": 1}"#).unwrap();
        assert_eq!(scalar_like.rank(), 1);
    }
}
