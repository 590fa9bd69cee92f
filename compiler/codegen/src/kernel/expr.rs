//! Expressions: one LLVM value per IR expression, computed where the IR emits it.

use super::{KernelCodegen, ll};
use crate::CodegenError;
use crate::intrinsics as nv;
use cutec_ir::{BinaryOp, CompareOp, Expr, Handle, Literal, MathFn, Scalar, Type, UnaryOp};
use inkwell::values::{BasicMetadataValueEnum, BasicValue, BasicValueEnum, FastMathFlags, InstructionOpcode as Op};
use inkwell::{FloatPredicate, IntPredicate};

/// log2(e): `exp(x)` is computed as `ex2.approx(x * log2(e))`, as CUDA's `__expf` does.
const LOG2_E: f64 = std::f64::consts::LOG2_E;

impl<'ctx> KernelCodegen<'_, 'ctx> {
    /// The LLVM value of an expression: a constant, an argument or an allocation address for global ones, the
    /// value computed at its emission otherwise.
    pub(super) fn value(&self, h: Handle<Expr>) -> Result<BasicValueEnum<'ctx>, CodegenError> {
        if let Some(Some(v)) = self.values.get(h.index()) {
            return Ok(*v);
        }
        let missing = || CodegenError::llvm("expressions", format!("{h:?} used before its emission"));
        match self.kernel.exprs.get(h).ok_or_else(missing)? {
            Expr::Literal(l) => Ok(self.literal(*l)),
            Expr::Param(i) => self.function()?.get_nth_param(*i).ok_or_else(missing),
            Expr::AllocPtr(a) => self.allocs.get(a.index()).map(|p| (*p).into()).ok_or_else(missing),
            _ => Err(missing()),
        }
    }

    fn literal(&self, l: Literal) -> BasicValueEnum<'ctx> {
        match l {
            Literal::Bool(b) => self.context.bool_type().const_int(b as u64, false).into(),
            Literal::Int { value, ty } => self.scalar_type(ty).into_int_type().const_int(value as u64, true).into(),
            // LLVM rounds the f64 to the type's precision (f16, bf16, f32).
            Literal::Float { value, ty } => self.scalar_type(ty).into_float_type().const_float(value).into(),
        }
    }

    /// Computes an emitted expression and records its value.
    pub(super) fn emit_expr(&mut self, h: Handle<Expr>) -> Result<(), CodegenError> {
        let ty = self.ty(h);
        let b = &self.builder;
        let v: BasicValueEnum<'ctx> = match *self.kernel.exprs.get(h).ok_or_else(|| invalid(h))? {
            Expr::Literal(_) | Expr::Param(_) | Expr::AllocPtr(_) => return Ok(()),
            // A CTA alone in its (implicit) cluster is rank 0; without a declared cluster LLVM cannot know it.
            Expr::Special(cutec_ir::SpecialReg::ClusterCtaRank)
                if self.kernel.cluster.is_none_or(|c| c.iter().product::<u32>() == 1) =>
            {
                self.context.i32_type().const_zero().into()
            }
            Expr::Special(reg) => self.call(&nv::special_reg(reg), &[], &[])?,
            Expr::ReadVar(var) => {
                let ptr = *self.vars.get(var.index()).ok_or_else(|| invalid(h))?;
                ll(b.build_load(self.llvm_type(ty), ptr, ""))?
            }
            Expr::Unary { op, value } => self.unary(op, ty, self.value(value)?)?,
            Expr::Binary { op, lhs, rhs } => self.binary(op, ty, self.value(lhs)?, self.value(rhs)?)?,
            Expr::Compare { op, lhs, rhs } => self.compare(op, self.ty(lhs), self.value(lhs)?, self.value(rhs)?)?,
            Expr::Select { cond, accept, reject } => {
                let c = self.value(cond)?.into_int_value();
                ll(b.build_select(c, self.value(accept)?, self.value(reject)?, ""))?
            }
            Expr::Convert { value, to } => self.convert(self.value(value)?, self.ty(value), to, ty)?,
            Expr::Math { fun, arg, arg1, arg2 } => {
                let mut args = vec![self.value(arg)?];
                for a in arg1.into_iter().chain(arg2) {
                    args.push(self.value(a)?);
                }
                self.math(fun, ty, &args)?
            }
            Expr::Offset { base, index, elem } => {
                let base = self.value(base)?.into_pointer_value();
                let index = self.value(index)?.into_int_value();
                // SAFETY (LLVM's): the IR promises the offset stays inside the allocation, which is what
                // `inbounds` asserts; it lets LLVM fold the address arithmetic of vectorized accesses.
                let p = unsafe { b.build_in_bounds_gep(self.llvm_type(elem), base, &[index], "") };
                ll(p)?.into()
            }
            // Defined by its operation statement (`stmt.rs`), never emitted.
            Expr::OpResult(_) => return Err(invalid(h)),
            Expr::MapShared { ptr, cta } => {
                self.call(nv::MAPA_SHARED_CLUSTER, &[], &[self.value(ptr)?, self.value(cta)?])?
            }
            Expr::Extract { vector, lane } => {
                let v = self.value(vector)?.into_vector_value();
                let lane = self.context.i32_type().const_int(lane as u64, false);
                ll(b.build_extract_element(v, lane, ""))?
            }
            Expr::Compose { ty: vty, ref parts } => {
                let mut v = self.llvm_type(vty).into_vector_type().get_poison();
                for (i, &p) in parts.iter().enumerate() {
                    let lane = self.context.i32_type().const_int(i as u64, false);
                    v = ll(b.build_insert_element(v, self.value(p)?, lane, ""))?;
                }
                v.into()
            }
        };
        if let Some(slot) = self.values.get_mut(h.index()) {
            *slot = Some(v);
        }
        Ok(())
    }

    /// Calls an intrinsic; `overloads` picks the overload of overloaded ones.
    pub(super) fn call(
        &self,
        name: &str,
        overloads: &[inkwell::types::BasicTypeEnum<'ctx>],
        args: &[BasicValueEnum<'ctx>],
    ) -> Result<BasicValueEnum<'ctx>, CodegenError> {
        let f = nv::declare(self.module, name, overloads)?;
        let args: Vec<BasicMetadataValueEnum<'ctx>> = args.iter().map(|&a| a.into()).collect();
        let call = ll(self.builder.build_call(f, &args, ""))?;
        call.try_as_basic_value().basic().ok_or_else(|| CodegenError::llvm("intrinsics", format!("{name} is void")))
    }

    /// Calls an intrinsic that gives no value.
    pub(super) fn call_void(
        &self,
        name: &str,
        overloads: &[inkwell::types::BasicTypeEnum<'ctx>],
        args: &[BasicValueEnum<'ctx>],
    ) -> Result<(), CodegenError> {
        let f = nv::declare(self.module, name, overloads)?;
        let args: Vec<BasicMetadataValueEnum<'ctx>> = args.iter().map(|&a| a.into()).collect();
        ll(self.builder.build_call(f, &args, ""))?;
        Ok(())
    }

    fn unary(&self, op: UnaryOp, ty: Type, v: BasicValueEnum<'ctx>) -> Result<BasicValueEnum<'ctx>, CodegenError> {
        let b = &self.builder;
        Ok(match (op, v) {
            (UnaryOp::Neg, BasicValueEnum::FloatValue(f)) => ll(b.build_float_neg(f, ""))?.into(),
            (UnaryOp::Neg, BasicValueEnum::VectorValue(x)) if ty.is_float() => ll(b.build_float_neg(x, ""))?.into(),
            (UnaryOp::Neg, BasicValueEnum::IntValue(i)) => ll(b.build_int_neg(i, ""))?.into(),
            (UnaryOp::Neg, BasicValueEnum::VectorValue(x)) => ll(b.build_int_neg(x, ""))?.into(),
            (UnaryOp::Not, BasicValueEnum::IntValue(i)) => ll(b.build_not(i, ""))?.into(),
            (UnaryOp::Not, BasicValueEnum::VectorValue(x)) => ll(b.build_not(x, ""))?.into(),
            _ => return Err(CodegenError::llvm("unary", format!("{op:?} of {ty}"))),
        })
    }

    fn binary(
        &self,
        op: BinaryOp,
        ty: Type,
        l: BasicValueEnum<'ctx>,
        r: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, CodegenError> {
        let float = ty.is_float();
        if !float && matches!(op, BinaryOp::Div | BinaryOp::Rem | BinaryOp::Shl | BinaryOp::Shr) {
            return self.defined_int_op(op, l, r);
        }
        let opcode = match op {
            BinaryOp::Add if float => Op::FAdd,
            BinaryOp::Sub if float => Op::FSub,
            BinaryOp::Mul if float => Op::FMul,
            BinaryOp::Div if float => Op::FDiv,
            BinaryOp::Add => Op::Add,
            BinaryOp::Sub => Op::Sub,
            BinaryOp::Mul => Op::Mul,
            // Integer division, remainder and shifts went to `defined_int_op`.
            BinaryOp::Div | BinaryOp::Rem | BinaryOp::Shl | BinaryOp::Shr => {
                return Err(CodegenError::llvm("binary", format!("{op:?} of {ty}")));
            }
            BinaryOp::And => Op::And,
            BinaryOp::Or => Op::Or,
            BinaryOp::Xor => Op::Xor,
        };
        let v = ll(self.builder.build_binop(opcode, l, r, ""))?;
        if float && !self.float_flags.is_empty() {
            self.set_flags(v, self.float_flags)?;
        }
        Ok(v)
    }

    /// Integer division, remainder and shifts with a defined result for every operand, as PTX's `div.s32`,
    /// `rem.s32`, `shl` and `shr.s32` have (LLVM's `sdiv` by zero or of MIN by -1 is undefined behaviour and a
    /// shift by the bit width or more is poison: either lets LLVM delete the code around it). The results:
    /// - `x / 0` is -1 (all ones, what the hardware's unsigned division returns) and `x % 0` is `x`, so that
    ///   `x == (x / y) * y + x % y` still holds; `MIN / -1` is MIN (the wrapped quotient) and `MIN % -1` is 0;
    /// - the shift count is unsigned and clamped as PTX clamps it: `x << y` is 0 and `x >> y` is the sign fill
    ///   (`x >> (width - 1)`) for `y >= width` (a negative count is a large unsigned one).
    ///
    /// A constant divisor or count lets LLVM fold the guards away. Vectors are computed lane by lane.
    fn defined_int_op(
        &self,
        op: BinaryOp,
        l: BasicValueEnum<'ctx>,
        r: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, CodegenError> {
        let b = &self.builder;
        let (x, y) = match (l, r) {
            (BasicValueEnum::IntValue(x), BasicValueEnum::IntValue(y)) => (x, y),
            (BasicValueEnum::VectorValue(xs), BasicValueEnum::VectorValue(ys)) => {
                let mut out = xs.get_type().get_poison();
                for lane in 0..xs.get_type().get_size() {
                    let i = self.context.i32_type().const_int(u64::from(lane), false);
                    let x = ll(b.build_extract_element(xs, i, ""))?;
                    let y = ll(b.build_extract_element(ys, i, ""))?;
                    let v = self.defined_int_op(op, x, y)?;
                    out = ll(b.build_insert_element(out, v, i, ""))?;
                }
                return Ok(out.into());
            }
            _ => return Err(CodegenError::llvm("binary", format!("{op:?} of mismatched operands"))),
        };
        let t = x.get_type();
        let width = u64::from(t.get_bit_width());
        let c = |v: i64| t.const_int(v as u64, true);
        let eq = |a, v: i64| ll(b.build_int_compare(IntPredicate::EQ, a, c(v), ""));
        // A constant divisor other than 0 and -1 needs no guard: emitting none spares LLVM the folding of
        // three selects per division (the layout arithmetic of a GEMM's epilogue has hundreds).
        let plain_divisor = y.get_sign_extended_constant().is_some_and(|d| d != 0 && d != -1);
        let v = match op {
            BinaryOp::Div if plain_divisor => ll(b.build_int_signed_div(x, y, ""))?.into(),
            BinaryOp::Rem if plain_divisor => ll(b.build_int_signed_rem(x, y, ""))?.into(),
            BinaryOp::Div | BinaryOp::Rem => {
                let zero = eq(y, 0)?;
                let min = t.const_int(1 << (width - 1), false);
                let x_min = ll(b.build_int_compare(IntPredicate::EQ, x, min, ""))?;
                let overflow = ll(b.build_and(x_min, eq(y, -1)?, ""))?;
                let divisor = ll(b.build_select(ll(b.build_or(zero, overflow, ""))?, c(1), y, ""))?.into_int_value();
                if op == BinaryOp::Div {
                    let q = ll(b.build_int_signed_div(x, divisor, ""))?;
                    ll(b.build_select(zero, c(-1), q, ""))?
                } else {
                    let rem = ll(b.build_int_signed_rem(x, divisor, ""))?;
                    ll(b.build_select(zero, x, rem, ""))?
                }
            }
            BinaryOp::Shl | BinaryOp::Shr => {
                let in_range = ll(b.build_int_compare(IntPredicate::ULT, y, c(width as i64), ""))?;
                let count = ll(b.build_select(in_range, y, c(width as i64 - 1), ""))?.into_int_value();
                if op == BinaryOp::Shl {
                    let shifted = ll(b.build_left_shift(x, count, ""))?;
                    ll(b.build_select(in_range, shifted, c(0), ""))?
                } else {
                    ll(b.build_right_shift(x, count, true, ""))?.into()
                }
            }
            _ => return Err(CodegenError::llvm("binary", format!("{op:?} is not a guarded operation"))),
        };
        Ok(v)
    }

    fn set_flags(&self, v: BasicValueEnum<'ctx>, flags: FastMathFlags) -> Result<(), CodegenError> {
        if let Some(inst) = v.as_instruction_value() {
            inst.set_fast_math_flags(flags).map_err(|e| CodegenError::llvm("fast-math flags", e))?;
        }
        Ok(())
    }

    fn compare(
        &self,
        op: CompareOp,
        operand: Type,
        l: BasicValueEnum<'ctx>,
        r: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, CodegenError> {
        let b = &self.builder;
        if let Type::Scalar(s) = operand
            && s.is_fp8()
        {
            // fp8 values compare as the `f32`s they are (exactly).
            let (l, r) =
                (self.convert(l, operand, Scalar::F32, Type::F32)?, self.convert(r, operand, Scalar::F32, Type::F32)?);
            return self.compare(op, Type::F32, l, r);
        }
        if operand.is_float() {
            // Ordered predicates, except `ne` which is unordered: C's semantics with NaNs.
            let p = match op {
                CompareOp::Eq => FloatPredicate::OEQ,
                CompareOp::Ne => FloatPredicate::UNE,
                CompareOp::Lt => FloatPredicate::OLT,
                CompareOp::Le => FloatPredicate::OLE,
                CompareOp::Gt => FloatPredicate::OGT,
                CompareOp::Ge => FloatPredicate::OGE,
            };
            return Ok(ll(b.build_float_compare(p, l.into_float_value(), r.into_float_value(), ""))?.into());
        }
        // Signed for integers; `i1` compares as unsigned (false < true).
        let signed = operand != Type::I1;
        let p = match op {
            CompareOp::Eq => IntPredicate::EQ,
            CompareOp::Ne => IntPredicate::NE,
            CompareOp::Lt if signed => IntPredicate::SLT,
            CompareOp::Le if signed => IntPredicate::SLE,
            CompareOp::Gt if signed => IntPredicate::SGT,
            CompareOp::Ge if signed => IntPredicate::SGE,
            CompareOp::Lt => IntPredicate::ULT,
            CompareOp::Le => IntPredicate::ULE,
            CompareOp::Gt => IntPredicate::UGT,
            CompareOp::Ge => IntPredicate::UGE,
        };
        Ok(ll(b.build_int_compare(p, l.into_int_value(), r.into_int_value(), ""))?.into())
    }

    /// Lane-wise numeric conversion (see `Expr::Convert` for the rules; fp8 in `fp8.rs`).
    pub(super) fn convert(
        &self,
        v: BasicValueEnum<'ctx>,
        from: Type,
        to: Scalar,
        result: Type,
    ) -> Result<BasicValueEnum<'ctx>, CodegenError> {
        let Some(src) = from.scalar() else { return Err(CodegenError::llvm("convert", "from a pointer")) };
        if src != to && (src.is_fp8() || to.is_fp8()) {
            return self.convert_fp8(v, src, to, result);
        }
        let (fs, ts) = (src.size_bytes(), to.size_bytes());
        let op = match (src.is_float(), to.is_float()) {
            _ if src == to => return Ok(v),
            (false, false) if src == Scalar::I1 => Op::ZExt,
            (false, false) if ts > fs => Op::SExt,
            (false, false) => Op::Trunc,
            (false, true) if src == Scalar::I1 => Op::UIToFP,
            (false, true) => Op::SIToFP,
            (true, false) => Op::FPToSI,
            // f16 <-> bf16 have the same size: go through f32, which holds both exactly.
            (true, true) if fs == ts => {
                let mid = Type::vector(Scalar::F32, result.lanes().unwrap_or(1) as u8);
                let wide = self.convert(v, from, Scalar::F32, mid)?;
                return self.convert(wide, mid, to, result);
            }
            (true, true) if ts > fs => Op::FPExt,
            (true, true) => Op::FPTrunc,
        };
        ll(self.builder.build_cast(op, v, self.llvm_type(result), ""))
    }

    fn math(&self, fun: MathFn, ty: Type, args: &[BasicValueEnum<'ctx>]) -> Result<BasicValueEnum<'ctx>, CodegenError> {
        let t = self.llvm_type(ty);
        let int = ty.is_int();
        // The validator checked the arity; a short list is a bug, reported rather than indexed.
        let arity = |n: usize| args.get(..n).ok_or_else(|| CodegenError::llvm("math", format!("{fun:?} arity")));
        let x = arity(1)?[0];
        match fun {
            MathFn::Exp => {
                let log2e = t.into_float_type().const_float(LOG2_E);
                let scaled = ll(self.builder.build_float_mul(x.into_float_value(), log2e, ""))?;
                self.set_flags(scaled.into(), self.float_flags)?;
                self.call(nv::EX2_APPROX, &[t], &[scaled.into()])
            }
            MathFn::Exp2 => self.call(nv::EX2_APPROX, &[t], &[x]),
            MathFn::Rsqrt => self.call(nv::RSQRT_APPROX_F32, &[], &[x]),
            MathFn::Sqrt => self.call(nv::SQRT, &[t], &[x]),
            MathFn::Tanh => {
                let v = self.call(nv::TANH, &[t], &[x])?;
                self.set_flags(v, FastMathFlags::ApproxFunc)?;
                Ok(v)
            }
            MathFn::Abs if int => {
                let poison_on_min = self.context.bool_type().const_zero().into();
                self.call(nv::ABS, &[t], &[x, poison_on_min])
            }
            MathFn::Abs => self.call(nv::FABS, &[t], &[x]),
            MathFn::Max => self.call(if int { nv::SMAX } else { nv::MAXNUM }, &[t], arity(2)?),
            MathFn::Min => self.call(if int { nv::SMIN } else { nv::MINNUM }, &[t], arity(2)?),
            MathFn::Fma => self.call(nv::FMA, &[t], arity(3)?),
        }
    }
}

fn invalid(h: Handle<Expr>) -> CodegenError {
    CodegenError::llvm("expressions", format!("{h:?} is not a valid expression"))
}
