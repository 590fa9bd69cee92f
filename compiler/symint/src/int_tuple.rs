//! The one hierarchical integer tuple: CuTe's `IntTuple`, an integer or a tuple of `IntTuple`s, generic over what
//! an integer is.
//!
//! Every stage that holds shapes, strides or coordinates uses this tree with its own leaf: the layout algebra a
//! static-or-dynamic integer (`cutec_layout::Int`), the checker a [`SymInt`](crate::SymInt), the manifest a
//! number or the name of a dimension. Moving a tuple from one stage to the next is [`IntTuple::map`] (or
//! [`IntTuple::try_map`]) over its leaves; the structure (rank, profile, congruence) is written once, here.
//!
//! # Invariants
//!
//! - **One printer**: CuTe's notation, `(a,(b,c))` without spaces, each leaf printed by its own `Display`.
//! - **One JSON form** (feature `serde`): a leaf is written as the leaf writes itself, a tuple as an array
//!   (`["M", [2, 64]]` for the manifest's leaves). On input an array is a tuple and anything else is a leaf.

use std::fmt;

/// An integer (a leaf of type `L`) or a tuple of integer tuples.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IntTuple<L> {
    Int(L),
    Tuple(Vec<IntTuple<L>>),
}

impl<L> From<L> for IntTuple<L> {
    fn from(leaf: L) -> IntTuple<L> {
        IntTuple::Int(leaf)
    }
}

impl<L: From<i64>> IntTuple<L> {
    /// The leaf of the integer `v`.
    pub fn int(v: i64) -> IntTuple<L> {
        IntTuple::Int(L::from(v))
    }

    /// A flat tuple of the integers `vs`.
    pub fn ints(vs: &[i64]) -> IntTuple<L> {
        IntTuple::Tuple(vs.iter().map(|&v| IntTuple::int(v)).collect())
    }
}

impl<L> IntTuple<L> {
    pub fn is_tuple(&self) -> bool {
        matches!(self, IntTuple::Tuple(_))
    }

    /// The integer of a leaf; `None` for a tuple.
    pub fn as_int(&self) -> Option<&L> {
        match self {
            IntTuple::Int(i) => Some(i),
            IntTuple::Tuple(_) => None,
        }
    }

    /// CuTe's `rank`: the number of top-level modes; an integer has rank 1.
    pub fn rank(&self) -> usize {
        match self {
            IntTuple::Int(_) => 1,
            IntTuple::Tuple(v) => v.len(),
        }
    }

    /// CuTe's `depth`: 0 for an integer, 1 + the deepest mode for a tuple.
    pub fn depth(&self) -> usize {
        match self {
            IntTuple::Int(_) => 0,
            IntTuple::Tuple(v) => 1 + v.iter().map(IntTuple::depth).max().unwrap_or(0),
        }
    }

    /// CuTe's `get<i>`: mode `i` of a tuple; `get<0>` of an integer is the integer.
    pub fn mode(&self, i: usize) -> Option<&IntTuple<L>> {
        self.modes().get(i)
    }

    /// The top-level modes: the elements of a tuple, or an integer as its own single mode.
    pub fn modes(&self) -> &[IntTuple<L>] {
        match self {
            IntTuple::Int(_) => std::slice::from_ref(self),
            IntTuple::Tuple(v) => v,
        }
    }

    /// The leaves, depth first, left to right: for `((2,M),8)` that is `2, M, 8`.
    pub fn leaves(&self) -> Vec<&L> {
        let mut out = Vec::new();
        self.collect_leaves(&mut out);
        out
    }

    fn collect_leaves<'a>(&'a self, out: &mut Vec<&'a L>) {
        match self {
            IntTuple::Int(i) => out.push(i),
            IntTuple::Tuple(v) => v.iter().for_each(|t| t.collect_leaves(out)),
        }
    }

    /// CuTe's `congruent`: the same hierarchical profile, whatever the leaves.
    pub fn congruent<M>(&self, other: &IntTuple<M>) -> bool {
        match (self, other) {
            (IntTuple::Int(_), IntTuple::Int(_)) => true,
            (IntTuple::Tuple(a), IntTuple::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.congruent(y))
            }
            _ => false,
        }
    }

    /// The tree structure with `_` for leaves: `((_,_),_)`.
    pub fn profile(&self) -> String {
        self.map(|_| Underscore).to_string()
    }

    /// The same profile with `f` of every leaf.
    pub fn map<M>(&self, mut f: impl FnMut(&L) -> M) -> IntTuple<M> {
        self.map_dyn(&mut f)
    }

    fn map_dyn<M>(&self, f: &mut dyn FnMut(&L) -> M) -> IntTuple<M> {
        match self {
            IntTuple::Int(i) => IntTuple::Int(f(i)),
            IntTuple::Tuple(v) => IntTuple::Tuple(v.iter().map(|t| t.map_dyn(f)).collect()),
        }
    }

    /// The same profile with `f` of every leaf, or the first error.
    pub fn try_map<M, E>(&self, mut f: impl FnMut(&L) -> Result<M, E>) -> Result<IntTuple<M>, E> {
        self.try_map_dyn(&mut f)
    }

    fn try_map_dyn<M, E>(&self, f: &mut dyn FnMut(&L) -> Result<M, E>) -> Result<IntTuple<M>, E> {
        Ok(match self {
            IntTuple::Int(i) => IntTuple::Int(f(i)?),
            IntTuple::Tuple(v) => IntTuple::Tuple(v.iter().map(|t| t.try_map_dyn(f)).collect::<Result<_, E>>()?),
        })
    }

    /// CuTe's `unwrap`: a one-element tuple becomes its element.
    pub fn unwrap_single(self) -> IntTuple<L> {
        match self {
            IntTuple::Tuple(mut v) if v.len() == 1 => v.remove(0).unwrap_single(),
            other => other,
        }
    }
}

