//! Conversions between `f32` and the narrow floating-point formats kernels use (`f16`, `bf16`, FP8 `e4m3`,
//! `e5m2`), on raw bit patterns, with no dependency.
//!
//! Encoding rounds to nearest, ties to even, handles subnormals, and maps NaN to a quiet NaN of the same sign.
//! Overflow gives infinity for the formats that have one (`f16`, `bf16`, `e5m2`) and saturates to ±448 for
//! `e4m3` (the OCP E4M3 *FN* format has no infinity; this matches CUDA's `__NV_SATFINITE` conversions).
//! Decoding is exact: every value of these formats is an `f32`.

#[derive(Clone, Copy)]
struct Format {
    exp_bits: u32,
    man_bits: u32,
    /// IEEE-style: the all-ones exponent encodes infinity and NaN. Otherwise (E4M3FN) only all-ones exponent and
    /// mantissa is NaN and there is no infinity.
    ieee: bool,
}

const F16: Format = Format { exp_bits: 5, man_bits: 10, ieee: true };
const BF16: Format = Format { exp_bits: 8, man_bits: 7, ieee: true };
const E4M3: Format = Format { exp_bits: 4, man_bits: 3, ieee: false };
const E5M2: Format = Format { exp_bits: 5, man_bits: 2, ieee: true };

/// `2^e` for exponents in f64's normal range.
fn pow2(e: i32) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

impl Format {
    const fn bias(self) -> i32 {
        (1 << (self.exp_bits - 1)) - 1
    }
    const fn exp_all_ones(self) -> u32 {
        (1 << self.exp_bits) - 1
    }
    const fn man_all_ones(self) -> u32 {
        (1 << self.man_bits) - 1
    }
    const fn sign_bit(self) -> u32 {
        1 << (self.exp_bits + self.man_bits)
    }
    const fn quiet_nan(self) -> u32 {
        if self.ieee {
            (self.exp_all_ones() << self.man_bits) | (1 << (self.man_bits - 1))
        } else {
            (self.exp_all_ones() << self.man_bits) | self.man_all_ones()
        }
    }
    const fn infinity(self) -> u32 {
        self.exp_all_ones() << self.man_bits
    }
    /// The largest finite magnitude's bits.
    const fn max_finite(self) -> u32 {
        if self.ieee {
            ((self.exp_all_ones() - 1) << self.man_bits) | self.man_all_ones()
        } else {
            (self.exp_all_ones() << self.man_bits) | (self.man_all_ones() - 1)
        }
    }

    fn encode(self, x: f32) -> u32 {
        let sign = if x.is_sign_negative() { self.sign_bit() } else { 0 };
        if x.is_nan() {
            return sign | self.quiet_nan();
        }
        let overflow = if self.ieee { self.infinity() } else { self.max_finite() };
        if x.is_infinite() {
            return sign | overflow;
        }
        let a = f64::from(x.abs());
        if a == 0.0 {
            return sign;
        }
        let (m, bias) = (self.man_bits as i32, self.bias());
        let min_exp = 1 - bias;
        // `a` is a normal f64 (every f32 is), so its biased exponent field gives floor(log2(a)).
        let e = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
        let mut q_exp = e.max(min_exp) - m; // the exponent of one unit in the last place
        // Exact: `a` has 24 significant bits and `q` is a power of two; the quotient is < 2^(m+1) + 1.
        let mut n = (a / pow2(q_exp)).round_ties_even() as u64;
        if n == 1 << (m + 1) {
            n >>= 1;
            q_exp += 1;
        }
        let bits = if n < 1 << m {
            n as u32 // subnormal (or zero after rounding)
        } else {
            let exp_field = q_exp + m + bias;
            if exp_field > self.exp_all_ones() as i32 {
                return sign | overflow;
            }
            ((exp_field as u32) << self.man_bits) | (n as u32 - (1 << self.man_bits))
        };
        if bits > self.max_finite() { sign | overflow } else { sign | bits }
    }

    fn decode(self, bits: u32) -> f32 {
        let sign = if bits & self.sign_bit() != 0 { -1.0 } else { 1.0 };
        let exp_field = (bits >> self.man_bits) & self.exp_all_ones();
        let man = bits & self.man_all_ones();
        let (m, bias) = (self.man_bits as i32, self.bias());
        if self.ieee && exp_field == self.exp_all_ones() {
            return if man == 0 { sign as f32 * f32::INFINITY } else { f32::NAN.copysign(sign as f32) };
        }
        if !self.ieee && exp_field == self.exp_all_ones() && man == self.man_all_ones() {
            return f32::NAN.copysign(sign as f32);
        }
        let magnitude = if exp_field == 0 {
            f64::from(man) * pow2(1 - bias - m)
        } else {
            f64::from(man + (1 << self.man_bits)) * pow2(exp_field as i32 - bias - m)
        };
        (sign * magnitude) as f32
    }
}

