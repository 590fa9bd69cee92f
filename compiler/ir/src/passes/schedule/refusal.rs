//! What the scheduling passes cannot write (E0324), as data: each refusal holds the values that describe it, and
//! [`Refusal::problem`], [`Refusal::label`] and [`Refusal::help`] are the one place that words it.

/// A schedule the scheduling passes cannot write for this program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A compiler bug: an invariant of the lowering that does not hold (`what`), at the statement (`label`).
    Internal { what: &'static str, label: &'static str },
    /// A `tma_load` without `bar` inside a `role`.
    UnboundCopyInRole,
    /// A `tma_load` without `bar` outside the pipelined loop of a `warp_specialized` kernel.
    UnboundCopyBesideProducer,
    /// A `tma_load` without `bar` in a kernel whose block is not one-dimensional.
    UnboundCopyBlockNot1d,
    /// A multicast `tma_load` outside a pipelined loop.
    UnboundMulticast,
    /// A `return` (or a `break`/`continue`, `what`) of some threads only, before a pipelined loop ends.
    EarlyExit { what: &'static str },
    /// A `pipelined` loop inside a `role`.
    PipelinedInRole,
    /// A `pipelined` loop over `start..end`, which runs no iteration.
    NoIteration { start: i64, end: i64 },
    /// A `pipelined` loop that some threads of the block may not reach.
    NotReachedByAll,
    /// A `pipelined` loop whose bounds may differ between the threads of the block.
    BoundsDiffer,
    /// A ring of fewer than two stages.
    TooFewStages { stages: i64 },
    /// A `pipelined` loop in a kernel whose block is not one-dimensional.
    PipelinedBlockNot1d,
    /// The pipelined loop of a `warp_specialized` kernel, deeper than the top level or a loop there.
    ProducerLoopNested,
    /// A `warp_specialized` kernel whose block of `threads` threads is not a producer and consumer warpgroups.
    ProducerBlock { threads: u32 },
    /// A `pipelined` loop without a `tma_load`.
    NoCopies,
    /// A copy whose coordinates cannot be computed for another iteration (`why`).
    CopyCoordinates { why: String },
    /// A multicast copy whose tile may differ between the CTAs of the cluster (`why`).
    MulticastNotUniform { why: String },
    /// A multicast to `n` CTAs in a cluster of `cluster`.
    MulticastPart { n: u32, cluster: u32 },
    /// A ring of `stages` stages of `bytes` bytes (`ring` with its barriers) that does not fit beside the kernel's
    /// other `before` bytes (`shared` in all).
    RingTooLarge { stages: i64, bytes: u64, ring: u64, before: u64, shared: u64 },
    /// A copy of the pipelined loop into part of a tile.
    CopyIntoPart,
    /// A `tma_load` under a condition or in an inner loop of a pipelined loop.
    CopyNested,
    /// Copies of the pipelined loop into one tile at places not known apart.
    SlicesUnknown,
    /// Copies of the pipelined loop into one tile that overlap.
    SlicesOverlap,
    /// The copies of the pipelined loop into a tile fill `filled` of its `size` bytes.
    SlicesFill { filled: i64, size: i64 },
    /// A statement of a `warp_specialized` kernel only warpgroup 0's threads would run.
    ProducerOnly,
    /// A statement of a `warp_specialized` kernel's pipelined loop that writes memory on every thread.
    PerThreadInRing,
    /// A statement of a `warp_specialized` kernel that writes memory on every thread from a value only the
    /// consumer warpgroups compute.
    PerThreadNeedsConsumers,
    /// A statement of a `warp_specialized` kernel that writes memory on every thread, nested in the consumers'
    /// work.
    PerThreadInWork,
    /// A `warp_specialized` kernel whose block (`block`) has no producer and consumer warpgroups.
    SpecializedBlock { block: [u32; 3] },
    /// A `warp_specialized` kernel without a pipelined loop.
    NothingToProduce,
    /// A `warp_specialized` kernel with `role`s written by hand.
    RolesByHand,
    /// The pipelined loop's copies depend on work of the consumers (`in_loop`: the loop around the producer).
    CopiesNeedConsumers { in_loop: bool },
    /// A CTA-wide barrier after the warps of a `warp_specialized` kernel are split.
    BarrierAfterSplit,
    /// A `tma_load` after the pipelined loop of a `warp_specialized` kernel.
    TileCopyAfterLoop,
    /// A multicast `tma_load` outside the pipelined loop (of a `warp_specialized` kernel).
    TileMulticast,
    /// A copy beside the pipelined loop into part of a tile.
    TileCopyIntoPart,
    /// Two copies beside the pipelined loop into the same tile.
    TileCopiedTwice,
    /// A `warp_specialized` kernel whose block is not one-dimensional.
    SpecializedBlockNot1d,
}

