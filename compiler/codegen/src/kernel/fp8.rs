//! The 8-bit floats (`e4m3`, `e5m2`): in LLVM they are `i8` (LLVM has no fp8 type), and every conversion to or
//! from them goes two lanes at a time through the packed `cvt` of sm_89 and later (PTX ISA §9.7.9.21):
//! - widening: `cvt.rn.f16x2.{e4m3x2,e5m2x2}`, exact (every fp8 value is an `f16`), then `f16` to the target;
//! - narrowing: `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32` from `f32` (or `.f16x2` from `f16`), one rounding to
//!   nearest even, saturating to the largest finite value (±448, ±57344; NaN stays NaN). Other sources go to
//!   `f32` first: `bf16` and the integers up to 2^24 exactly, `f64` and larger integers with a rounding of
//!   their own before the one to fp8.
//!
//! A vector's lanes are paired in memory order: lane `2i` is the lower byte of pair `i`, as `cvt` packs them.

use super::{KernelCodegen, ll};
use crate::CodegenError;
use crate::intrinsics as nv;
use cutec_ir::{Scalar, Type};
use inkwell::types::BasicTypeEnum;
use inkwell::values::BasicValueEnum;

impl<'ctx> KernelCodegen<'_, 'ctx> {
    /// [`Expr::Convert`](cutec_ir::Expr::Convert) where the source or the target is fp8: through `f16` from fp8,
    /// through `f32` (or from `f16`) to fp8.
    pub(super) fn convert_fp8(
        &self,
        v: BasicValueEnum<'ctx>,
        src: Scalar,
        to: Scalar,
        result: Type,
    ) -> Result<BasicValueEnum<'ctx>, CodegenError> {
        let lanes = result.lanes().unwrap_or(1);
        let of = |s: Scalar| Type::vector(s, lanes as u8);
        if src.is_fp8() {
            let half = self.fp8_to_f16(v, src, lanes)?;
            return if to.is_fp8() {
                self.narrow_to_fp8(half, Scalar::F16, to, lanes)
            } else {
                self.convert(half, of(Scalar::F16), to, result)
            };
        }
        let (v, from) = match src {
            Scalar::F16 | Scalar::F32 => (v, src),
            _ => (self.convert(v, of(src), Scalar::F32, of(Scalar::F32))?, Scalar::F32),
        };
        self.narrow_to_fp8(v, from, to, lanes)
    }

    /// The lanes of a scalar (`lanes` 1) or vector value.
    fn lanes_of(&self, v: BasicValueEnum<'ctx>, lanes: u32) -> Result<Vec<BasicValueEnum<'ctx>>, CodegenError> {
        if lanes == 1 {
            return Ok(vec![v]);
        }
        let v = v.into_vector_value();
        (0..lanes)
            .map(|i| {
                ll(self.builder.build_extract_element(v, self.context.i32_type().const_int(u64::from(i), false), ""))
            })
            .collect()
    }

    /// A scalar of `ty` from one lane, or a vector of `ty` lanes from several.
    fn gather_lanes(
        &self,
        ty: BasicTypeEnum<'ctx>,
        parts: &[BasicValueEnum<'ctx>],
    ) -> Result<BasicValueEnum<'ctx>, CodegenError> {
        if let [one] = parts {
            return Ok(*one);
        }
        let mut v = match ty {
            BasicTypeEnum::IntType(t) => t.vec_type(parts.len() as u32).get_poison(),
            BasicTypeEnum::FloatType(t) => t.vec_type(parts.len() as u32).get_poison(),
            other => return Err(CodegenError::llvm("fp8", format!("lanes of {other}"))),
        };
        for (i, &p) in parts.iter().enumerate() {
            let at = self.context.i32_type().const_int(i as u64, false);
            v = ll(self.builder.build_insert_element(v, p, at, ""))?;
        }
        Ok(v.into())
    }

    /// `lanes` fp8 values of `scalar` (`i8` lanes) as `f16` ones, two per `cvt.rn.f16x2`.
    fn fp8_to_f16(
        &self,
        v: BasicValueEnum<'ctx>,
        scalar: Scalar,
        lanes: u32,
    ) -> Result<BasicValueEnum<'ctx>, CodegenError> {
        let (b, i16t, i32t) = (&self.builder, self.context.i16_type(), self.context.i32_type());
        // The pairs as `i16`s, lane 0 of each in the lower byte; a lone lane with 0 above it.
        let pairs = if lanes == 1 {
            vec![ll(b.build_int_z_extend(v.into_int_value(), i16t, ""))?.into()]
        } else {
            let words = ll(b.build_bit_cast(v, i16t.vec_type(lanes / 2), ""))?;
            self.lanes_of(words, lanes / 2)?
        };
        let mut halves = Vec::with_capacity(pairs.len() * 2);
        for packed in pairs {
            let h2 = self.call(nv::fp8x2_to_f16x2(scalar), &[], &[packed])?.into_vector_value();
            for j in 0..lanes.min(2) {
                halves.push(ll(b.build_extract_element(h2, i32t.const_int(u64::from(j), false), ""))?);
            }
        }
        self.gather_lanes(self.context.f16_type().into(), &halves)
    }

    /// `lanes` values of `from` (`f32` or `f16`) rounded to fp8 `to` (`i8` lanes), two per packed `cvt`.
    fn narrow_to_fp8(
        &self,
        v: BasicValueEnum<'ctx>,
        from: Scalar,
        to: Scalar,
        lanes: u32,
    ) -> Result<BasicValueEnum<'ctx>, CodegenError> {
        let (b, i8t, i16t, i32t) =
            (&self.builder, self.context.i8_type(), self.context.i16_type(), self.context.i32_type());
        let values = self.lanes_of(v, lanes)?;
        let mut pairs = Vec::with_capacity(values.len().div_ceil(2));
        for pair in values.chunks(2) {
            let packed = if from == Scalar::F16 {
                let zero = self.context.f16_type().const_zero().into();
                let mut h2 = self.context.f16_type().vec_type(2).get_poison();
                for j in 0..2u64 {
                    let x = pair.get(j as usize).copied().unwrap_or(zero);
                    h2 = ll(b.build_insert_element(h2, x, i32t.const_int(j, false), ""))?;
                }
                self.call(nv::f16x2_to_fp8x2(to), &[], &[h2.into()])?
            } else {
                // `cvt ... d, a, b` puts `a` in the upper byte: lane 1 first.
                let hi = pair.get(1).copied().unwrap_or_else(|| self.context.f32_type().const_zero().into());
                self.call(nv::f32x2_to_fp8x2(to), &[], &[hi, pair[0]])?
            };
            pairs.push(packed);
        }
        if lanes == 1 {
            return Ok(ll(b.build_int_truncate(pairs[0].into_int_value(), i8t, ""))?.into());
        }
        let words = self.gather_lanes(i16t.into(), &pairs)?;
        ll(b.build_bit_cast(words, i8t.vec_type(lanes), ""))
    }
}