pub fn f32_to_f16(x: f32) -> u16 {
    F16.encode(x) as u16
}
pub fn f16_to_f32(bits: u16) -> f32 {
    F16.decode(u32::from(bits))
}
pub fn f32_to_bf16(x: f32) -> u16 {
    BF16.encode(x) as u16
}
pub fn bf16_to_f32(bits: u16) -> f32 {
    BF16.decode(u32::from(bits))
}
pub fn f32_to_e4m3(x: f32) -> u8 {
    E4M3.encode(x) as u8
}
pub fn e4m3_to_f32(bits: u8) -> f32 {
    E4M3.decode(u32::from(bits))
}
pub fn f32_to_e5m2(x: f32) -> u8 {
    E5M2.encode(x) as u8
}
pub fn e5m2_to_f32(bits: u8) -> f32 {
    E5M2.decode(u32::from(bits))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every non-NaN bit pattern decodes to a value that encodes back to the same pattern.
    fn exhaustive_round_trip(fmt: Format) {
        let total = 1u32 << (1 + fmt.exp_bits + fmt.man_bits);
        for bits in 0..total {
            let x = fmt.decode(bits);
            if x.is_nan() {
                assert_eq!(fmt.encode(x), fmt.quiet_nan() | (bits & fmt.sign_bit()));
                continue;
            }
            assert_eq!(fmt.encode(x), bits, "bits {bits:#x} -> {x}");
        }
    }

    #[test]
    fn round_trips() {
        exhaustive_round_trip(F16);
        exhaustive_round_trip(BF16);
        exhaustive_round_trip(E4M3);
        exhaustive_round_trip(E5M2);
    }

    #[test]
    fn known_values() {
        assert_eq!(f32_to_f16(1.0), 0x3c00);
        assert_eq!(f32_to_f16(-2.0), 0xc000);
        assert_eq!(f32_to_f16(65504.0), 0x7bff);
        assert_eq!(f32_to_f16(65519.0), 0x7bff); // below the midpoint to 65536
        assert_eq!(f32_to_f16(65520.0), 0x7c00); // the midpoint rounds to even: infinity
        assert_eq!(f32_to_f16(5.960_464_5e-8), 0x0001); // smallest subnormal
        assert_eq!(f32_to_f16(2.9e-8), 0x0000); // below half of it
        assert_eq!(f32_to_f16(3.0e-8), 0x0001); // above half of it
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
        assert_eq!(f32_to_bf16(1.0), 0x3f80);
        assert_eq!(f32_to_bf16(1.0 + 1.0 / 256.0), 0x3f80); // tie: to even
        assert_eq!(f32_to_bf16(1.0 + 3.0 / 256.0), 0x3f82); // tie: to even (up)
        assert_eq!(f32_to_bf16(f32::MAX), 0x7f80); // rounds up past bf16's max
        assert_eq!(bf16_to_f32(0xc049), -3.140_625);
        assert_eq!(f32_to_e4m3(448.0), 0x7e);
        assert_eq!(f32_to_e4m3(1.0e6), 0x7e); // saturates
        assert_eq!(f32_to_e4m3(-1.0e6), 0xfe);
        assert_eq!(f32_to_e4m3(f32::INFINITY), 0x7e);
        assert_eq!(f32_to_e4m3(f32::NAN), 0x7f);
        assert_eq!(e4m3_to_f32(0x7f).to_bits(), f32::NAN.to_bits());
        assert_eq!(e4m3_to_f32(0x01), 2f32.powi(-9)); // smallest subnormal
        assert_eq!(f32_to_e4m3(0.3), 0x2a); // 0.3 -> 0.3125 (1.25 * 2^-2)
        assert_eq!(f32_to_e5m2(57344.0), 0x7b);
        assert_eq!(f32_to_e5m2(1.0e6), 0x7c);
        assert_eq!(e5m2_to_f32(0x7c), f32::INFINITY);
        assert_eq!(f32_to_f16(-0.0), 0x8000);
        assert!(f16_to_f32(0x7e00).is_nan());
    }
}
