//! Errors of the layout algebra: plain values that name the operation and hold the operands, never panics.

use std::fmt;

use crate::eval::LayoutOp;

/// The result type of every fallible operation of the algebra.
pub type Result<T> = std::result::Result<T, LayoutError>;

/// Why an operation of the algebra has no result. Each variant holds the operation (`op`, the operation of the
/// algebra whose condition failed, which is not always the one called: `logical_divide` fails in its
/// `composition`) and the values involved, so that the message stands alone:
/// `composition: stride 3 and shape 4 of (4,4):(1,8) do not divide each other (stride divisibility)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayoutError {
    /// CuTe's divisibility condition `a % b == 0 || b % a == 0` failed: `what` says which quantities, of what
    /// (e.g. "stride 3 and shape 4 of (4,4):(1,8) ..."), and `numbers` holds those two quantities, in that order,
    /// where both are known.
    NotDivisible { op: LayoutOp, what: String, numbers: Option<(i64, i64)> },
    /// Ranks or profiles that must agree do not.
    RankMismatch { op: LayoutOp, what: String },
    /// A 64-bit integer overflowed while computing `what`.
    Overflow { op: LayoutOp, what: String },
    /// The operation met a dynamic integer whose value is unknown and cannot proceed symbolically.
    NeedsStatic { op: LayoutOp, name: String },
    /// The layout is not injective where the operation requires it (complement).
    NotInjective { op: LayoutOp, layout: String },
    /// A mode index out of range (`get<3>` of a rank-2 layout).
    IndexOutOfRange { op: LayoutOp, index: i64, rank: usize },
    /// The operation is not defined on a swizzle or a swizzled layout, or was given one where it needs a plain
    /// value: `what` says which.
    Swizzled { op: LayoutOp, what: String },
    /// `Swizzle<bits, base, shift>` breaks one of CuTe's rules.
    BadSwizzle { bits: i64, base: i64, shift: i64, rule: SwizzleRule },
    /// An expression calls an operation the algebra does not have.
    UnknownOp { name: String },
    /// Any other invalid argument: a negative shape, a wrong kind of value, a wrong number of arguments.
    Invalid { op: LayoutOp, what: String },
}

/// The rule a [`LayoutError::BadSwizzle`] breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwizzleRule {
    /// `B >= 0` and `M >= 0`.
    NonNegative,
    /// `|S| >= B`: the bits read and the bits flipped do not overlap.
    ShiftCoversBits,
    /// Every mask fits in 62 bits.
    Fits,
}

impl LayoutError {
    /// The operation whose condition failed; `None` for errors outside any operation (a malformed swizzle, an
    /// unknown operation).
    pub fn op(&self) -> Option<LayoutOp> {
        match self {
            LayoutError::NotDivisible { op, .. }
            | LayoutError::RankMismatch { op, .. }
            | LayoutError::Overflow { op, .. }
            | LayoutError::NeedsStatic { op, .. }
            | LayoutError::NotInjective { op, .. }
            | LayoutError::IndexOutOfRange { op, .. }
            | LayoutError::Swizzled { op, .. }
            | LayoutError::Invalid { op, .. } => Some(*op),
            LayoutError::BadSwizzle { .. } | LayoutError::UnknownOp { .. } => None,
        }
    }
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutError::NotDivisible { op, what, .. } => write!(f, "{op}: {what}"),
            LayoutError::RankMismatch { op, what } => write!(f, "{op}: rank mismatch: {what}"),
            LayoutError::Overflow { op, what } => write!(f, "{op}: integer overflow computing {what}"),
            LayoutError::NeedsStatic { op, name } => {
                write!(f, "{op} needs a static value, but `{name}` is only known at run time")
            }
            LayoutError::NotInjective { op, layout } => {
                write!(f, "{op}: layout {layout} is not injective (or its sorted strides do not nest)")
            }
            LayoutError::IndexOutOfRange { op, index, rank } if *index < 0 => {
                write!(f, "{op}: mode {index} is negative; the modes of rank {rank} are 0..{rank}")
            }
            LayoutError::IndexOutOfRange { op, index, rank } => {
                write!(f, "{op}: mode {index} is out of range for rank {rank}")
            }
            LayoutError::Swizzled { op, what } | LayoutError::Invalid { op, what } => write!(f, "{op}: {what}"),
            LayoutError::BadSwizzle { bits, base, shift, rule } => {
                let needs = match rule {
                    SwizzleRule::NonNegative => "needs B >= 0 and M >= 0",
                    SwizzleRule::ShiftCoversBits => "needs |S| >= B",
                    SwizzleRule::Fits => "does not fit in 62 bits",
                };
                write!(f, "Swizzle: Swizzle<{bits},{base},{shift}> {needs}")
            }
            LayoutError::UnknownOp { name } => write!(f, "eval: unknown operation `{name}`"),
        }
    }
}

impl std::error::Error for LayoutError {}

/// Shorthand for [`LayoutError::Invalid`].
pub(crate) fn invalid(op: LayoutOp, what: impl Into<String>) -> LayoutError {
    LayoutError::Invalid { op, what: what.into() }
}

/// Shorthand for [`LayoutError::RankMismatch`].
pub(crate) fn rank_mismatch(op: LayoutOp, what: impl Into<String>) -> LayoutError {
    LayoutError::RankMismatch { op, what: what.into() }
}

/// Shorthand for [`LayoutError::Swizzled`].
pub(crate) fn swizzled(op: LayoutOp, what: impl Into<String>) -> LayoutError {
    LayoutError::Swizzled { op, what: what.into() }
}

/// Shorthand for [`LayoutError::NotDivisible`] naming the quantities `a` and `b` (kept as numbers where both are
/// known).
pub(crate) fn not_divisible(op: LayoutOp, what: impl Into<String>, a: Option<i64>, b: Option<i64>) -> LayoutError {
    LayoutError::NotDivisible { op, what: what.into(), numbers: a.zip(b) }
}
