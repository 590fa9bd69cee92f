//! Every inline PTX statement the compiler emits, one function per instruction family, each documented with
//! the PTX ISA section it follows. Code generation uses an LLVM intrinsic whenever one exists (LLVM can then
//! schedule and optimize around it); inline PTX is for instructions LLVM has no intrinsic for.
//!
//! Everything else has an intrinsic or an LLVM instruction (loads and stores, barriers, shuffles, mbarriers, TMA,
//! the wgmma fence/commit/wait, `setmaxnreg`). The one family without is `wgmma.mma_async` (PTX ISA
//! §9.7.15.5.2): its register operands (the accumulator fragment, up to 128 `f32` per thread; A's fragment when
//! A is in registers) and shared-memory descriptors go through one constraint string built here. [`asm`] is the helper those functions share.

use inkwell::InlineAsmDialect;
use inkwell::context::Context;
use inkwell::types::{BasicMetadataTypeEnum, BasicTypeEnum, FunctionType};
use inkwell::values::PointerValue;

/// An inline assembly callee: `template` is PTX with `$0, $1...` operands, `constraints` LLVM's constraint
/// string (`=f,f,r` ...). `side_effects` keeps LLVM from moving or deleting it (fences, async operations).
pub fn asm<'ctx>(
    context: &'ctx Context,
    ty: FunctionType<'ctx>,
    template: &str,
    constraints: &str,
    side_effects: bool,
) -> PointerValue<'ctx> {
    context.create_inline_asm(
        ty,
        template.to_string(),
        constraints.to_string(),
        side_effects,
        false,
        Some(InlineAsmDialect::ATT),
        false,
    )
}

/// `wgmma.fence.sync.aligned` (PTX ISA §9.7.15.5.1): orders register accesses of a warpgroup before the
/// `wgmma.mma_async` that reads them. (LLVM 22 has `llvm.nvvm.wgmma.fence.sync.aligned`; this is here as the
/// template for the families that have no intrinsic, and to keep the helper exercised by a test.)
pub fn wgmma_fence<'ctx>(context: &'ctx Context) -> (FunctionType<'ctx>, PointerValue<'ctx>) {
    let ty = context.void_type().fn_type(&[], false);
    (ty, asm(context, ty, "wgmma.fence.sync.aligned;", "~{memory}", true))
}

/// `steps` x `wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{inputs}` on one accumulator (PTX ISA
/// §9.7.15.5.2): `d = a * b + (scale_d ? d : 0)` over the warpgroup, once per step, with B in shared memory and A
/// in shared memory too ("SS", `a` is `Some(a_mn)`) or in registers ("RS", `a` is `None`). The callee takes the
/// `n / 2` accumulator values (tied to its `n / 2` results, so the accumulator stays in the same registers across
/// the asynchronous operations), then per step A (SS: a 64-bit descriptor; RS: 4 `i32` registers, each two
/// packed 16-bit values), B's 64-bit descriptor and `scale_d` as an `i32`, and gives the accumulator back as a
/// struct of `n / 2` floats. The operand lists differ: SS ends `p, 1, 1, tA, tB` and RS `p, 1, 1, tB`, since
/// A in registers has no transpose immediate (`a_mn`/`b_mn` are those immediates: 1 when the operand is
/// MN-major). `inputs` is A's and B's types (`bf16.bf16`, `e4m3.e5m2`); the fp8 forms (`k` 32) have no
/// transpose immediates at all (both operands are K-major), so their lists end `p, 1, 1`. One statement for the
/// k-steps of a `gemm` keeps LLVM's work proportional to the accumulator, not to the accumulator times the steps.
pub fn wgmma<'ctx>(
    context: &'ctx Context,
    n: u32,
    k: u32,
    inputs: &str,
    a: Option<bool>,
    b_mn: bool,
    steps: u32,
) -> (FunctionType<'ctx>, PointerValue<'ctx>) {
    let regs = n / 2;
    let f32t = context.f32_type();
    let fields: Vec<BasicTypeEnum<'ctx>> = (0..regs).map(|_| f32t.into()).collect();
    let ret = context.struct_type(&fields, false);
    let mut params: Vec<BasicMetadataTypeEnum<'ctx>> = (0..regs).map(|_| f32t.into()).collect();
    // Per step: A's operands (constraint, type), then B's descriptor and scale-d.
    let a_operands: Vec<(&str, BasicMetadataTypeEnum<'ctx>)> = match a {
        Some(_) => vec![("l", context.i64_type().into())],
        None => vec![("r", context.i32_type().into()); 4],
    };
    let per_step = a_operands.len() as u32 + 2;
    let mut constraints: Vec<String> = (0..regs).map(|_| "=f".to_string()).collect();
    constraints.extend((0..regs).map(|i| i.to_string()));
    for _ in 0..steps {
        for (c, t) in &a_operands {
            params.push(*t);
            constraints.push((*c).to_string());
        }
        params.extend::<[BasicMetadataTypeEnum<'ctx>; 2]>([context.i64_type().into(), context.i32_type().into()]);
        constraints.extend(["l".to_string(), "r".to_string()]);
    }
    let ty = ret.fn_type(&params, false);
    let outputs: Vec<String> = (0..regs).map(|i| format!("${i}")).collect();
    let outputs = outputs.join(", ");
    let mut template = String::from("{\n.reg .pred p;\n");
    for s in 0..steps {
        let first = 2 * regs + per_step * s;
        let (a_text, transpose) = match a {
            Some(a_mn) => (format!("${first}"), format!(", {}, {}", u8::from(a_mn), u8::from(b_mn))),
            None => {
                let r: Vec<String> = (first..first + 4).map(|i| format!("${i}")).collect();
                (format!("{{{}}}", r.join(", ")), format!(", {}", u8::from(b_mn)))
            }
        };
        let transpose = if k == 16 { transpose } else { String::new() };
        let (desc_b, scale) = (first + per_step - 2, first + per_step - 1);
        template.push_str(&format!(
            "setp.ne.b32 p, ${scale}, 0;\nwgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{inputs} {{{outputs}}}, \
             {a_text}, ${desc_b}, p, 1, 1{transpose};\n"
        ));
    }
    template.push('}');
    (ty, asm(context, ty, &template, &constraints.join(","), true))
}

/// An empty asm statement that takes `n` `f32` registers and gives them back in the same registers (CUTLASS's
/// `warpgroup_fence_operand`): it emits no instruction, but LLVM can neither move the accumulator's reads and
/// writes across it nor it across the side-effecting wgmma operations, so values read after a
/// `wgmma.wait_group` are the ones the asynchronous MMAs wrote.
pub fn fence_operands<'ctx>(context: &'ctx Context, n: u32) -> (FunctionType<'ctx>, PointerValue<'ctx>) {
    let f32t = context.f32_type();
    let fields: Vec<BasicTypeEnum<'ctx>> = (0..n).map(|_| f32t.into()).collect();
    let params: Vec<BasicMetadataTypeEnum<'ctx>> = (0..n).map(|_| f32t.into()).collect();
    let ty = context.struct_type(&fields, false).fn_type(&params, false);
    let mut constraints: Vec<String> = (0..n).map(|_| "=f".to_string()).collect();
    constraints.extend((0..n).map(|i| i.to_string()));
    constraints.push("~{memory}".to_string());
    (ty, asm(context, ty, "", &constraints.join(","), true))
}
