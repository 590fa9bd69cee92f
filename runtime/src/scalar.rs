//! Scalar kernel arguments.

use std::fmt;

use cutec_manifest::DType;

/// A scalar argument. Half-precision and FP8 values are carried as their raw bit patterns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ScalarValue {
    F32(f32),
    F64(f64),
    /// IEEE binary16 bits.
    F16(u16),
    /// bfloat16 bits.
    Bf16(u16),
    /// FP8 E4M3 (FN) bits.
    E4m3(u8),
    /// FP8 E5M2 bits.
    E5m2(u8),
    I8(i8),
    U8(u8),
    I32(i32),
    I64(i64),
    U32(u32),
    Bool(bool),
}

/// Why a scalar could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a valid {dtype} value")]
pub struct ParseScalarError {
    pub dtype: DType,
    pub text: String,
}

impl ScalarValue {
    /// The element type of this value.
    pub fn dtype(&self) -> DType {
        match self {
            ScalarValue::F32(_) => DType::F32,
            ScalarValue::F64(_) => DType::F64,
            ScalarValue::F16(_) => DType::F16,
            ScalarValue::Bf16(_) => DType::Bf16,
            ScalarValue::E4m3(_) => DType::E4m3,
            ScalarValue::E5m2(_) => DType::E5m2,
            ScalarValue::I8(_) => DType::I8,
            ScalarValue::U8(_) => DType::U8,
            ScalarValue::I32(_) => DType::I32,
            ScalarValue::I64(_) => DType::I64,
            ScalarValue::U32(_) => DType::U32,
            ScalarValue::Bool(_) => DType::Bool,
        }
    }

    /// The little-endian bytes the kernel receives (`dtype().size_bytes()` of them), zero-padded to 8.
    pub fn to_le_bytes(&self) -> [u8; 8] {
        let mut out = [0u8; 8];
        let mut put = |b: &[u8]| out[..b.len()].copy_from_slice(b);
        match *self {
            ScalarValue::F32(v) => put(&v.to_le_bytes()),
            ScalarValue::F64(v) => put(&v.to_le_bytes()),
            ScalarValue::F16(v) | ScalarValue::Bf16(v) => put(&v.to_le_bytes()),
            ScalarValue::E4m3(v) | ScalarValue::E5m2(v) | ScalarValue::U8(v) => put(&[v]),
            ScalarValue::I8(v) => put(&v.to_le_bytes()),
            ScalarValue::I32(v) => put(&v.to_le_bytes()),
            ScalarValue::I64(v) => put(&v.to_le_bytes()),
            ScalarValue::U32(v) => put(&v.to_le_bytes()),
            ScalarValue::Bool(v) => put(&[u8::from(v)]),
        }
        out
    }

    /// Parses `text` as a value of `dtype`: a decimal integer for integer types, `true`/`false`/`1`/`0` for
    /// `bool`, a decimal float for floating types (rounded to nearest-even for the narrow formats, saturating
    /// `e4m3` to ±448), or a raw bit pattern `0x...` for `f16`, `bf16`, `e4m3`, `e5m2`.
    pub fn parse(dtype: DType, text: &str) -> Result<ScalarValue, ParseScalarError> {
        let err = || ParseScalarError { dtype, text: text.to_owned() };
        let t = text.trim();
        let hex = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X"));
        let float = || t.parse::<f64>().map_err(|_| err());
        Ok(match dtype {
            DType::F32 => ScalarValue::F32(float()? as f32),
            DType::F64 => ScalarValue::F64(float()?),
            DType::F16 => ScalarValue::F16(match hex {
                Some(h) => u16::from_str_radix(h, 16).map_err(|_| err())?,
                None => crate::floats::f32_to_f16(float()? as f32),
            }),
            DType::Bf16 => ScalarValue::Bf16(match hex {
                Some(h) => u16::from_str_radix(h, 16).map_err(|_| err())?,
                None => crate::floats::f32_to_bf16(float()? as f32),
            }),
            DType::E4m3 => ScalarValue::E4m3(match hex {
                Some(h) => u8::from_str_radix(h, 16).map_err(|_| err())?,
                None => crate::floats::f32_to_e4m3(float()? as f32),
            }),
            DType::E5m2 => ScalarValue::E5m2(match hex {
                Some(h) => u8::from_str_radix(h, 16).map_err(|_| err())?,
                None => crate::floats::f32_to_e5m2(float()? as f32),
            }),
            DType::I8 => ScalarValue::I8(t.parse().map_err(|_| err())?),
            DType::U8 => ScalarValue::U8(t.parse().map_err(|_| err())?),
            DType::I32 => ScalarValue::I32(t.parse().map_err(|_| err())?),
            DType::I64 => ScalarValue::I64(t.parse().map_err(|_| err())?),
            DType::U32 => ScalarValue::U32(t.parse().map_err(|_| err())?),
            DType::Bool => ScalarValue::Bool(match t {
                "true" | "1" => true,
                "false" | "0" => false,
                _ => return Err(err()),
            }),
        })
    }
}

