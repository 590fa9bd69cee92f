//! One kernel's code generation: [`KernelCodegen`] owns the builder, the LLVM function and the maps from IR
//! handles to LLVM values, and walks the body (`stmt.rs`) and expressions (`expr.rs`) with a `match` over node
//! kinds.
//!
//! How IR concepts map to LLVM:
//! - Global expressions need no instruction: literals are constants, parameters are function arguments, and
//!   allocation addresses are created before the body (shared memory as internal module globals in address
//!   space 3; register arrays as `alloca`s in the entry block).
//! - Variables are `alloca`s in the entry block, read and written with plain loads and stores; LLVM's SROA and
//!   mem2reg turn them into SSA registers at `-O1` and above.
//! - `Local` pointers are *generic* LLVM pointers (address space 0): NVPTX allocas live in the generic space and
//!   SROA promotes them only when they are not cast; what SROA cannot promote, NVPTX rewrites to `.local`.
//! - Structured control flow becomes basic blocks; after a `break`, `continue` or `return`, statements left in
//!   the same IR block are emitted into a fresh unreachable block that LLVM deletes.

mod expr;
mod fp8;
mod op;
mod stmt;

use crate::{CodegenError, Options};
use cutec_ir::{AddrSpace, Expr, Handle, Kernel, KernelInfo, Scalar, Type};
use inkwell::AddressSpace;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::basic_block::BasicBlock;
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::types::{AnyType, BasicType, BasicTypeEnum};
use inkwell::values::{BasicValueEnum, FastMathFlags, FunctionValue, PointerValue};

/// LLVM's calling convention for kernel entries (`ptx_kernel`).
pub const PTX_KERNEL_CC: u32 = 71;

/// A `CUtensorMap`: 128 bytes, 64-byte aligned (CUDA driver API, `cuTensorMapEncodeTiled`).
const TENSOR_MAP_BYTES: u32 = 128;
const TENSOR_MAP_ALIGN: u64 = 64;

/// The blocks `continue` and `break` jump to in the innermost loop.
#[derive(Clone, Copy)]
struct LoopTargets<'ctx> {
    latch: BasicBlock<'ctx>,
    exit: BasicBlock<'ctx>,
}

/// Generates one kernel into an LLVM module.
pub struct KernelCodegen<'a, 'ctx> {
    context: &'ctx Context,
    module: &'a Module<'ctx>,
    builder: Builder<'ctx>,
    kernel: &'a Kernel,
    info: &'a KernelInfo,
    /// LLVM values of emitted expressions, by handle.
    values: Vec<Option<BasicValueEnum<'ctx>>>,
    /// The `alloca` of each variable.
    vars: Vec<PointerValue<'ctx>>,
    /// The base address of each allocation.
    allocs: Vec<PointerValue<'ctx>>,
    loops: Vec<LoopTargets<'ctx>>,
    function: Option<FunctionValue<'ctx>>,
    /// Fast-math flags of every float arithmetic instruction.
    float_flags: FastMathFlags,
}

/// Builder errors only come from misuse of the builder (no insertion point): bugs of this crate.
pub(crate) fn ll<T>(r: Result<T, BuilderError>) -> Result<T, CodegenError> {
    r.map_err(|e| CodegenError::llvm("the IR builder", e))
}

impl<'a, 'ctx> KernelCodegen<'a, 'ctx> {
    /// `info` must be the validator's analysis of `kernel`.
    pub fn new(
        context: &'ctx Context,
        module: &'a Module<'ctx>,
        kernel: &'a Kernel,
        info: &'a KernelInfo,
        options: &Options,
    ) -> Self {
        let float_flags = if options.fp_contract { FastMathFlags::AllowContract } else { FastMathFlags::empty() };
        KernelCodegen {
            context,
            module,
            builder: context.create_builder(),
            kernel,
            info,
            values: vec![None; kernel.exprs.len()],
            vars: Vec::new(),
            allocs: Vec::new(),
            loops: Vec::new(),
            function: None,
            float_flags,
        }
    }