impl Refusal {
    /// The error's message: what stands in the way.
    pub fn problem(&self) -> String {
        match self {
            Refusal::Internal { what, .. } => (*what).to_string(),
            Refusal::UnboundCopyInRole => "a `tma_load` without `bar` inside a `role`".into(),
            Refusal::UnboundCopyBesideProducer => {
                "a `tma_load` outside the pipelined loop of a `warp_specialized` kernel".into()
            }
            Refusal::UnboundCopyBlockNot1d => {
                "a `tma_load` without `bar` in a kernel whose block is not one-dimensional".into()
            }
            Refusal::UnboundMulticast => "a multicast `tma_load` outside a pipelined loop".into(),
            Refusal::EarlyExit { what } => format!("{what} of some threads only, before a pipelined loop ends"),
            Refusal::PipelinedInRole => "a `pipelined` loop inside a `role`".into(),
            Refusal::NoIteration { start, end } => {
                format!("a `pipelined` loop over {start}..{end}, which runs no iteration")
            }
            Refusal::NotReachedByAll => "a `pipelined` loop that some threads of the block may not reach".into(),
            Refusal::BoundsDiffer => {
                "a `pipelined` loop whose bounds may differ between the threads of the block".into()
            }
            Refusal::TooFewStages { stages } => format!("a ring of {stages} stage cannot overlap a copy with anything"),
            Refusal::PipelinedBlockNot1d => "a `pipelined` loop in a kernel whose block is not one-dimensional".into(),
            Refusal::ProducerLoopNested => {
                "the pipelined loop of a `warp_specialized` kernel must be at the top level \
                                            of its body, or in a loop there"
                    .into()
            }
            Refusal::ProducerBlock { threads } => format!(
                "a `warp_specialized` kernel needs a producer warpgroup and consumer warpgroups, but its block has \
                 {threads} threads"
            ),
            Refusal::NoCopies => "this `pipelined` loop has no `tma_load` to pipeline".into(),
            Refusal::CopyCoordinates { why } => format!("the coordinates of this copy {why}"),
            Refusal::MulticastNotUniform { why } => {
                format!("the CTAs of the cluster may not load the same tile: its coordinates {why}")
            }
            Refusal::MulticastPart { n, cluster } => format!("a multicast to {n} CTAs in a cluster of {cluster}"),
            Refusal::RingTooLarge { stages, bytes, ring, before, shared } => format!(
                "a ring of {stages} stages of {bytes} bytes ({ring} bytes with its barriers) and the kernel's other \
                 {before} bytes of shared memory make {shared}; a block has at most {}",
                cutec_target::MAX_SHARED_BYTES
            ),
            Refusal::CopyIntoPart => "a copy of the pipelined loop into part of a tile".into(),
            Refusal::CopyNested => "a `tma_load` under a condition or in an inner loop of a pipelined loop".into(),
            Refusal::SlicesUnknown => {
                "two copies of the pipelined loop fill the same tile at places not known apart".into()
            }
            Refusal::SlicesOverlap => "two copies of the pipelined loop fill the same tile".into(),
            Refusal::SlicesFill { filled, size } => {
                format!("the copies of the pipelined loop into this tile fill {filled} of its {size} bytes")
            }
            Refusal::ProducerOnly => {
                "a statement of the consumers' work in a `warp_specialized` kernel that only the threads of \
                 warpgroup 0 would run"
                    .into()
            }
            Refusal::PerThreadInRing => {
                "a statement of a `warp_specialized` kernel's pipelined loop that every thread \
                                         runs, but the producer's threads would not"
                    .into()
            }
            Refusal::PerThreadNeedsConsumers => "a statement of a `warp_specialized` kernel that every thread runs, \
                                                 but it needs a value only the consumer warpgroups compute"
                .into(),
            Refusal::PerThreadInWork => "a statement of a `warp_specialized` kernel that every thread runs, inside \
                                         the consumer warpgroups' work"
                .into(),
            Refusal::SpecializedBlock { block } => format!(
                "a `warp_specialized` kernel needs a producer warpgroup and consumer warpgroups, but its block is \
                 {block:?}"
            ),
            Refusal::NothingToProduce => {
                "a `warp_specialized` kernel without a pipelined loop: its producer would have nothing to do".into()
            }
            Refusal::RolesByHand => "a `warp_specialized` kernel with `role`s written by hand".into(),
            Refusal::CopiesNeedConsumers { .. } => "the pipelined loop's copies depend on work of the consumers".into(),
            Refusal::BarrierAfterSplit => {
                "a CTA-wide barrier after the warps of a `warp_specialized` kernel are split".into()
            }
            Refusal::TileCopyAfterLoop => "a `tma_load` after the pipelined loop of a `warp_specialized` kernel".into(),
            Refusal::TileMulticast => "a multicast `tma_load` outside the pipelined loop".into(),
            Refusal::TileCopyIntoPart => "a copy beside the pipelined loop into part of a tile".into(),
            Refusal::TileCopiedTwice => "two copies beside the pipelined loop into the same tile".into(),
            Refusal::SpecializedBlockNot1d => "a `warp_specialized` kernel whose block is not one-dimensional".into(),
        }
    }