impl fmt::Display for ScalarValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScalarValue::F32(v) => write!(f, "{v}f32"),
            ScalarValue::F64(v) => write!(f, "{v}f64"),
            ScalarValue::F16(v) => write!(f, "f16:{v:#06x}"),
            ScalarValue::Bf16(v) => write!(f, "bf16:{v:#06x}"),
            ScalarValue::E4m3(v) => write!(f, "e4m3:{v:#04x}"),
            ScalarValue::E5m2(v) => write!(f, "e5m2:{v:#04x}"),
            ScalarValue::I8(v) => write!(f, "{v}i8"),
            ScalarValue::U8(v) => write!(f, "{v}u8"),
            ScalarValue::I32(v) => write!(f, "{v}i32"),
            ScalarValue::I64(v) => write!(f, "{v}i64"),
            ScalarValue::U32(v) => write!(f, "{v}u32"),
            ScalarValue::Bool(v) => write!(f, "{v}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_every_dtype() {
        assert_eq!(ScalarValue::parse(DType::F32, "1e-5"), Ok(ScalarValue::F32(1e-5)));
        assert_eq!(ScalarValue::parse(DType::Bf16, "1.0"), Ok(ScalarValue::Bf16(0x3f80)));
        assert_eq!(ScalarValue::parse(DType::Bf16, "0x3f80"), Ok(ScalarValue::Bf16(0x3f80)));
        assert_eq!(ScalarValue::parse(DType::F16, "-2"), Ok(ScalarValue::F16(0xc000)));
        assert_eq!(ScalarValue::parse(DType::E4m3, "1.0"), Ok(ScalarValue::E4m3(0x38)));
        assert_eq!(ScalarValue::parse(DType::E5m2, "1.0"), Ok(ScalarValue::E5m2(0x3c)));
        assert_eq!(ScalarValue::parse(DType::I64, "-9000000000"), Ok(ScalarValue::I64(-9_000_000_000)));
        assert_eq!(ScalarValue::parse(DType::Bool, "true"), Ok(ScalarValue::Bool(true)));
        for d in DType::ALL {
            let e = ScalarValue::parse(d, "nope").unwrap_err();
            assert_eq!(e.to_string(), format!("`nope` is not a valid {d} value"));
        }
        assert!(ScalarValue::parse(DType::U8, "256").is_err());
        assert!(ScalarValue::parse(DType::I32, "1.5").is_err());
    }

    #[test]
    fn bytes_are_little_endian_and_sized_by_dtype() {
        for (v, bytes) in [
            (ScalarValue::F32(1.0), vec![0, 0, 0x80, 0x3f]),
            (ScalarValue::I64(-2), vec![0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            (ScalarValue::Bf16(0x3f80), vec![0x80, 0x3f]),
            (ScalarValue::Bool(true), vec![1]),
        ] {
            let size = v.dtype().size_bytes() as usize;
            assert_eq!(&v.to_le_bytes()[..size], &bytes[..], "{v}");
            assert!(v.to_le_bytes()[size..].iter().all(|&b| b == 0));
        }
    }
}
