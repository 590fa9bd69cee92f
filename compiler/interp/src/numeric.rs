//! Bit-exact scalar arithmetic: the IR's values as bits, the conversions between its float formats with the
//! rounding and saturation the code generator emits, and the approximate math within the hardware's error.
//!
//! Every scalar is held as a `u64` of bits: `i1` as 0 or 1, `i32` zero-extended (its operations read it as
//! signed), `i64`, and the floats as their IEEE (or OCP fp8) encodings. `f16`/`bf16` arithmetic is computed in
//! `f32` and rounded once: `f32`'s 24 bits are at least twice `bf16`'s and `f16`'s precision plus two, so the
//! double rounding of `+ - * / sqrt` equals the one rounding the hardware does.

use cutec_ir::{BinaryOp, CompareOp, MathFn, Scalar};

/// The encoding of a binary float format (bias `2^(exp_bits-1) - 1`).
struct Format {
    exp_bits: u32,
    man_bits: u32,
    /// The largest finite magnitude.
    max: f64,
    /// Infinities exist (else an overflow saturates or is NaN).
    has_inf: bool,
    nan: u64,
}

const F16: Format = Format { exp_bits: 5, man_bits: 10, max: 65504.0, has_inf: true, nan: 0x7e00 };
const BF16: Format = Format { exp_bits: 8, man_bits: 7, max: 3.3895313892515355e38, has_inf: true, nan: 0x7fc0 };
/// OCP E4M3 (the *FN* variant: no infinities, NaN `0x7f`).
const E4M3: Format = Format { exp_bits: 4, man_bits: 3, max: 448.0, has_inf: false, nan: 0x7f };
const E5M2: Format = Format { exp_bits: 5, man_bits: 2, max: 57344.0, has_inf: true, nan: 0x7e };

fn format(s: Scalar) -> Option<&'static Format> {
    match s {
        Scalar::F16 => Some(&F16),
        Scalar::BF16 => Some(&BF16),
        Scalar::E4M3 => Some(&E4M3),
        Scalar::E5M2 => Some(&E5M2),
        _ => None,
    }
}

/// `x` rounded to nearest even in `fmt`. With `satfinite`, a magnitude over the largest finite one (infinity
/// included) becomes it, sign kept (PTX `cvt.rn.satfinite`); without, it becomes infinity (or NaN in a format
/// without infinities).
fn round_to(x: f64, fmt: &Format, satfinite: bool) -> u64 {
    let total = 1 + fmt.exp_bits + fmt.man_bits;
    let sign = if x.is_sign_negative() { 1u64 << (total - 1) } else { 0 };
    if x.is_nan() {
        return fmt.nan;
    }
    let bias = (1i32 << (fmt.exp_bits - 1)) - 1;
    let overflow = |sign: u64| {
        if satfinite || !fmt.has_inf {
            if satfinite { sign | encode_finite(fmt.max, fmt, bias) } else { fmt.nan }
        } else {
            sign | (((1u64 << fmt.exp_bits) - 1) << fmt.man_bits)
        }
    };
    let a = x.abs();
    if a.is_infinite() {
        return overflow(sign);
    }
    if a == 0.0 {
        return sign;
    }
    let emin = 1 - bias;
    let e = (exponent_of(a)).max(emin);
    let quantum = pow2(e - fmt.man_bits as i32);
    let rounded = (a / quantum).round_ties_even() * quantum;
    if rounded > fmt.max {
        return overflow(sign);
    }
    sign | encode_finite(rounded, fmt, bias)
}

/// The bits (sign excluded) of a finite magnitude exactly representable in `fmt`.
fn encode_finite(a: f64, fmt: &Format, bias: i32) -> u64 {
    if a == 0.0 {
        return 0;
    }
    let emin = 1 - bias;
    let e = exponent_of(a);
    if e < emin {
        return (a / pow2(emin - fmt.man_bits as i32)) as u64;
    }
    let mantissa = (a / pow2(e - fmt.man_bits as i32)) as u64 - (1u64 << fmt.man_bits);
    (((e + bias) as u64) << fmt.man_bits) | mantissa
}

/// `floor(log2(a))` of a positive finite `a`.
fn exponent_of(a: f64) -> i32 {
    let bits = a.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32;
    if e == 0 {
        // f64 subnormal: far below every format here.
        -1075
    } else {
        e - 1023
    }
}

fn pow2(e: i32) -> f64 {
    2f64.powi(e)
}

