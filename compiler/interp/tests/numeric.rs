//! Conversions against definitions independent of `numeric.rs`'s generic rounding.

use cutec_interp::numeric::{convert, from_f64, to_f64};
use cutec_ir::Scalar;

/// f32 -> bf16 round to nearest even, the classic bit formulation (NaN aside).
fn bf16_rne(x: f32) -> u16 {
    let b = x.to_bits();
    ((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

#[test]
fn every_bf16_and_f16_value_round_trips() {
    for s in [Scalar::BF16, Scalar::F16] {
        for bits in 0..=u16::MAX as u64 {
            let x = to_f64(s, bits);
            if x.is_nan() {
                assert!(to_f64(s, from_f64(s, x)).is_nan());
                continue;
            }
            assert_eq!(from_f64(s, x), bits, "{s} {bits:#06x} = {x}");
        }
    }
}

#[test]
fn f32_to_bf16_rounds_to_nearest_even() {
    // Every 2^13-th f32 bit pattern, ties and near-ties included by the stride's low bits being zero.
    let mut checked = 0;
    for hi in (0..=u32::MAX).step_by(8191) {
        let x = f32::from_bits(hi);
        if x.is_nan() {
            continue;
        }
        let got = convert(Scalar::F32, Scalar::BF16, u64::from(hi));
        assert_eq!(got, u64::from(bf16_rne(x)), "{x:e} ({hi:#010x})");
        checked += 1;
    }
    assert!(checked > 500_000);
    // Exact ties: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7 and goes to the even one, 1.
    assert_eq!(convert(Scalar::F32, Scalar::BF16, u64::from((1.0f32 + 1.0 / 256.0).to_bits())), 0x3f80);
    assert_eq!(convert(Scalar::F32, Scalar::BF16, u64::from((1.0f32 + 3.0 / 256.0).to_bits())), 0x3f82);
}

#[test]
fn fp8_conversions_saturate_and_keep_nan() {
    let f = |x: f32, to| convert(Scalar::F32, to, u64::from(x.to_bits()));
    assert_eq!(f(448.0, Scalar::E4M3), 0x7e);
    assert_eq!(f(1000.0, Scalar::E4M3), 0x7e);
    assert_eq!(f(-1000.0, Scalar::E4M3), 0xfe);
    assert_eq!(f(f32::INFINITY, Scalar::E4M3), 0x7e);
    assert_eq!(f(f32::NAN, Scalar::E4M3), 0x7f);
    assert_eq!(f(1e6, Scalar::E5M2), 0x7b);
    assert_eq!(f(f32::NEG_INFINITY, Scalar::E5M2), 0xfb);
    // The smallest e4m3 subnormal is 2^-9; half of it is a tie that goes to zero, a bit more to it.
    assert_eq!(f(2f32.powi(-9), Scalar::E4M3), 0x01);
    assert_eq!(f(2f32.powi(-10), Scalar::E4M3), 0x00);
    assert_eq!(f(1.5 * 2f32.powi(-10), Scalar::E4M3), 0x01);
    // Every finite fp8 value converts to f32 and back to itself (`.satfinite` turns e5m2's infinities into
    // its largest finite value, as checked above).
    for s in [Scalar::E4M3, Scalar::E5M2] {
        for bits in 0..=255u64 {
            let x = convert(s, Scalar::F32, bits);
            if !f32::from_bits(x as u32).is_finite() {
                continue;
            }
            assert_eq!(convert(Scalar::F32, s, x), bits, "{s} {bits:#04x}");
        }
    }
}

#[test]
fn integers_wrap_in_their_width() {
    use cutec_interp::numeric::{binary, int_value};
    use cutec_ir::BinaryOp;
    let i32b = |v: i32| u64::from(v as u32);
    assert_eq!(
        int_value(Scalar::I32, binary(BinaryOp::Add, Scalar::I32, i32b(i32::MAX), i32b(1)).unwrap()),
        i32::MIN as i64
    );
    assert_eq!(int_value(Scalar::I32, binary(BinaryOp::Div, Scalar::I32, i32b(-7), i32b(2)).unwrap()), -3);
    assert_eq!(int_value(Scalar::I32, binary(BinaryOp::Rem, Scalar::I32, i32b(-7), i32b(2)).unwrap()), -1);
    assert_eq!(int_value(Scalar::I32, binary(BinaryOp::Shr, Scalar::I32, i32b(-8), i32b(1)).unwrap()), -4);
    assert!(binary(BinaryOp::Div, Scalar::I32, i32b(1), 0).is_err());
}
