//! Errors of the layout algebra: plain values that name the operation and the operands, never panics.

use std::fmt;

/// The result type of every fallible operation of the algebra.
pub type Result<T> = std::result::Result<T, LayoutError>;

/// Why an operation of the algebra has no result. Each variant names the operation (`op`, CuTe's name) and the
/// values involved, so that the message stands alone: `composition: stride 3 does not divide shape 4 of (4,4):(1,8)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayoutError {
    /// CuTe's divisibility condition `a % b == 0 || b % a == 0` failed (`shape_div`): `what` says which quantity
    /// (e.g. "stride 3 and shape 4 of (4,4):(1,8)").
    NotDivisible { op: &'static str, what: String },
    /// Ranks or profiles that must agree do not.
    RankMismatch { op: &'static str, what: String },
    /// A 64-bit integer overflowed while computing `what`.
    Overflow { op: &'static str, what: String },
    /// The operation met a dynamic integer whose value is unknown and cannot proceed symbolically.
    NeedsStatic { op: &'static str, name: String },
    /// The layout is not injective where the operation requires it (complement).
    NotInjective { op: &'static str, layout: String },
    /// A mode index out of range (`get<3>` of a rank-2 layout).
    IndexOutOfRange { op: &'static str, index: i64, rank: usize },
    /// Any other invalid argument: a negative shape, a malformed swizzle, a wrong kind of value.
    Invalid { op: &'static str, what: String },
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutError::NotDivisible { op, what } => write!(f, "{op}: {what}"),
            LayoutError::RankMismatch { op, what } => write!(f, "{op}: rank mismatch: {what}"),
            LayoutError::Overflow { op, what } => write!(f, "{op}: integer overflow computing {what}"),
            LayoutError::NeedsStatic { op, name } => {
                write!(f, "{op} needs a static value, but `{name}` is only known at run time")
            }
            LayoutError::NotInjective { op, layout } => {
                write!(f, "{op}: layout {layout} is not injective (or its sorted strides do not nest)")
            }
            LayoutError::IndexOutOfRange { op, index, rank } => {
                write!(f, "{op}: mode {index} is out of range for rank {rank}")
            }
            LayoutError::Invalid { op, what } => write!(f, "{op}: {what}"),
        }
    }
}

impl std::error::Error for LayoutError {}

/// Shorthand for [`LayoutError::Invalid`].
pub(crate) fn invalid(op: &'static str, what: impl Into<String>) -> LayoutError {
    LayoutError::Invalid { op, what: what.into() }
}

/// Shorthand for [`LayoutError::RankMismatch`].
pub(crate) fn rank_mismatch(op: &'static str, what: impl Into<String>) -> LayoutError {
    LayoutError::RankMismatch { op, what: what.into() }
}