    /// Emits the kernel as a `ptx_kernel` function of the module.
    pub fn emit(mut self) -> Result<FunctionValue<'ctx>, CodegenError> {
        let function = self.declare()?;
        self.function = Some(function);
        let entry = self.context.append_basic_block(function, "entry");
        self.builder.position_at_end(entry);
        self.declare_storage()?;
        self.block(&self.kernel.body)?;
        if !self.terminated() {
            ll(self.builder.build_return(None))?;
        }
        Ok(function)
    }

    /// The function with its calling convention and parameter and function attributes.
    fn declare(&self) -> Result<FunctionValue<'ctx>, CodegenError> {
        let params: Vec<_> = self.kernel.params.iter().map(|p| self.llvm_type(p.ty).into()).collect();
        let fn_type = self.context.void_type().fn_type(&params, false);
        let function = self.module.add_function(&self.kernel.name, fn_type, None);
        function.set_call_conventions(PTX_KERNEL_CC);
        for (i, p) in self.kernel.params.iter().enumerate() {
            let at = AttributeLoc::Param(i as u32);
            if p.ty == Type::Ptr(AddrSpace::Param) {
                // A TMA tensor map, passed by value as `const __grid_constant__ CUtensorMap`: 128 bytes aligned
                // to 64 in parameter space. Without `nvvm.grid_constant`, LLVM copies the parameter to local
                // memory and TMA would get a local address; with it, uses of the address become `cvta.param`.
                let bytes = self.context.i8_type().array_type(TENSOR_MAP_BYTES);
                let byval = Attribute::get_named_enum_kind_id("byval");
                function.add_attribute(at, self.context.create_type_attribute(byval, bytes.as_any_type_enum()));
                function.add_attribute(at, self.enum_attr("align", TENSOR_MAP_ALIGN));
                function.add_attribute(at, self.context.create_string_attribute("nvvm.grid_constant", ""));
                continue;
            }
            if !matches!(p.ty, Type::Ptr(_)) {
                continue;
            }
            // `align` turns into `.ptr .global .align N` in PTX, which lets ptxas trust vector accesses.
            function.add_attribute(at, self.enum_attr("align", p.align as u64));
            if p.noalias {
                function.add_attribute(at, self.enum_attr("noalias", 0));
            }
            if p.readonly {
                function.add_attribute(at, self.enum_attr("readonly", 0));
            }
        }
        // A cluster of one CTA is what every launch has anyway (PTX's implicit cluster): no directive, and the
        // runtime launches it plainly. Declared, it cost 1-3 % on gemm_sm90_manual -D CLUSTER_M=1 and 30-50 % on
        // the small-M direct kernel on the H200 (docs/perf/small-m.md).
        if let Some([x, y, z]) = self.kernel.cluster.filter(|c| c.iter().product::<u32>() > 1) {
            // `.reqnctapercluster`: the cluster shape is part of the kernel (the runtime launches it as such).
            let attr = self.context.create_string_attribute("nvvm.cluster_dim", &format!("{x},{y},{z}"));
            function.add_attribute(AttributeLoc::Function, attr);
        }
        if let Some([x, y, z]) = self.kernel.block_size {
            let dims = format!("{x},{y},{z}");
            if self.uses_setmaxnreg() {
                // `setmaxnreg` is silently dropped by ptxas (C7508) unless the registers at entry are known:
                // `.maxntid` and `.minnctapersm 1` say so (ptxas refuses `.reqntid` beside `.maxntid`).
                function
                    .add_attribute(AttributeLoc::Function, self.context.create_string_attribute("nvvm.maxntid", &dims));
                function
                    .add_attribute(AttributeLoc::Function, self.context.create_string_attribute("nvvm.minctasm", "1"));
            } else {
                // `.reqntid`: ptxas may then budget registers for exactly this many threads.
                function
                    .add_attribute(AttributeLoc::Function, self.context.create_string_attribute("nvvm.reqntid", &dims));
            }
        }
        Ok(function)
    }

    /// Whether the kernel sets its warpgroups' registers: `setmaxnreg` itself or a role's region with a budget.
    fn uses_setmaxnreg(&self) -> bool {
        let mut found = false;
        self.kernel.body.visit(&mut |s| {
            found |= match s {
                cutec_ir::Stmt::Op { op: cutec_ir::Op::Setmaxnreg { .. }, .. } => true,
                cutec_ir::Stmt::Roles(regions) => regions.iter().any(|r| r.regs.is_some()),
                _ => false,
            }
        });
        found
    }

    fn enum_attr(&self, name: &str, value: u64) -> Attribute {
        self.context.create_enum_attribute(Attribute::get_named_enum_kind_id(name), value)
    }

    /// Allocations and variables, before any statement (allocas in the entry block are what SROA promotes).
    fn declare_storage(&mut self) -> Result<(), CodegenError> {
        // Past 48 KiB, shared memory must be dynamic: one `extern .shared` array that the launch sizes (the
        // manifest asks for the total), each allocation at its offset in it.
        let dynamic = self.kernel.shared_is_dynamic().then(|| {
            let align = self.kernel.allocs.iter().map(|(_, a)| a.align).max().unwrap_or(16);
            let bytes = self.context.i8_type().array_type(0);
            // An external global keeps its name in PTX, which has no `.` in identifiers.
            let name = format!("{}_dynamic_smem", self.kernel.name);
            let g = self.module.add_global(bytes, Some(AddressSpace::from(3u16)), &name);
            g.set_linkage(Linkage::External);
            g.set_alignment(align);
            g.as_pointer_value()
        });
        let (offsets, _) = self.kernel.shared_offsets();
        for (h, a) in self.kernel.allocs.iter() {
            let array = self.scalar_type(a.elem).array_type(a.len);
            let ptr = match a.space {
                AddrSpace::Shared if let Some(base) = dynamic => {
                    let at = offsets.get(h.index()).copied().flatten().unwrap_or(0);
                    let i8t = self.context.i8_type();
                    let offset = self.context.i64_type().const_int(at, false);
                    // SAFETY: the offset is inside the dynamic array the launch sizes to the total.
                    ll(unsafe { self.builder.build_in_bounds_gep(i8t, base, &[offset], &a.name) })?
                }
                AddrSpace::Shared => {
                    let name = format!("{}.{}", self.kernel.name, a.name);
                    let g = self.module.add_global(array, Some(AddressSpace::from(3u16)), &name);
                    g.set_linkage(Linkage::Internal);
                    g.set_initializer(&array.get_poison());
                    g.set_alignment(a.align);
                    g.as_pointer_value()
                }
                _ => {
                    let p = ll(self.builder.build_alloca(array, &a.name))?;
                    if let Some(inst) = p.as_instruction() {
                        inst.set_alignment(a.align).map_err(|e| CodegenError::llvm("alloca", e))?;
                    }
                    p
                }
            };
            debug_assert_eq!(h.index(), self.allocs.len());
            self.allocs.push(ptr);
        }
        for (_, v) in self.kernel.vars.iter() {
            let p = ll(self.builder.build_alloca(self.llvm_type(v.ty), &v.name))?;
            self.vars.push(p);
        }
        Ok(())
    }

    pub(crate) fn scalar_type(&self, s: Scalar) -> BasicTypeEnum<'ctx> {
        let c = self.context;
        match s {
            Scalar::I1 => c.bool_type().into(),
            Scalar::I32 => c.i32_type().into(),
            Scalar::I64 => c.i64_type().into(),
            Scalar::F16 => c.f16_type().into(),
            Scalar::BF16 => c.bf16_type().into(),
            Scalar::F32 => c.f32_type().into(),
            Scalar::F64 => c.f64_type().into(),
            // Bits only: conversions go through `cvt` (`fp8.rs`).
            Scalar::E4M3 | Scalar::E5M2 => c.i8_type().into(),
        }
    }

    pub(crate) fn llvm_type(&self, t: Type) -> BasicTypeEnum<'ctx> {
        match t {
            Type::Scalar(s) => self.scalar_type(s),
            Type::Vector { scalar, lanes } => match self.scalar_type(scalar) {
                BasicTypeEnum::IntType(i) => i.vec_type(lanes as u32).into(),
                BasicTypeEnum::FloatType(f) => f.vec_type(lanes as u32).into(),
                other => other,
            },
            Type::Ptr(space) => {
                // Register arrays are allocas (generic); a tensor map is a by-value parameter whose address
                // is generic too.
                let number = if matches!(space, AddrSpace::Local | AddrSpace::Param) { 0 } else { space.llvm_number() };
                self.context.ptr_type(AddressSpace::from(number)).into()
            }
        }
    }

    /// Whether the current block already ends in a terminator.
    fn terminated(&self) -> bool {
        self.builder.get_insert_block().is_some_and(|b| b.get_terminator().is_some())
    }

    fn function(&self) -> Result<FunctionValue<'ctx>, CodegenError> {
        self.function.ok_or_else(|| CodegenError::llvm("kernel", "no function"))
    }

    /// The type the validator gave an expression.
    fn ty(&self, h: Handle<Expr>) -> Type {
        self.info.expr_types.get(h.index()).copied().unwrap_or(Type::I1)
    }
}
