//! The one error enum of the lowering, and the one place it becomes a [`Diagnostic`].
//!
//! Errors hold values and spans, never a rendered diagnostic: the lowering records a [`Located`] error (the file
//! and span of the construct it is about) and [`crate::lower`] renders them all at its boundary, like the
//! checker's errors. A secondary span of an error is in the same file as its primary span. Where a family of
//! errors has many reasons (what a TMA copy cannot describe, what codegen does not cover yet), the reason is a
//! phrase of the variant (`problem`, `what`), and the code, the message around it, labels and help are written
//! here.

use cutec_diagnostics::{Diagnostic, FileId, Span};
use cutec_ir::codes;
use cutec_sema::SymInt;

/// An error and where it is: the primary span and the file of every span of the error.
#[derive(Clone, Debug)]
pub struct Located {
    pub file: FileId,
    pub span: Span,
    pub error: LowerError,
}

/// Why the roles of a kernel cannot run: the primary span is the role (or its argument) at fault.
#[derive(Clone, Debug)]
pub enum RoleError {
    /// The block cannot be split into the roles: the first role is at the primary span, the block at `block`.
    Block { role: String, block: Span, size: BlockShape },
    /// A role placed past the block's warpgroups `0..warpgroups`.
    NoThreads { role: String, start: u32, end: u32, warpgroups: u32, threads: u32, block: Span },
    /// Warpgroups `start..warpgroups` of the block have no role; the last role is at the primary span.
    WarpgroupsWithoutRole { start: u32, warpgroups: u32, threads: u32, block: Span },
    /// `warpgroups = value` of a role, outside 1..=8.
    Warpgroups { role: String, value: i64 },
    /// `registers = value` of a role that `setmaxnreg` cannot set.
    Registers { role: String, value: i64 },
    /// The roles' registers (the worst at the primary span) are more than the SM has.
    RegisterBudget { total: u64, worst: RoleShare, others: Vec<RoleShare>, entry: u32, threads: u32, sm: u32 },
    /// A role that is not directly in the kernel's body: `in_function` when it is inside a device function.
    NotTopLevel { role: String, in_function: bool },
}

/// The threads that run a tiled MMA (E0354), where they are not the warpgroups it is over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MmaThreads {
    /// The block's size is not a compile-time constant.
    Unknown,
    /// A block of `[x, y, z]` threads (more than one dimension, or not whole warpgroups).
    Block([u32; 3]),
    /// `warpgroups` whole warpgroups: the block's (`whose` says whose: the block, its consumers, the role's).
    Warpgroups { warpgroups: u32, whose: &'static str },
}

/// How a block size fails to be split into roles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockShape {
    /// Not a compile-time constant.
    Unknown,
    /// One-dimensional, but not whole warpgroups.
    NotWarpgroups(u32),
    /// Not one-dimensional.
    NotOneDimensional([u32; 3]),
}

/// One role's share of the register file, for E0314.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoleShare {
    pub head: Span,
    pub regs: u32,
    /// Whether `regs` is the role's own `registers` (else the budget at entry).
    pub explicit: bool,
    pub warpgroups: u32,
}

impl RoleShare {
    pub fn registers(&self) -> u64 {
        u64::from(self.regs) * 128 * u64::from(self.warpgroups)
    }
}

