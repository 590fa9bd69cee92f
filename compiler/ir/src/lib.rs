//! cutec-ir: the typed intermediate representation between the checked AST and LLVM.
//!
//! # Shape
//!
//! A [`Module`] holds [`Kernel`]s; device functions are inlined by the lowering, so a kernel is self-contained.
//! Each kernel owns **arenas** ([`Arena`]) of expressions, mutable variables ([`Var`]) and static allocations
//! ([`Alloc`]: shared memory and per-thread register arrays), all referred to by typed [`Handle`]s, with source
//! locations ([`Loc`]) in side vectors next to the nodes. The body is a [`Block`] of [`Stmt`]s in **structured
//! control flow** (`If`, `For`, `While`, `Break`, `Continue`, `Return`, and `Roles` chains of warpgroup regions). Expressions are
//! SSA values: each is computed once, where a [`Stmt::Emit`] names it, and never changes; mutable state lives in
//! variables (which back ends promote to registers) or in memory. Tensors do not exist here: the lowering turns
//! layouts into index arithmetic, so the IR sees pointers ([`Type::Ptr`] with an [`AddrSpace`]), offsets, and
//! loads and stores with an explicit type (vectors for 16-byte accesses) and alignment.
//!
//! **Effects are explicit.** Expressions compute values and, at most, read a variable. Everything that touches
//! memory, involves other threads or completes later is a statement: stores, barriers, and the operations
//! ([`Op`]) of [`Stmt::Op`], which name their value as an [`Expr::OpResult`] (naga's `Statement::Call { result }`
//! and `Expression::CallResult`), so a load's result is an SSA handle while its position is fixed. The
//! [`effects`] module computes one [`Effects`] bitset (reads and writes per address space, asynchronous,
//! collective, barrier, wait) for every expression and statement; passes ask it instead of matching node kinds.
//!
//! **Walkers are exhaustive.** [`Stmt::blocks`] and [`Stmt::blocks_mut`] name every statement kind and are how
//! every pass, the validator, the printer and codegen reach nested blocks; statement matches list every kind (no
//! `_ =>` arms), so a new block-holding statement does not compile until each of them says what it does with it.
//! Passes that rebuild blocks, and the parser, do it through one walk, [`visit::Rewrite`]: its one exhaustive
//! match knows where each kind's operands, definitions and blocks are, in program order, and a pass overrides
//! only the hooks of what it changes (`cse` the emissions and `while`'s scope, `unroll` the `for` loops).
//!
//! # Asynchrony: how the Hopper pieces are written
//!
//! (In the IR, with printer, parser, effects, validator and dependency graph, and code generation; the language
//! writes them by hand today, and the scheduling passes will write them from plain loops.)
//!
//! - **TMA**: a kernel parameter of type `ptr<param>` (64-byte aligned) is the tensor map;
//!   `tma.load %dst, %map[%c0, %c1], %bar` copies a box into shared memory *asynchronously* (effects:
//!   `read(global,param) write(shared) async`) and signals the mbarrier `%bar`.
//! - **mbarriers** are 8-byte `shared` allocations: `mbarrier.init %bar, 1`,
//!   `mbarrier.arrive.expect_tx %bar, 2048`, `mbarrier.arrive %bar`, and `mbarrier.wait %bar, parity %p` whose
//!   parity is an operand (`(i / S) & 1` in a ring of S stages); a wait has the `wait` and `barrier` effects, so
//!   the dependency graph orders the copy before it and the reads of the stage after it.
//! - **wgmma groups**: `wgmma.fence`, `wgmma.mma_async m64n128k16.bf16 @acc, %descA, %descB, scale_d %p` (the
//!   accumulator is a `local` register array, read and written asynchronously; A and B are `i64` shared-memory
//!   descriptors), `wgmma.commit_group`, `wgmma.wait_group N`.
//! - **Warpgroup roles**: `warpgroup producer 0..1 regs(40) { .. } else warpgroup consumer 1..3 regs(232) { .. }`
//!   ([`Stmt::Roles`], [`RoleRegion`], [`Role`]): a chain of regions, each run only by warpgroups
//!   `first..first + count` of a one-dimensional block (`thread_idx.x / 128`), with the register budget
//!   `setmaxnreg` gives it (`.inc` or `.dec` against the registers at entry, [`Kernel::entry_registers`]).
//!   Invariant (the validator's): a chain's regions are disjoint and inside the block, so each thread runs at
//!   most one, and code generation emits the chain as one `else if` chain of tests from this construct alone.
//!   The language's `role` statements written one after the other lower to one chain; `specialize-warps` writes
//!   the producer's and the consumers' regions as one.
//! - **Distributed shared memory**: `mapa %p, cta %r` ([`Expr::MapShared`]) is the `ptr<shared_cluster>` of the
//!   shared-memory location `%p` in the CTA of rank `%r` of the cluster; loads and stores through it count as
//!   shared-memory effects (the rank may be the CTA's own). `stmatrix.x4 %row, %r0, ..` ([`Op::Stmatrix`]) is a
//!   warp's store of four 8 x 8 matrices of 16-bit elements.
//!
//! - **The schedule's entities** ([`schedule`]): what the scheduling passes make is declared with the kernel's
//!   allocations, `barrier #b1 ring_full: mbarrier @ring_full arrivals(1) bytes(32768)`, `barrier #b0 epilogue:
//!   named ids(1..3) threads(128)` (named barriers the compiler took from the kernel's pool; `bar.sync %id, 128
//!   of #b0` names its declaration) and `ring #r0: tiles(@ta, @tb) stages(4) full(#b1) empty(#b2)
//!   filler(producer) release(after_group)`, and the wgmma groups the commits yield as tokens, `group #g0:
//!   reads(@ta, @tb) writes(@acc)` with `wgmma.commit_group #g0`, so the checks read them instead of guessing
//!   them back.
//!
//! A two-stage TMA ring loop (`tests/ir/tma_ring.ir`; its dependency graph is snapshot-tested):
//!
//! ```text
//! for $i in 0..%k step 1 {
//!   %4: i32 = rem %3, 2                              // the stage
//!   %6: ptr<shared> = offset @stages, %5 x bf16
//!   %7: ptr<shared> = offset @full, %4 x i64          // its full barrier
//!   if %1 {
//!     mbarrier.arrive.expect_tx %7, 2048
//!     tma.load %6, %a[0, %8], %7
//!   }
//!   %10: i32 = and %9, 1                              // the phase parity, (i / 2) & 1
//!   mbarrier.wait %7, parity %10
//!   %12: bf16 = load bf16, %11 align(2)
//!   ..
//!   barrier.cta                                       // releases the stage
//! }
//! ```
//!
//! Its graph has `s5 -> s8 async` (the copy, then the wait that completes it), `s5 -> s10 mem.raw(shared)` and
//! `s8 -> s10 mem.raw(shared)` (the read of the stage after both), and the loop-carried edges a pipeliner
//! schedules against: `s10 -> s5 mem.war(shared) +1` (the next copy overwrites what this iteration read) and
//! `s15 -> s5 order +1` (the barrier releases the stage).
//!
//! # Invariants (checked by [`validate`], relied on by every pass and back end)
//!
//! - **Handles are in range** of their kernel's arenas, and an expression's operands are **earlier** expressions.
//! - **Types check**: every expression has one type, computed by one function ([`valid::types::resolve`]), and
//!   every operation's operands have the types it needs.
//! - **Global expressions** (literals, parameters, allocation addresses) are never emitted; **every other
//!   expression is defined at most once** (emitted, or named as the result of its operation), and used only
//!   after its definition, in the same block or one nested in it (a `while`'s header encloses its body).
//!   Expressions never defined are dead: nothing uses them, and the printer does not show them.
//! - Stores write global, shared or local memory; every access's alignment is a power of two at least its
//!   scalar's size; a `For` never writes its own variable; `Break`/`Continue` are inside a loop.
//!
//! What is deliberately absent: LLVM (only `cutec-codegen` links it), layouts and tensors (lowered away before the
//! IR), unstructured control flow, and pointers stored in memory.
//!
//! # Stages
//!
//! [`lower()`] builds a module from the checked program, with the checker's loop attributes (`unroll`,
//! `unroll(N)`, `pipelined(stages = S)`) on its loops and the launch clause and `warp_specialized` on its kernel;
//! [`run_pipeline`] runs the [`pipeline`] of passes, each small and named (`--print-passes`, `--dump-after
//! PASS`), which may fail with a coded error ([`passes::PassError`]) and receive the [`passes::Analyses`] (the
//! validator's [`ModuleInfo`], loop [dependency graphs](analysis::deps)), and returns the validator's analysis
//! that back ends trust; [`warnings`] then reports what will be slow; [`print()`] writes the stable text form
//! (`--emit ir`) and [`parse()`] reads it back (`print(parse(print(m))) == print(m)`; every pass is tested as
//! `.ir` in, pass, text out).
//!
//! The pipeline today: `unroll` (loops marked `unroll(full)`, or `unroll(N)` with at most N literal trips, then
//! renumbering), `forward-vars` (variable reads replaced by known writes), `fold-constants`, `cse`, `dce`
//! (definitions nobody uses, when their effects allow), the scheduling passes (`pipeline-loops`, `complete-wgmma`,
//! `complete-copies`, `specialize-warps`: the mbarrier rings, waits and roles of a Hopper kernel written from its
//! plain loop, E0324 for what they cannot schedule; [`passes`]), `fold-constants` and `dce` again, `compact`
//! (program-order numbering), then the checks that change nothing: `check-collectives`,
//! `check-operands`, `check-sync`, `check-schedule` (the hazards of the declared rings), `check-protocol` (the mbarrier protocol run for small trip counts, [`analysis::protocol`]),
//! `check-fragment-bounds`.