    /// The label at the statement that asks for the schedule.
    pub fn label(&self) -> &'static str {
        match self {
            Refusal::Internal { label, .. } => label,
            Refusal::UnboundCopyInRole
            | Refusal::UnboundCopyBesideProducer
            | Refusal::UnboundCopyBlockNot1d
            | Refusal::UnboundMulticast
            | Refusal::CopyIntoPart
            | Refusal::SlicesUnknown
            | Refusal::SlicesOverlap
            | Refusal::SlicesFill { .. }
            | Refusal::TileCopyAfterLoop
            | Refusal::TileMulticast
            | Refusal::TileCopyIntoPart
            | Refusal::TileCopiedTwice => "this copy",
            Refusal::EarlyExit { .. } => "some threads may leave here",
            Refusal::PipelinedInRole
            | Refusal::NoIteration { .. }
            | Refusal::NotReachedByAll
            | Refusal::BoundsDiffer
            | Refusal::TooFewStages { .. }
            | Refusal::PipelinedBlockNot1d
            | Refusal::ProducerLoopNested
            | Refusal::ProducerBlock { .. }
            | Refusal::NoCopies
            | Refusal::MulticastPart { .. }
            | Refusal::RingTooLarge { .. } => "pipelined here",
            Refusal::CopyCoordinates { .. } => "a copy of the pipelined loop",
            Refusal::MulticastNotUniform { .. } => "a multicast copy",
            Refusal::CopyNested => "inside this",
            Refusal::ProducerOnly => "no consumer thread meets this condition",
            Refusal::PerThreadInRing => "every thread writes memory here, threads 0..127 included",
            Refusal::PerThreadInWork => {
                "every thread writes memory here, but what is around it runs on threads 128 and up"
            }
            Refusal::PerThreadNeedsConsumers => "threads 0..127 write memory here too, from a value they do not have",
            Refusal::SpecializedBlock { .. } | Refusal::NothingToProduce | Refusal::RolesByHand => "this kernel",
            Refusal::CopiesNeedConsumers { in_loop: true } => "in this loop",
            Refusal::CopiesNeedConsumers { in_loop: false } => "this loop",
            Refusal::BarrierAfterSplit | Refusal::SpecializedBlockNot1d => "here",
        }
    }

    /// What to do.
    pub fn help(&self) -> &'static str {
        match self {
            Refusal::Internal { .. } => "a compiler bug",
            Refusal::UnboundCopyInRole => "roles are a schedule written by hand: pass `bar = ..`",
            Refusal::UnboundCopyBesideProducer => {
                "only the pipelined loop's copies go to the producer: move this copy into it, or pass `bar = ..`"
            }
            Refusal::UnboundCopyBlockNot1d => "launch with `block = (N)`: the pass picks thread 0 to issue the copy",
            Refusal::UnboundMulticast => {
                "multicast the copies of a `pipelined` loop, or write the barriers by hand (`bar = ..`)"
            }
            Refusal::EarlyExit { .. } => {
                "every thread of the block takes part in a ring (thread 0 issues its copies, lane 0 of each warp \
                 releases its stages): compute on every thread and mask what it stores, or exit under a condition \
                 all threads share"
            }
            Refusal::PipelinedInRole => {
                "roles are a schedule written by hand: write its mbarriers too, or drop the `role`"
            }
            Refusal::NoIteration { .. } => "drop the loop, or give it bounds with iterations",
            Refusal::NotReachedByAll | Refusal::BoundsDiffer => {
                "the threads of the block share the ring: pipeline a loop every thread runs the same number of times \
                 (bounds from dimensions, constants and block indices)"
            }
            Refusal::TooFewStages { .. } => {
                "use `pipelined(stages = 2)` or more (3 or 4 for a GEMM), or drop `pipelined`"
            }
            Refusal::PipelinedBlockNot1d => "launch with `block = (N)`: the pass picks thread 0 to issue the copies",
            Refusal::ProducerLoopNested => "move the loop out of the block around it",
            Refusal::ProducerBlock { .. } => "use `block = (384)` for two consumer warpgroups, `(256)` for one",
            Refusal::NoCopies => "load the loop's tiles with `tma_load(view, layout)`, or drop `pipelined`",
            Refusal::CopyCoordinates { .. } => {
                "compute a pipelined copy's tile from the loop variable and values fixed before the loop"
            }
            Refusal::MulticastNotUniform { .. } => {
                "multicast a tile that depends only on the loop variable and on block_idx along the dimensions the \
                 cluster does not span"
            }
            Refusal::MulticastPart { .. } => "multicast to every CTA of the cluster",
            Refusal::RingTooLarge { .. } => {
                "use fewer stages or smaller tiles (an epilogue through shared memory stages C, in pieces of one \
                 128-byte swizzle row per warpgroup at the least)"
            }
            Refusal::CopyIntoPart | Refusal::TileCopyIntoPart => "copy into the whole tile `tma_load` makes",
            Refusal::CopyNested => "copy at the top level of the pipelined loop's body, or drop `pipelined`",
            Refusal::SlicesUnknown | Refusal::SlicesOverlap | Refusal::SlicesFill { .. } => {
                "give each copy its own tile, or copy a tile in boxes that fill it once"
            }
            Refusal::ProducerOnly => {
                "warpgroup 0 is the producer: it runs the pipelined loop's copies and the statements beside the \
                 loop that write memory per thread, but not the consumers' work (the mma's fragments, barriers, and \
                 what is computed from them), which this statement is: name a consumer's thread \
                 (`thread_idx.x == 128`), or drop `warp_specialized`"
            }
            Refusal::PerThreadInRing => {
                "the pipelined loop's body runs on the consumer warpgroups (threads 128 and up) and the producer \
                 warpgroup only issues its copies: move the statement out of the loop (the producer runs the \
                 statements beside the loop that write memory per thread), or drop `warp_specialized`"
            }
            Refusal::PerThreadNeedsConsumers => {
                "the producer warpgroup (threads 0..127) runs the statements beside the pipelined loop that write \
                 memory per thread, but not the consumers' work (the mma's fragments, barriers, and the values and \
                 variables computed from them): compute the value from the kernel's arguments and indices, or drop \
                 `warp_specialized`"
            }
            Refusal::PerThreadInWork => {
                "the producer warpgroup (threads 0..127) runs the statements beside the pipelined loop that write \
                 memory per thread, but not the consumers' work around this one (it touches the mma's fragments, \
                 synchronizes, or uses what those compute): move the statement out of it, or drop \
                 `warp_specialized`"
            }
            Refusal::SpecializedBlock { .. } => "use `block = (384)` for two consumer warpgroups",
            Refusal::NothingToProduce => {
                "mark the kernel's main loop `pipelined(stages = S)`, or drop `warp_specialized`"
            }
            Refusal::RolesByHand => {
                "write the roles or let the compiler write them, not both: drop `warp_specialized` or the roles"
            }
            Refusal::CopiesNeedConsumers { .. } => {
                "compute the loop's bounds and tiles from values fixed before the loop"
            }
            Refusal::BarrierAfterSplit => {
                "the producer never reaches it: use a named barrier of the consumers (`barrier_sync`)"
            }
            Refusal::TileCopyAfterLoop => {
                "load the tile before the pipelined loop: the producer issues it ahead of the loop's copies, and the \
                 consumers wait for it where they first read it"
            }
            Refusal::TileMulticast => {
                "multicast the copies of the `pipelined` loop; a tile loaded once per output tile is loaded by each \
                 CTA"
            }
            Refusal::TileCopiedTwice => "copy each tile once per pass over the loop",
            Refusal::SpecializedBlockNot1d => "launch with `block = (N)`",
        }
    }
}