#[derive(Clone, Debug)]
pub enum LowerError {
    /// The kernel the driver asked for does not exist.
    NoKernel {
        name: String,
    },
    /// A construct the lowering or code generation does not cover yet: `what` names it (E0300).
    Unsupported {
        what: String,
    },
    /// A value of another kind where `what` was expected (E0300).
    Expected {
        what: &'static str,
    },
    /// A `persistent` kernel whose body cannot run once per tile in a loop (E0324).
    Persistent {
        problem: String,
        help: String,
    },
    /// A schedule the passes could not write, found by the lowering (E0324): `label` at the primary span.
    Schedule {
        problem: String,
        label: String,
        help: String,
    },
    /// What the checker should have ruled out, or a bug of the lowering.
    Internal {
        what: String,
    },
    /// A value that must be known at compile time is not (E0305).
    NotConstant {
        problem: String,
    },
    /// The const generic `name` has no value (E0305), declared at `decl` in the current function.
    NoValue {
        name: String,
        decl: Option<Span>,
        use_label: String,
    },
    /// A layout the lowering cannot use (E0307).
    Layout {
        problem: String,
    },
    /// The layout algebra refused an operation (E0307).
    LayoutAlgebra {
        error: cutec_layout::LayoutError,
    },
    /// Blocks nest deeper than `limit` once device functions are inlined.
    NestingTooDeep {
        limit: u32,
    },
    TooMuchShared {
        bytes: u64,
        limit: u64,
    },
    CopySizeMismatch {
        from: usize,
        to: usize,
    },
    StoreSizeMismatch {
        from: i64,
        to: i64,
    },
    InlineTooDeep,
    /// A call or copy that would take the kernel past the statement budget (E0321): `stmts` more statements
    /// after `before`.
    OverBudget {
        what: Charge,
        stmts: u64,
        before: u64,
        limit: u64,
    },
    /// A `return` before the last statement of an inlined device function.
    EarlyReturn,
    /// An access whose coordinate along `mode` of the argument `param` is never inside `0..extent`.
    OutsideTensor {
        param: String,
        mode: usize,
        extent: SymInt,
    },
    /// An access the bounds analysis lost track of: `why` says where.
    UnprovenAccess {
        param: String,
        why: String,
    },
    /// A warpgroup instruction `what` where threads of the warpgroup may be missing (E0312): `at` is why.
    WarpgroupDivergent {
        what: String,
        at: Span,
        why: &'static str,
    },
    /// `store`'s `map = f` with an `f` that reads `what` (at `use_at` in `use_file`), not only its argument
    /// (E0325).
    MapNotElementwise {
        function: String,
        what: String,
        use_file: FileId,
        use_at: Span,
    },
    /// `store`'s `with = x` of another shape than the stored tile, and not a row of it to broadcast (E0304).
    MapOperandShape {
        operand: String,
        tile: String,
    },
    /// `store`'s `with = x`, a view of the argument `param`, read by the spare warps beside the next tile's
    /// mainloop, in a kernel that also writes `param` (E0326).
    MapOperandWritten {
        param: String,
    },
    /// A register A operand that is not a whole A fragment for K = `k` (E0316).
    AFragment {
        problem: String,
        label: String,
        k: i64,
        elem: String,
    },
    /// An operand of a `gemm` the wgmma cannot read (E0310).
    WgmmaOperand {
        problem: String,
    },
    /// The roles of the kernel cannot run (E0313, E0314).
    Role(RoleError),
    /// A CTA rank not provably in the cluster of `cluster` CTAs (or with no cluster).
    CtaRank {
        cluster: Option<i64>,
    },
    DsmemBeforeClusterSync,
    /// `map_shared` of something other than this CTA's shared memory: `what` it is.
    NotShared {
        what: &'static str,
    },
    NotAnMbarrier,
    /// A constant element `index` of the shared-memory tensor `tensor` (element `swizzled` once its swizzle is
    /// applied, where that differs), outside its allocation of `len` elements (E0353).
    SharedIndex {
        tensor: String,
        index: i64,
        swizzled: Option<i64>,
        len: u32,
    },
    /// A tiled MMA over `want` warpgroups where the threads that run it are not that many warpgroups (E0354).
    MmaWarpgroups {
        want: u32,
        threads: MmaThreads,
    },
    /// `tma_load(.., multicast = n)` whose count does not fit the kernel's cluster (of `cluster` CTAs), or whose
    /// tile `rows` does not divide (E0355).
    MulticastCount {
        n: i64,
        cluster: Option<i64>,
        rows: Option<i64>,
    },
    /// A TMA copy the tensor maps cannot describe (E0309).
    TmaNotABox {
        problem: String,
        /// What would make it one, where the lowering knows.
        help: Option<&'static str>,
    },
}

fn range_text(start: u32, end: u32) -> String {
    if end == start + 1 { format!("{start}") } else { format!("{start}..={}", end.saturating_sub(1)) }
}

/// What an [`LowerError::OverBudget`] refused, for its message.
#[derive(Clone, Debug)]
pub enum Charge {
    /// A call of the device function `function`.
    Call { function: String },
    /// A `copy`, `store` or `fill` of `elements` elements.
    Copy { elements: usize },
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}