pub mod analysis;
mod arena;
mod builder;
pub mod codes;
pub mod effects;
mod expr;
pub mod fixtures;
mod hash;
mod module;
mod op;
pub mod parse;
pub mod passes;
mod print;
pub mod schedule;
mod stmt;
mod types;
pub mod valid;
pub mod visit;

pub use arena::{Arena, Handle, Loc};
pub use builder::KernelBuilder;
pub use codes::CODES;
/// The target's limits that the lowering and back ends name, from their one home.
pub use cutec_target::{MAX_SHARED_BYTES, MAX_STATIC_SHARED_BYTES, SM_REGISTERS};
pub use effects::Effects;
pub use expr::{BinaryOp, CompareOp, Dim, Expr, Literal, MathFn, ShuffleMode, SpecialReg, UnaryOp};
pub use module::{Alloc, Kernel, Module, Param, Var, entry_registers};
pub use op::{GmmaDesc, GmmaSwizzle, Op, WgmmaShape, WgmmaStep};
pub use parse::{ParseError, parse};
pub use passes::{
    Pass, PipelineOptions, describe_pipeline, find_pass, pipeline, pipeline_parts, run_passes, run_pipeline,
};
pub use print::{print, print_kernel, stmt_line};
pub use schedule::{BarrierKind, Filler, Owner, Release, Ring, RoleKind};
pub use stmt::{Barrier, Block, Role, RoleRegion, Stmt, Unroll, role_chains};
pub use types::{AddrSpace, Scalar, Type};
pub use valid::lint::warnings;
pub use valid::{KernelError, KernelInfo, ModuleInfo, ValidationError, validate};
