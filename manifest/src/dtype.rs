//! Element types of tensor and scalar parameters, and the integer types of dynamic dimensions.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The element type of a tensor parameter or the type of a scalar parameter.
///
/// Serialized as its lower-case name (`"f32"`, `"bf16"`, `"e4m3"`, ...). `e4m3` is the OCP FP8 E4M3 *FN* variant
/// (bias 7, no infinities, max 448, NaN `0x7f`/`0xff`) that Hopper's tensor cores use; `e5m2` is OCP FP8 E5M2
/// (bias 15, IEEE-like, with infinities). `bool` occupies one byte holding 0 or 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    F32,
    F16,
    Bf16,
    E4m3,
    E5m2,
    F64,
    I8,
    U8,
    I32,
    I64,
    U32,
    Bool,
}

impl DType {
    /// Every element type, in declaration order.
    pub const ALL: [DType; 12] = [
        DType::F32,
        DType::F16,
        DType::Bf16,
        DType::E4m3,
        DType::E5m2,
        DType::F64,
        DType::I8,
        DType::U8,
        DType::I32,
        DType::I64,
        DType::U32,
        DType::Bool,
    ];

    /// The manifest spelling of this type (`"bf16"`).
    pub const fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::Bf16 => "bf16",
            DType::E4m3 => "e4m3",
            DType::E5m2 => "e5m2",
            DType::F64 => "f64",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U32 => "u32",
            DType::Bool => "bool",
        }
    }

    /// Size of one element in bytes (also its natural alignment).
    pub const fn size_bytes(self) -> u32 {
        match self {
            DType::E4m3 | DType::E5m2 | DType::I8 | DType::U8 | DType::Bool => 1,
            DType::F16 | DType::Bf16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 => 8,
        }
    }

    /// Whether this is a floating-point type (including the FP8 formats).
    pub const fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F16 | DType::Bf16 | DType::E4m3 | DType::E5m2 | DType::F64)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of [`DType::from_str`]: the name that is not an element type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown dtype `{0}` (expected one of f32 f16 bf16 e4m3 e5m2 f64 i8 u8 i32 i64 u32 bool)")]
pub struct UnknownDType(pub String);

impl FromStr for DType {
    type Err = UnknownDType;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DType::ALL.into_iter().find(|d| d.name() == s).ok_or_else(|| UnknownDType(s.to_owned()))
    }
}

/// The integer type in which a dynamic dimension is passed to the kernel (a separate PTX parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IntType {
    I32,
    I64,
}

impl IntType {
    /// The manifest spelling (`"i32"`).
    pub const fn name(self) -> &'static str {
        match self {
            IntType::I32 => "i32",
            IntType::I64 => "i64",
        }
    }

    /// Size in bytes of the PTX parameter.
    pub const fn size_bytes(self) -> u32 {
        match self {
            IntType::I32 => 4,
            IntType::I64 => 8,
        }
    }

    /// Whether `value` is representable in this type.
    pub fn contains(self, value: i64) -> bool {
        match self {
            IntType::I32 => i32::try_from(value).is_ok(),
            IntType::I64 => true,
        }
    }
}

impl fmt::Display for IntType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_serde_and_from_str() {
        for d in DType::ALL {
            let json = serde_json::to_string(&d).unwrap();
            assert_eq!(json, format!("\"{}\"", d.name()));
            assert_eq!(serde_json::from_str::<DType>(&json).unwrap(), d);
            assert_eq!(d.name().parse::<DType>().unwrap(), d);
        }
        assert!("float".parse::<DType>().unwrap_err().to_string().contains("`float`"));
    }

    #[test]
    fn sizes() {
        assert_eq!(DType::Bf16.size_bytes(), 2);
        assert_eq!(DType::E4m3.size_bytes(), 1);
        assert_eq!(DType::I64.size_bytes(), 8);
        assert!(IntType::I32.contains(i32::MAX as i64));
        assert!(!IntType::I32.contains(i32::MAX as i64 + 1));
    }
}