impl<L: Clone> IntTuple<L> {
    /// The leaves, left to right (CuTe's `flatten` as a list).
    pub fn flatten(&self) -> Vec<L> {
        self.leaves().into_iter().cloned().collect()
    }

    /// CuTe's `flatten`: an integer stays an integer, a tuple becomes the tuple of its leaves.
    pub fn flattened(&self) -> IntTuple<L> {
        match self {
            IntTuple::Int(_) => self.clone(),
            IntTuple::Tuple(_) => IntTuple::Tuple(self.flatten().into_iter().map(IntTuple::Int).collect()),
        }
    }
}

/// The leaf of [`IntTuple::profile`].
struct Underscore;

impl fmt::Display for Underscore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("_")
    }
}

/// CuTe's tuple notation: `(a,b,c)`, no spaces; the one printer of every tuple-like value.
pub fn write_tuple<T: fmt::Display>(f: &mut fmt::Formatter<'_>, items: &[T]) -> fmt::Result {
    f.write_str("(")?;
    for (k, item) in items.iter().enumerate() {
        if k > 0 {
            f.write_str(",")?;
        }
        write!(f, "{item}")?;
    }
    f.write_str(")")
}

impl<L: fmt::Display> fmt::Display for IntTuple<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntTuple::Int(i) => write!(f, "{i}"),
            IntTuple::Tuple(v) => write_tuple(f, v),
        }
    }
}

#[cfg(feature = "serde")]
mod json {
    //! A leaf is written as the leaf writes itself, a tuple as an array. On input, an array is a tuple and every
    //! other JSON value is handed to the leaf's own `Deserialize` (so its error messages are the leaf's).

    use std::fmt;
    use std::marker::PhantomData;

    use serde::de::value::{
        BoolDeserializer, F64Deserializer, I64Deserializer, StrDeserializer, U64Deserializer, UnitDeserializer,
    };
    use serde::de::{self, MapAccess, SeqAccess, Visitor};
    use serde::ser::SerializeSeq;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::IntTuple;

    impl<L: Serialize> Serialize for IntTuple<L> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            match self {
                IntTuple::Int(i) => i.serialize(s),
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

    impl<'de, L: Deserialize<'de>> Deserialize<'de> for IntTuple<L> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(TupleVisitor(PhantomData))
        }
    }

    struct TupleVisitor<L>(PhantomData<L>);

    impl<'de, L: Deserialize<'de>> Visitor<'de> for TupleVisitor<L> {
        type Value = IntTuple<L>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an integer tuple: a leaf or an array of integer tuples")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut modes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
            while let Some(m) = seq.next_element()? {
                modes.push(m);
            }
            Ok(IntTuple::Tuple(modes))
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
            L::deserialize(BoolDeserializer::new(v)).map(IntTuple::Int)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            L::deserialize(I64Deserializer::new(v)).map(IntTuple::Int)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            L::deserialize(U64Deserializer::new(v)).map(IntTuple::Int)
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            L::deserialize(F64Deserializer::new(v)).map(IntTuple::Int)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            L::deserialize(StrDeserializer::new(v)).map(IntTuple::Int)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            L::deserialize(UnitDeserializer::new()).map(IntTuple::Int)
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            L::deserialize(de::value::MapAccessDeserializer::new(map)).map(IntTuple::Int)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::IntTuple;

    fn t(v: &[i64]) -> IntTuple<i64> {
        IntTuple::ints(v)
    }

    #[test]
    fn structure_is_independent_of_the_leaves() {
        let nested: IntTuple<i64> = IntTuple::Tuple(vec![t(&[2, 3]), IntTuple::int(8)]);
        assert_eq!(nested.to_string(), "((2,3),8)");
        assert_eq!((nested.rank(), nested.depth()), (2, 2));
        assert_eq!(nested.profile(), "((_,_),_)");
        assert_eq!(nested.flatten(), vec![2, 3, 8]);
        assert_eq!(nested.flattened(), t(&[2, 3, 8]));
        let named = nested.map(|v| format!("N{v}"));
        assert!(named.congruent(&nested) && !named.congruent(&t(&[1, 2, 3])));
        assert_eq!(named.to_string(), "((N2,N3),N8)");
        assert_eq!(nested.try_map(|&v| if v < 8 { Ok(v) } else { Err(v) }), Err(8));
        assert_eq!(IntTuple::<i64>::int(4).modes(), &[IntTuple::int(4)]);
        assert_eq!(nested.mode(1), Some(&IntTuple::int(8)));
        assert_eq!(
            IntTuple::Tuple(vec![IntTuple::Tuple(vec![IntTuple::<i64>::int(5)])]).unwrap_single(),
            IntTuple::int(5)
        );
    }

    #[cfg(feature = "serde")]
    #[test]
    fn json_is_the_leaf_or_an_array() {
        let nested: IntTuple<i64> = serde_json::from_str("[1, [2, 3]]").unwrap();
        assert_eq!(nested.to_string(), "(1,(2,3))");
        assert_eq!(serde_json::to_string(&nested).unwrap(), "[1,[2,3]]");
        assert!(serde_json::from_str::<IntTuple<i64>>("[1, \"M\"]").is_err());
        // A leaf's errors are the leaf's own.
        let null = serde_json::from_str::<IntTuple<i64>>("null").unwrap_err().to_string();
        assert!(null.starts_with("invalid type: null, expected i64"), "{null}");
    }
}