/// The value of `bits` in `fmt`.
fn decode(bits: u64, fmt: &Format) -> f64 {
    let bias = (1i32 << (fmt.exp_bits - 1)) - 1;
    let sign = if (bits >> (fmt.exp_bits + fmt.man_bits)) & 1 == 1 { -1.0 } else { 1.0 };
    let e = ((bits >> fmt.man_bits) & ((1 << fmt.exp_bits) - 1)) as i32;
    let m = bits & ((1 << fmt.man_bits) - 1);
    let emax_field = (1i32 << fmt.exp_bits) - 1;
    if e == emax_field && fmt.has_inf {
        return if m == 0 { sign * f64::INFINITY } else { f64::NAN };
    }
    if !fmt.has_inf && e == emax_field && m == (1 << fmt.man_bits) - 1 {
        return f64::NAN;
    }
    if e == 0 {
        return sign * m as f64 * pow2(1 - bias - fmt.man_bits as i32);
    }
    sign * (1.0 + m as f64 / pow2(fmt.man_bits as i32)) * pow2(e - bias)
}

/// The value of a float scalar's bits as an `f64` (exact: every format here is a subset of `f64`).
pub fn to_f64(s: Scalar, bits: u64) -> f64 {
    match s {
        Scalar::F32 => f64::from(f32::from_bits(bits as u32)),
        Scalar::F64 => f64::from_bits(bits),
        _ => format(s).map_or(0.0, |f| decode(bits, f)),
    }
}

/// `x` rounded to the float scalar `s` as `cvt.rn` does; to fp8 through `f32` first, with `.satfinite`, as the
/// code generator converts (`kernel/fp8.rs`).
pub fn from_f64(s: Scalar, x: f64) -> u64 {
    match s {
        Scalar::F32 => u64::from((x as f32).to_bits()),
        Scalar::F64 => x.to_bits(),
        Scalar::E4M3 | Scalar::E5M2 => format(s).map_or(0, |f| round_to(f64::from(x as f32), f, true)),
        _ => format(s).map_or(0, |f| round_to(x, f, false)),
    }
}

/// An integer's bits read as signed in its width.
pub fn int_value(s: Scalar, bits: u64) -> i64 {
    match s {
        Scalar::I1 => (bits & 1) as i64,
        Scalar::I32 => bits as u32 as i32 as i64,
        _ => bits as i64,
    }
}

/// `v` truncated to the width of integer scalar `s`, as bits.
pub fn int_bits(s: Scalar, v: i64) -> u64 {
    match s {
        Scalar::I1 => (v & 1) as u64,
        Scalar::I32 => u64::from(v as u32),
        _ => v as u64,
    }
}

/// Why an operation has no value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithError {
    DivisionByZero,
}

/// `lhs op rhs` on two scalars of type `s`.
pub fn binary(op: BinaryOp, s: Scalar, lhs: u64, rhs: u64) -> Result<u64, ArithError> {
    if s.is_float() {
        return Ok(float_binary(op, s, lhs, rhs));
    }
    let width = match s {
        Scalar::I1 => 1,
        Scalar::I32 => 32,
        _ => 64,
    };
    let (a, b) = (int_value(s, lhs), int_value(s, rhs));
    let v = match op {
        BinaryOp::Add => a.wrapping_add(b),
        BinaryOp::Sub => a.wrapping_sub(b),
        BinaryOp::Mul => a.wrapping_mul(b),
        BinaryOp::Div | BinaryOp::Rem if b == 0 => return Err(ArithError::DivisionByZero),
        // Signed, in the operand's width: i32::MIN / -1 wraps as the hardware's `div.s32` does.
        BinaryOp::Div if width == 32 => i64::from((a as i32).wrapping_div(b as i32)),
        BinaryOp::Rem if width == 32 => i64::from((a as i32).wrapping_rem(b as i32)),
        BinaryOp::Div => a.wrapping_div(b),
        BinaryOp::Rem => a.wrapping_rem(b),
        BinaryOp::And => a & b,
        BinaryOp::Or => a | b,
        BinaryOp::Xor => a ^ b,
        // PTX's shifts clamp the amount to the width: `shl` by 32 or more gives 0, `shr.s` the sign.
        BinaryOp::Shl => {
            if (0..width).contains(&b) {
                a.wrapping_shl(b as u32)
            } else {
                0
            }
        }
        BinaryOp::Shr => a >> b.clamp(0, width - 1).min(63),
    };
    Ok(int_bits(s, v))
}

fn float_binary(op: BinaryOp, s: Scalar, lhs: u64, rhs: u64) -> u64 {
    if s == Scalar::F64 {
        let (a, b) = (f64::from_bits(lhs), f64::from_bits(rhs));
        return match op {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            BinaryOp::Mul => a * b,
            BinaryOp::Div => a / b,
            BinaryOp::Rem => a % b,
            // The validator refuses bitwise operators on floats.
            _ => f64::NAN,
        }
        .to_bits();
    }
    let (a, b) = (to_f64(s, lhs) as f32, to_f64(s, rhs) as f32);
    let v = match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => a * b,
        BinaryOp::Div => a / b,
        BinaryOp::Rem => a % b,
        _ => f32::NAN,
    };
    from_f64(s, f64::from(v))
}

/// `-x` or `!x`.
pub fn negate(s: Scalar, bits: u64) -> u64 {
    if s.is_float() {
        let sign = 1u64 << (s.size_bytes() * 8 - 1);
        return bits ^ sign;
    }
    int_bits(s, int_value(s, bits).wrapping_neg())
}