impl Located {
    /// The diagnostic of this error; the only place the lowering's errors become text.
    pub fn to_diagnostic(&self) -> Diagnostic {
        use LowerError as E;
        let (file, span) = (self.file, self.span);
        let err = |code, message: String| Diagnostic::error(code, message, file, span);
        match &self.error {
            E::NoKernel { name } => err(codes::UNSUPPORTED, format!("no kernel named `{name}`")),
            E::Unsupported { what } => err(codes::UNSUPPORTED, format!("{what} is not supported yet"))
                .with_note("`cutec explain E0300` says what the compiler covers; the book's page \"What works today\" lists it"),
            E::Expected { what } => err(codes::UNSUPPORTED, format!("expected {what}")),
            E::Internal { what } => err(codes::INTERNAL, what.clone()),
            E::Persistent { problem, help } => err(codes::SCHEDULE, problem.clone())
                .with_note("a `persistent` kernel runs its body once per tile, in a loop, on one CTA per SM")
                .with_help(help.clone()),
            E::Schedule { problem, label, help } => {
                err(codes::SCHEDULE, problem.clone()).with_primary_message(label.clone()).with_help(help.clone())
            }
            E::NotConstant { problem } => err(codes::NOT_CONSTANT, problem.clone()),
            E::NoValue { name, decl, use_label } => {
                let message = format!("the const generic `{name}` has no value");
                let d = match decl {
                    Some(decl) => Diagnostic::error(codes::NOT_CONSTANT, message, file, *decl)
                        .with_primary_message("declared here without a default")
                        .with_label(file, span, use_label.clone()),
                    None => err(codes::NOT_CONSTANT, message).with_primary_message(use_label.clone()),
                };
                d.with_help(format!("give it a value with `-D {name}=...`"))
            }
            E::Layout { problem } => err(codes::UNSUPPORTED_LAYOUT, problem.clone()),
            E::LayoutAlgebra { error } => err(codes::UNSUPPORTED_LAYOUT, format!("layout algebra: {error}")),
            E::NestingTooDeep { limit } => err(
                codes::NESTING_TOO_DEEP,
                format!("blocks nest more than {limit} deep once device functions are inlined"),
            ),
            E::TooMuchShared { bytes, limit } => err(
                codes::TOO_MUCH_SHARED,
                format!("{bytes} bytes of shared memory, over sm_90a's limit of {limit} per block"),
            ),
            E::CopySizeMismatch { from, to } => {
                err(codes::COPY_SIZE_MISMATCH, format!("`copy` from a tensor of {from} elements to one of {to}"))
            }
            E::StoreSizeMismatch { from, to } => {
                err(codes::COPY_SIZE_MISMATCH, format!("`store` from {from} elements to {to}"))
            }
            E::OverBudget { what, stmts, before, limit } => {
                let (message, label) = match what {
                    Charge::Call { function } => (
                        format!("inlining `{function}` here makes the kernel more than {limit} statements"),
                        format!("this call inlines {stmts} statements, with {before} already in the kernel"),
                    ),
                    Charge::Copy { elements } => (
                        format!("expanding this makes the kernel more than {limit} statements"),
                        format!(
                            "its {elements} elements expand to at least {stmts} statements, with {before} already in \
                             the kernel"
                        ),
                    ),
                };
                err(codes::KERNEL_TOO_LARGE, message)
                    .with_primary_message(label)
                    .with_note("statements of inlined device functions, of expanded copies and of unrolled loops count")
                    .with_help("put repeated work in a loop, or split the kernel")
            }
            E::InlineTooDeep => err(codes::NOT_INLINABLE, "device functions nest too deeply to inline".into()),
            E::EarlyReturn => err(
                codes::NOT_INLINABLE,
                "a device function is inlined only when `return` is its last statement".into(),
            ),
            E::OutsideTensor { param, mode, extent } => {
                err(codes::UNBOUNDED_ACCESS, format!("this access is outside `{param}` whatever the arguments"))
                    .with_primary_message(format!(
                        "its coordinate along mode {mode} of `{param}` is never in 0..{extent}"
                    ))
            }
            E::UnprovenAccess { param, why } => {
                err(codes::UNBOUNDED_ACCESS, format!("cannot tell whether this access stays inside `{param}`"))
                    .with_note(why.clone())
                    .with_help(format!(
                        "make the view with `local_tile`, `local_partition` or slices, or require tiles that divide \
                         `{param}` (`static_assert(M % 128 == 0)` on its dimensions)"
                    ))
            }
            E::WarpgroupDivergent { what, at, why } => err(
                codes::WARPGROUP_DIVERGENT,
                format!("{what} needs all 128 threads of the warpgroup, but some of them may not be here"),
            )
            .with_label(file, *at, *why)
            .with_help(
                "make what leaves threads out depend on `thread_idx.x / 128` (the warpgroup), not on a thread or a lane",
            ),
            E::MapNotElementwise { function, what, use_file, use_at } => err(
                codes::MAP_NOT_ELEMENTWISE,
                format!("`map = {function}`: `{function}` reads {what}, not only its argument"),
            )
            .with_label(*use_file, *use_at, "read here")
            .with_note("the compiler picks the threads that apply `map` (the producer's spare warps, or each warpgroup)")
            .with_help("compute what depends on the thread before the `store`, on the accumulator"),
            E::MapOperandShape { operand, tile } => err(
                codes::COPY_SIZE_MISMATCH,
                format!("`with` has shape {operand}, the stored tile {tile}"),
            )
            .with_primary_message("paired element by element with the stored tile")
            .with_help(
                "pass a tensor of the tile's shape, or a row of it (one value per column, broadcast along the \
                 rows, such as a bias)",
            ),
            E::MapOperandWritten { param } => err(
                codes::MAP_OPERAND_WRITTEN,
                format!("`with` reads `{param}` beside the next tile's mainloop, and the kernel writes `{param}`"),
            )
            .with_primary_message("read by the producer's spare warps, one tile later")
            .with_note(
                "at the top level of a `persistent` `warp_specialized` kernel the spare warps apply `map` while the \
                 consumers run the next tile, so a write to the operand could land before they read it",
            )
            .with_help("pass a tensor the kernel only reads, or copy the values into shared memory first"),
            E::AFragment { problem, label, k, elem } => err(codes::WGMMA_A_FRAGMENT, problem.clone())
                .with_primary_message(label.clone())
                .with_help(format!(
                    "make it with `mma.fragment_a((64, {k}))` and fill it with `copy(mma.partition_a(tile), fa)`, or \
                     convert an accumulator into `make_fragment_like<{elem}>(acc)` with `store`"
                )),
            E::WgmmaOperand { problem } => err(codes::WGMMA_OPERAND, problem.clone()),
            E::CtaRank { cluster } => {
                let (message, label, help) = match cluster {
                    Some(n) => (
                        format!("this CTA rank may be outside the cluster of {n} CTAs"),
                        format!("not provably in 0..{n}"),
                        format!(
                            "use a rank the compiler can bound: a constant below {n}, a loop variable over `0..{n}`, \
                             `block_rank_in_cluster` or `block_rank_in_cluster ^ k`"
                        ),
                    ),
                    None => (
                        "another CTA of the cluster is named, but the kernel is not launched in clusters".to_string(),
                        "a CTA of which cluster?".to_string(),
                        "add `cluster = (..)` to the kernel's `launch(..)`".to_string(),
                    ),
                };
                err(codes::CTA_RANK, message).with_primary_message(label).with_help(help)
            }
            E::DsmemBeforeClusterSync => err(
                codes::DSMEM_BEFORE_CLUSTER_SYNC,
                "another CTA's shared memory is mapped before the cluster has synchronised".into(),
            )
            .with_primary_message("the CTA of this rank may not have started yet")
            .with_help(
                "call `cluster_sync()` before `map_shared`, at the top level of the kernel's body (not in a loop, a \
                 condition or a function): every CTA of the cluster has then started",
            ),
            E::NotShared { what } => {
                err(codes::NOT_SHARED, "`map_shared` maps a tensor of this CTA's shared memory".into())
                    .with_primary_message(*what)
                    .with_help("map a tensor made by `make_tensor<T, smem>(..)` (or a slice of one)")
            }
            E::NotAnMbarrier => err(
                codes::NOT_AN_MBARRIER,
                "an mbarrier is an element of a `u64` tensor in shared memory, such as `bars[0]`".into(),
            ),
            E::SharedIndex { tensor, index, swizzled, len } => {
                let at = match swizzled {
                    Some(e) => format!("element {index} (element {e} after the swizzle)"),
                    None => format!("element {index}"),
                };
                let label = format!("`{tensor}` has elements 0..{len}");
                err(
                    crate::codes::SHARED_INDEX,
                    format!("{at} of the shared-memory tensor `{tensor}` is outside its {len} elements"),
                )
                .with_primary_message(label)
                .with_note("an access outside a shared-memory allocation reads or writes another tensor's memory")
                .with_help(format!(
                    "keep the index, with the offset of the view it goes through, below {len}, or make `{tensor}` \
                     larger"
                ))
            }
            E::MmaWarpgroups { want, threads } => {
                let need = u64::from(*want) * 128;
                let (message, label) = match threads {
                    MmaThreads::Unknown => (
                        format!("a tiled MMA over {want} warpgroups in a block whose size is not a constant"),
                        format!("needs {want} warpgroups ({need} threads) known when compiling"),
                    ),
                    MmaThreads::Block([x, 1, 1]) => (
                        format!(
                            "a tiled MMA over {want} warpgroups in a block of {x} threads, which is not whole \
                             warpgroups"
                        ),
                        format!("{x} threads: {} warpgroups and {} threads", x / 128, x % 128),
                    ),
                    MmaThreads::Block([x, y, z]) => {
                        let n = u64::from(*x) * u64::from(*y) * u64::from(*z);
                        (
                            format!(
                                "a tiled MMA over {want} warpgroups in a block of ({x}, {y}, {z}) = {n} threads, \
                                 which is not whole warpgroups"
                            ),
                            format!("{n} threads: {} warpgroups and {} threads", n / 128, n % 128),
                        )
                    }
                    MmaThreads::Warpgroups { warpgroups, whose } => (
                        format!(
                            "a tiled MMA over {want} warpgroups run by {warpgroups} warpgroup{}",
                            plural(*warpgroups)
                        ),
                        format!("{whose} {warpgroups} warpgroup{}", plural(*warpgroups)),
                    ),
                };
                err(crate::codes::MMA_WARPGROUPS, message)
                    .with_primary_message(label)
                    .with_note(format!(
                        "a tiled MMA over {want} warpgroups splits its tile by `thread_idx.x / 128` among exactly \
                         {want} warpgroups of 128 threads: its role's, else the block's (less a \
                         `warp_specialized` kernel's producer)"
                    ))
                    .with_help(format!(
                        "launch a block of {need} threads ({} with a `warp_specialized` producer), run it in a \
                         `role` of `warpgroups = {want}`, or tile the MMA over as many warpgroups as run it",
                        need + 128
                    ))
            }
            E::MulticastCount { n, cluster, rows } => {
                let (message, label, help) = match (cluster, rows) {
                    (_, Some(r)) => (
                        format!("`multicast = {n}` splits the tile's rows among {n} CTAs, and it has {r} rows"),
                        format!("each of the {n} CTAs loads a part of the rows"),
                        format!("make the tile 2-D with a number of rows that {n} divides"),
                    ),
                    (Some(c), None) => (
                        format!(
                            "`multicast = {n}` in a cluster of {c} CTA{}: the count is the cluster's CTAs",
                            if *c == 1 { "" } else { "s" }
                        ),
                        format!("must be {c}, the CTAs of the cluster"),
                        format!("write `multicast = {c}`, or change the cluster to {n} CTAs"),
                    ),
                    (None, None) => (
                        format!("`multicast = {n}` in a kernel launched without a cluster"),
                        "must be 1 without a cluster".to_string(),
                        format!(
                            "add `cluster = ({n}, 1)` to the kernel's `launch(..)`, or drop `multicast` (a CTA \
                             alone loads its whole tile)"
                        ),
                    ),
                };
                err(crate::codes::MULTICAST_COUNT, message)
                    .with_primary_message(label)
                    .with_note(
                        "`tma_load(g, layout, multicast = n)` shares one tile among all the CTAs of the kernel's \
                         cluster: each loads its n-th of the rows into every CTA",
                    )
                    .with_help(help)
            }
            E::TmaNotABox { problem, help } => {
                let d = err(codes::TMA_NOT_A_BOX, problem.clone());
                match help {
                    Some(h) => d.with_help(*h),
                    None => d,
                }
            }
            E::Role(role) => role_diagnostic(file, span, role),
        }
    }
}

