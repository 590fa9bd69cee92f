//! Statements: structured control flow into basic blocks.

use super::{KernelCodegen, LoopTargets, ll};
use crate::CodegenError;
use crate::intrinsics as nv;
use crate::metadata;
use cutec_ir::{Barrier, Block, Dim, Expr, Handle, RoleRegion, SpecialReg, Stmt, Unroll};
use inkwell::IntPredicate;
use inkwell::values::BasicValueEnum;

impl<'ctx> KernelCodegen<'_, 'ctx> {
    pub(super) fn block(&mut self, block: &Block) -> Result<(), CodegenError> {
        for s in block.stmts() {
            if self.terminated() {
                // Statements after a jump are unreachable; give them a block of their own.
                let dead = self.context.append_basic_block(self.function()?, "dead");
                self.builder.position_at_end(dead);
            }
            self.stmt(s)?;
        }
        Ok(())
    }

    fn stmt(&mut self, stmt: &Stmt) -> Result<(), CodegenError> {
        let b = &self.builder;
        match *stmt {
            Stmt::Emit(h) => self.emit_expr(h)?,
            Stmt::Op { result, ref op } => {
                let v = self.op(op)?;
                if let (Some(r), Some(v)) = (result, v) {
                    self.define(r, v);
                }
            }
            Stmt::WriteVar { var, value } => {
                let ptr = *self.vars.get(var.index()).ok_or_else(|| CodegenError::llvm("variables", "unknown"))?;
                ll(b.build_store(ptr, self.value(value)?))?;
            }
            Stmt::Store { ptr, value, align } => {
                let store = ll(b.build_store(self.value(ptr)?.into_pointer_value(), self.value(value)?))?;
                store.set_alignment(align).map_err(|e| CodegenError::llvm("store", e))?;
            }
            Stmt::If { cond, ref accept, ref reject } => self.if_(self.value(cond)?, accept, reject)?,
            Stmt::For { var, start, end, step, unroll, stages, ref body } => {
                if stages.is_some() {
                    // The `pipeline-loops` pass rejects these before codegen; a module built otherwise gets this.
                    return Err(CodegenError::Unsupported { what: "a loop marked `pipelined`".into() });
                }
                let ptr = *self.vars.get(var.index()).ok_or_else(|| CodegenError::llvm("variables", "unknown"))?;
                self.for_(ptr, self.value(start)?, self.value(end)?, step, unroll, body)?;
            }
            Stmt::While { ref header, cond, ref body } => self.while_(header, cond, body)?,
            Stmt::Roles(ref regions) => self.warpgroups(regions)?,
            Stmt::Break | Stmt::Continue => {
                let Some(targets) = self.loops.last().copied() else {
                    return Err(CodegenError::llvm("loops", "a jump outside a loop"));
                };
                let to = if *stmt == Stmt::Break { targets.exit } else { targets.latch };
                ll(b.build_unconditional_branch(to))?;
            }
            Stmt::Return => {
                ll(b.build_return(None))?;
            }
            Stmt::Barrier(Barrier::Cta) => {
                let zero = self.context.i32_type().const_zero();
                let f = nv::declare(self.module, nv::BARRIER_CTA, &[])?;
                ll(b.build_call(f, &[zero.into()], ""))?;
            }
        }
        Ok(())
    }

    fn if_(&mut self, cond: BasicValueEnum<'ctx>, accept: &Block, reject: &Block) -> Result<(), CodegenError> {
        let f = self.function()?;
        let then_bb = self.context.append_basic_block(f, "then");
        let else_bb = (!reject.is_empty()).then(|| self.context.append_basic_block(f, "else"));
        let merge = self.context.append_basic_block(f, "endif");
        ll(self.builder.build_conditional_branch(cond.into_int_value(), then_bb, else_bb.unwrap_or(merge)))?;
        self.builder.position_at_end(then_bb);
        self.block(accept)?;
        self.branch_if_open(merge)?;
        if let Some(else_bb) = else_bb {
            self.builder.position_at_end(else_bb);
            self.block(reject)?;
            self.branch_if_open(merge)?;
        }
        self.builder.position_at_end(merge);
        Ok(())
    }

    /// `for (var = start; var < end; var += step)`: header (test), body, latch (increment, back edge), exit.
    fn for_(
        &mut self,
        var: inkwell::values::PointerValue<'ctx>,
        start: BasicValueEnum<'ctx>,
        end: BasicValueEnum<'ctx>,
        step: i64,
        unroll: Unroll,
        body: &Block,
    ) -> Result<(), CodegenError> {
        let f = self.function()?;
        let int = start.into_int_value().get_type();
        let header = self.context.append_basic_block(f, "for.header");
        let body_bb = self.context.append_basic_block(f, "for.body");
        let latch = self.context.append_basic_block(f, "for.latch");
        let exit = self.context.append_basic_block(f, "for.exit");
        let b = &self.builder;
        ll(b.build_store(var, start))?;
        ll(b.build_unconditional_branch(header))?;

        b.position_at_end(header);
        let i = ll(b.build_load(int, var, "i"))?.into_int_value();
        let more = ll(b.build_int_compare(IntPredicate::SLT, i, end.into_int_value(), ""))?;
        ll(b.build_conditional_branch(more, body_bb, exit))?;

        b.position_at_end(body_bb);
        self.loops.push(LoopTargets { latch, exit });
        let r = self.block(body);
        self.loops.pop();
        r?;
        self.branch_if_open(latch)?;

        let b = &self.builder;
        b.position_at_end(latch);
        let i = ll(b.build_load(int, var, "i"))?.into_int_value();
        let next = ll(b.build_int_add(i, int.const_int(step as u64, true), "i.next"))?;
        ll(b.build_store(var, next))?;
        let back_edge = ll(b.build_unconditional_branch(header))?;
        match unroll {
            Unroll::Auto => {}
            // `unroll(full)` loops the IR's `unroll` pass left alone (bounds not literal): ask LLVM.
            Unroll::Full => metadata::set_loop_hint(self.context, back_edge, "llvm.loop.unroll.full", None),
            Unroll::Count(n) => metadata::set_loop_hint(self.context, back_edge, "llvm.loop.unroll.count", Some(n)),
            Unroll::Disable => metadata::set_loop_hint(self.context, back_edge, "llvm.loop.unroll.disable", None),
        }
        b.position_at_end(exit);
        Ok(())
    }

    /// `while`: header (its statements, then the test), body, back edge to the header, exit. `continue` goes
    /// to the header, which re-evaluates the condition.
    fn while_(&mut self, header: &Block, cond: Handle<Expr>, body: &Block) -> Result<(), CodegenError> {
        let f = self.function()?;
        let head = self.context.append_basic_block(f, "while.header");
        let body_bb = self.context.append_basic_block(f, "while.body");
        let exit = self.context.append_basic_block(f, "while.exit");
        ll(self.builder.build_unconditional_branch(head))?;
        self.builder.position_at_end(head);
        // Jumps in the header (none come from lowering) would leave or restart this loop.
        self.loops.push(LoopTargets { latch: head, exit });
        let r = self.block(header);
        self.loops.pop();
        r?;
        if !self.terminated() {
            let c = self.value(cond)?.into_int_value();
            ll(self.builder.build_conditional_branch(c, body_bb, exit))?;
        }
        self.builder.position_at_end(body_bb);
        self.loops.push(LoopTargets { latch: head, exit });
        let r = self.block(body);
        self.loops.pop();
        r?;
        self.branch_if_open(head)?;
        self.builder.position_at_end(exit);
        Ok(())
    }

    /// Role regions of disjoint warpgroups, as one chain: `if (thread_idx.x / 128 - first) <u count {
    /// setmaxnreg(regs); body } else if ..`. Each region is entered only from its test, never from the end of
    /// another region, so ptxas sees it entered by whole warps: it keeps the region's warp-uniform values in
    /// uniform registers and needs no `WARPSYNC` before its warpgroup instructions. (Separate `if`s, where a
    /// region's test follows the join of the previous region and its divergent code, cost 5 % of the GEMM on the
    /// H200: `scripts/gpu/gemm_variants.py`, docs/perf/hopper-gemm.md.)
    fn warpgroups(&mut self, regions: &[RoleRegion]) -> Result<(), CodegenError> {
        let i32t = self.context.i32_type();
        let tid = self.call(&nv::special_reg(SpecialReg::ThreadIdx(Dim::X)), &[], &[])?.into_int_value();
        let wg = ll(self.builder.build_int_unsigned_div(tid, i32t.const_int(128, false), "wg"))?;
        let f = self.function()?;
        let merge = self.context.append_basic_block(f, "endrole");
        for (k, RoleRegion { role, regs, body, .. }) in regions.iter().enumerate() {
            let b = &self.builder;
            let rank = ll(b.build_int_sub(wg, i32t.const_int(u64::from(role.first), false), ""))?;
            let count = i32t.const_int(u64::from(role.count), false);
            let cond = ll(b.build_int_compare(IntPredicate::ULT, rank, count, role.kind.name()))?;
            let then_bb = self.context.append_basic_block(f, role.kind.name());
            let next = if k + 1 == regions.len() { merge } else { self.context.append_basic_block(f, "nextrole") };
            ll(self.builder.build_conditional_branch(cond, then_bb, next))?;
            self.builder.position_at_end(then_bb);
            if let Some(regs) = *regs {
                // The validator made sure the block size, hence the registers at entry, is known.
                let entry =
                    self.kernel.entry_registers().ok_or_else(|| CodegenError::llvm("setmaxnreg", "no block size"))?;
                self.setmaxnreg(regs, regs > entry)?;
            }
            self.block(body)?;
            self.branch_if_open(merge)?;
            self.builder.position_at_end(next);
        }
        Ok(())
    }

    fn branch_if_open(&self, to: inkwell::basic_block::BasicBlock<'ctx>) -> Result<(), CodegenError> {
        if !self.terminated() {
            ll(self.builder.build_unconditional_branch(to))?;
        }
        Ok(())
    }
}