pub fn not(s: Scalar, bits: u64) -> u64 {
    int_bits(s, !int_value(s, bits))
}

/// `lhs op rhs` as an `i1`: signed for integers, C's semantics for floats.
pub fn compare(op: CompareOp, s: Scalar, lhs: u64, rhs: u64) -> bool {
    if s.is_float() {
        let (a, b) = (to_f64(s, lhs), to_f64(s, rhs));
        return match op {
            CompareOp::Eq => a == b,
            CompareOp::Ne => a != b,
            CompareOp::Lt => a < b,
            CompareOp::Le => a <= b,
            CompareOp::Gt => a > b,
            CompareOp::Ge => a >= b,
        };
    }
    let (a, b) = (int_value(s, lhs), int_value(s, rhs));
    match op {
        CompareOp::Eq => a == b,
        CompareOp::Ne => a != b,
        CompareOp::Lt => a < b,
        CompareOp::Le => a <= b,
        CompareOp::Gt => a > b,
        CompareOp::Ge => a >= b,
    }
}

/// A conversion of one lane from `from` to `to` (see [`cutec_ir::Expr::Convert`]).
pub fn convert(from: Scalar, to: Scalar, bits: u64) -> u64 {
    match (from.is_float(), to.is_float()) {
        (false, false) => int_bits(to, int_value(from, bits)),
        (false, true) => {
            let v = int_value(from, bits);
            // One rounding from the integer, as `cvt.rn.f32.s32`; to fp8 through f32 (`from_f64` does it).
            match to {
                Scalar::F32 => u64::from((v as f32).to_bits()),
                _ => from_f64(to, v as f64),
            }
        }
        // `cvt.rzi.s32.f32`: toward zero, saturating, NaN to 0 (Rust's `as` is exactly that).
        (true, false) => {
            let x = to_f64(from, bits);
            match to {
                Scalar::I1 => u64::from(x != 0.0),
                Scalar::I32 => u64::from(x as i32 as u32),
                _ => (x as i64) as u64,
            }
        }
        (true, true) if from == to => bits,
        // To fp8 `from_f64` goes through f32, which changes no f16 or bf16 value: one rounding, as the packed
        // cvt from f16 does.
        (true, true) => from_f64(to, to_f64(from, bits)),
    }
}

/// `fun(args)` on scalars of type `s`. The approximate functions (`ex2.approx`: 2 ulp; `tanh.approx`: relative
/// 2^-11; `rsqrt.approx`) are computed correctly rounded, which is within the hardware's documented error.
pub fn math(fun: MathFn, s: Scalar, args: &[u64]) -> u64 {
    let arg = |i: usize| args.get(i).copied().unwrap_or(0);
    if !s.is_float() {
        let (a, b) = (int_value(s, arg(0)), int_value(s, arg(1)));
        let v = match fun {
            MathFn::Abs => a.wrapping_abs(),
            MathFn::Max => a.max(b),
            MathFn::Min => a.min(b),
            MathFn::Fma => a.wrapping_mul(b).wrapping_add(int_value(s, arg(2))),
            _ => a,
        };
        return int_bits(s, v);
    }
    if s == Scalar::F64 {
        let x = |i| f64::from_bits(arg(i));
        let v = match fun {
            MathFn::Exp => x(0).exp(),
            MathFn::Exp2 => x(0).exp2(),
            MathFn::Sqrt => x(0).sqrt(),
            MathFn::Rsqrt => 1.0 / x(0).sqrt(),
            MathFn::Tanh => x(0).tanh(),
            MathFn::Abs => x(0).abs(),
            MathFn::Max => x(0).max(x(1)),
            MathFn::Min => x(0).min(x(1)),
            MathFn::Fma => x(0).mul_add(x(1), x(2)),
        };
        return v.to_bits();
    }
    let x = |i| to_f64(s, arg(i)) as f32;
    let v: f32 = match fun {
        // `ex2.approx(x * log2(e))`: the product rounded to f32 first, as the code generator computes it.
        MathFn::Exp => f64::from(x(0) * std::f32::consts::LOG2_E).exp2() as f32,
        MathFn::Exp2 => f64::from(x(0)).exp2() as f32,
        MathFn::Sqrt => x(0).sqrt(),
        MathFn::Rsqrt => (1.0 / f64::from(x(0)).sqrt()) as f32,
        MathFn::Tanh => f64::from(x(0)).tanh() as f32,
        MathFn::Abs => x(0).abs(),
        // IEEE maxNum/minNum: a NaN operand yields the other (Rust's `max`/`min` do).
        MathFn::Max => x(0).max(x(1)),
        MathFn::Min => x(0).min(x(1)),
        MathFn::Fma => x(0).mul_add(x(1), x(2)),
    };
    from_f64(s, f64::from(v))
}