/// The diagnostics of the roles (E0313, E0314).
fn role_diagnostic(file: FileId, span: Span, error: &RoleError) -> Diagnostic {
    use RoleError as E;
    match error {
        E::Block { role, block, size } => {
            let (message, label, help) = match *size {
                BlockShape::Unknown => (
                    "roles need a block size known at compile time".to_string(),
                    "the block size is not a constant".to_string(),
                    "write the block size with constants and const generics: `block = (384)`".to_string(),
                ),
                BlockShape::NotWarpgroups(x) => (
                    format!("a block of {x} threads is not a whole number of warpgroups"),
                    format!("{x} threads: {} warpgroups and {} threads", x / 128, x % 128),
                    format!("roles split the block into warpgroups of 128 threads: make it {}", (x / 128 + 1) * 128),
                ),
                BlockShape::NotOneDimensional([x, y, z]) => (
                    "roles need a one-dimensional block".to_string(),
                    format!("a block of ({x}, {y}, {z}) threads"),
                    format!("roles split `thread_idx.x` into warpgroups: write `block = ({})`", x * y * z),
                ),
            };
            Diagnostic::error(codes::ROLES_DO_NOT_FIT, message, file, span)
                .with_primary_message(format!("the role `{role}` splits the block into warpgroups"))
                .with_label(file, *block, label)
                .with_help(help)
        }
        E::NoThreads { role, start, end, warpgroups, threads, block } => {
            let s = plural(end - start);
            let message = format!(
                "the role `{role}` has no threads: it needs warpgroup{s} {}, and the block has only {warpgroups}",
                range_text(*start, *end),
            );
            Diagnostic::error(codes::ROLES_DO_NOT_FIT, message, file, span)
                .with_primary_message(format!("warpgroup{s} {}", range_text(*start, *end)))
                .with_label(file, *block, format!("{threads} threads: warpgroups {}", range_text(0, *warpgroups)))
                .with_help(format!(
                    "make the block {} threads, or give the roles fewer warpgroups",
                    u64::from(*end) * 128
                ))
        }
        E::WarpgroupsWithoutRole { start, warpgroups, threads, block } => {
            let n = warpgroups - start;
            let verb = if n == 1 { "has" } else { "have" };
            let message =
                format!("warpgroup{} {} of the block {verb} no role", plural(n), range_text(*start, *warpgroups));
            Diagnostic::error(codes::ROLES_DO_NOT_FIT, message, file, span)
                .with_primary_message(format!("the last role ends at warpgroup {}", start - 1))
                .with_label(file, *block, format!("{threads} threads: warpgroups {}", range_text(0, *warpgroups)))
                .with_help(format!(
                    "add a role for them, or make the block {} threads: a warpgroup without a role runs none of \
                         them, and its registers are lost to the others",
                    start * 128
                ))
        }
        E::Warpgroups { role, value } => {
            let message = if *value < 1 {
                format!("the role `{role}` has no threads: {value} warpgroups")
            } else {
                format!("the role `{role}` asks for {value} warpgroups, more than a block has")
            };
            Diagnostic::error(codes::ROLES_DO_NOT_FIT, message, file, span)
                .with_primary_message(format!("{value} warpgroups"))
                .with_help("a role takes 1 to 8 warpgroups (a block has at most 1024 threads); the default is 1")
        }
        E::Registers { role, value } => Diagnostic::error(
            codes::REGISTER_BUDGET,
            format!("the role `{role}` asks for {value} registers per thread"),
            file,
            span,
        )
        .with_primary_message("not a multiple of 8 in 24..=256")
        .with_help("`setmaxnreg` sets a multiple of 8 registers from 24 to 256 per thread"),
        E::RegisterBudget { total, worst, others, entry, threads, sm } => {
            let share = |p: &RoleShare, how: &str| {
                format!(
                    "{} registers{how} x 128 threads x {} warpgroup{} = {}",
                    p.regs,
                    p.warpgroups,
                    plural(p.warpgroups),
                    p.registers()
                )
            };
            let mut d = Diagnostic::error(
                codes::REGISTER_BUDGET,
                format!("the roles ask for {total} registers, more than the SM's {sm}"),
                file,
                span,
            )
            .with_primary_message(share(worst, ""));
            for p in others {
                d = d.with_label(file, p.head, share(p, if p.explicit { "" } else { " (the budget at entry)" }));
            }
            d.with_note(
                "`setmaxnreg.inc` waits until the registers it asks for are free: past the register file it waits \
                     forever",
            )
            .with_help(format!(
                "lower the roles' `registers` so that their sum times 128 times their warpgroups is at most \
                     {sm}; a role without `registers` keeps {entry}, the budget of a {threads}-thread block at entry"
            ))
        }
        E::NotTopLevel { role, in_function } => {
            let place = if *in_function { "in a device function" } else { "inside a block of the kernel" };
            Diagnostic::error(
                codes::ROLES_DO_NOT_FIT,
                format!("the role `{role}` is not at the top level of a kernel body"),
                file,
                span,
            )
            .with_primary_message(format!("a role {place}"))
            .with_help(
                "roles split the kernel's threads once, in order: write them directly in the kernel's body, not \
                     in an `if`, a loop, a block or a function",
            )
        }
    }
}
