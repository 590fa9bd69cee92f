//! cutec-ir: the typed intermediate representation between the checked AST and LLVM.
//!
//! # Shape
//!
//! A [`Module`] holds [`Kernel`]s; device functions are inlined by the lowering, so a kernel is self-contained.
//! Each kernel owns **arenas** ([`Arena`]) of expressions, mutable variables ([`Var`]) and static allocations
//! ([`Alloc`]: shared memory and per-thread register arrays), all referred to by typed [`Handle`]s, with source
//! locations ([`Loc`]) in side vectors next to the nodes. The body is a [`Block`] of [`Stmt`]s in **structured
//! control flow** (`If`, `For`, `Break`, `Continue`, `Return`). Expressions are SSA values: each is computed once,
//! where a [`Stmt::Emit`] names it, and never changes; mutable state lives in variables (which back ends promote
//! to registers) or in memory. Tensors do not exist here: the lowering turns layouts into index arithmetic, so the
//! IR sees pointers ([`Type::Ptr`] with an [`AddrSpace`]), offsets, and loads and stores with an explicit type
//! (vectors for 16-byte accesses) and alignment.
//!
//! # Invariants (checked by [`validate`], relied on by every pass and back end)
//!
//! - **Handles are in range** of their kernel's arenas, and an expression's operands are **earlier** expressions.
//! - **Types check**: every expression has one type, computed by one function ([`valid::types::resolve`]).
//! - **Global expressions** (literals, parameters, allocation addresses) are never emitted; **every other
//!   expression is emitted at most once**, and used only after its emission, in the same block or one nested in
//!   it. Expressions never emitted are dead: nothing uses them, and the printer does not show them.
//! - Stores write global, shared or local memory; every access's alignment is a power of two at least its
//!   scalar's size; a `For` never writes its own variable; `Break`/`Continue` are inside a `For`.
//!
//! What is deliberately absent: LLVM (only `cutec-codegen` links it), layouts and tensors (lowered away before the
//! IR), unstructured control flow, and pointers stored in memory.
//!
//! # Stages
//!
//! [`lower()`] builds a module from the checked program; [`run_pipeline`] runs the [`pipeline`] of passes, each
//! small and named (`--print-passes`, `--dump-after PASS`), and returns the validator's [`ModuleInfo`] that back
//! ends trust; [`warnings`] then reports what will be slow; [`print()`] writes the stable text form
//! (`--emit ir`).
//!
//! The pipeline today: `unroll` (literal-bound loops marked `unroll(full)`, then renumbering), `forward-vars`
//! (variable reads replaced by known writes), `fold-constants`, `cse`, `dce`, `compact` (program-order numbering).
//! Scheduling passes (software pipelining, warp specialization) will join the same list.

pub mod analysis;
mod arena;
mod builder;
pub mod codes;
pub mod effects;
mod expr;
pub mod fixtures;
pub mod lower;
mod module;
mod op;
pub mod parse;
pub mod passes;
mod print;
mod stmt;
mod types;
pub mod valid;

pub use arena::{Arena, Handle, Loc};
pub use builder::KernelBuilder;
pub use codes::CODES;
pub use effects::Effects;
pub use expr::{BinaryOp, CompareOp, Dim, Expr, Literal, MathFn, ShuffleMode, SpecialReg, UnaryOp};
pub use lower::{lower, lower_all};
pub use module::{Alloc, Kernel, Module, Param, Var};
pub use op::{Op, WgmmaShape};
pub use parse::{ParseError, parse};
pub use passes::{Pass, PipelineOptions, describe_pipeline, find_pass, pipeline, run_pipeline};
pub use print::{print, print_kernel};
pub use stmt::{Barrier, Block, Role, Stmt, Unroll};
pub use types::{AddrSpace, Scalar, Type};
pub use valid::lint::warnings;
pub use valid::{KernelError, KernelInfo, ModuleInfo, ValidationError, validate};
