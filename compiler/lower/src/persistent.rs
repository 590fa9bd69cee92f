//! `persistent(raster = grouped(G))`: the launch clause's grid becomes a grid of *tiles*, and the kernel's body
//! the body of a loop over them.
//!
//! The runtime launches at most one CTA per SM, in whole clusters laid along x (`cutec_manifest::Launch::
//! hardware_grid`: `(n * cx, cy, 1)`); cluster `c` of `n` takes the tiles of clusters `c, c + n, c + 2n, ...`
//! of the grid of cluster tiles (`gx / cx` by `gy / cy`, by `gz` layers), and each of its CTAs the tile of its
//! rank. In the body `block_idx` and `grid_dim` read the tile and the tile grid, so the body means what it
//! means in a launch of the whole grid: the same tiles, the same CTAs of a cluster together, and everything the
//! lowering proved from `block_idx < grid_dim` (the bounds of accesses) still holds.
//!
//! What the loop adds, it orders:
//! - a kernel without `warp_specialized` ends each tile with a CTA barrier, so no thread writes the shared
//!   memory of the next tile while another still reads the last one's (a pipelined loop's ring and the
//!   epilogue's staging tile carry their own protocol across tiles: the ring counter, the bulk-store waits);
//! - what cannot be made safe is refused (E0324): a `return` (it would drop the CTA's later tiles), mbarriers
//!   the body initializes (again, on each tile, while a phase may be pending), shared memory a
//!   `warp_specialized` body allocates itself (its roles run different tiles at once), `role`s written by hand,
//!   and clusters along z.
//!
//! The tile order: without `raster`, the grid's own (x fastest); with `grouped(G)`, groups of G rows of
//! cluster tiles (along x) sweep the columns (y) together, so the tiles running at the same time share their
//! rows of A and columns of B in L2 (CUTLASS's and Triton's grouped rasterization).

use crate::error::LowerError;
use crate::{LResult, Lower};
use cutec_diagnostics::Span;
use cutec_ir::{CompareOp, Dim, Expr, Handle, SpecialReg};
use cutec_sema::{Persistent, SymInt};

/// The rows of a group in the order the compiler gives the CTAs of a kernel it rasterizes (as
/// `persistent(raster = grouped(8))` does its tiles).
pub(crate) const RASTER_GROUP: i64 = 8;

/// Whether the compiler runs the kernel persistent when the program allows it (see `chosen_persistent` in the
/// crate root): what it would otherwise rasterize ([`rasterizes`]) with two consumer warpgroups or more
/// (a block of 384 threads or more), the large tiles of a throughput GEMM. The one-consumer kernels of few rows
/// (`gemm_swap_ab`, split-K's direct tiles) keep the launch they were tuned with, one CTA per tile.
pub(crate) fn chooses_persistent(info: &cutec_sema::FunctionInfo) -> bool {
    let threads = info
        .launch
        .as_ref()
        .and_then(|l| l.block.iter().try_fold(1i64, |n, d| d.as_const().map(|d| n.saturating_mul(d))));
    rasterizes(info) && threads.is_some_and(|t| t >= 384)
}

/// Whether the compiler rasterizes the kernel's CTAs: a `warp_specialized` kernel (a tiled GEMM's shape)
/// that is not `persistent`, without a cluster, with a grid one layer deep. The CTAs of a launch run in
/// whatever order the hardware picks (x fastest), and the program's meaning is the same set of CTAs in any
/// order, so renaming them is free; in the hardware's order the CTAs running together take one column of
/// tiles, each its own rows of A (a 16384-row A is read from memory once per column: 0.48x cuBLAS at
/// 16384 x 4096 x 4096 with 128 x 128 tiles), and grouped they share them in L2.
pub(crate) fn rasterizes(info: &cutec_sema::FunctionInfo) -> bool {
    let Some(launch) = info.launch.as_ref() else { return false };
    info.warp_specialized
        && info.persistent.is_none()
        && launch.cluster.is_none()
        && launch.grid.len() >= 2
        && launch.grid.get(2).is_none_or(|z| z.as_const() == Some(1))
}

/// The tile the body of a persistent kernel runs: what `block_idx` and `grid_dim` read there.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tile {
    pub block: [Handle<Expr>; 3],
    pub grid: [Handle<Expr>; 3],
    /// Which of the CTA's tiles this is (0, 1, ...), and how many it runs.
    pub index: Handle<Expr>,
    pub count: Handle<Expr>,
}

impl Lower<'_> {
    /// Lowers the kernel's body `body` inside the loop over the tiles of the launch clause's grid.
    pub(crate) fn persistent_body(
        &mut self,
        p: Persistent,
        body: &cutec_grammar::ast::Block,
        sig: Span,
    ) -> LResult<()> {
        let refuse = |this: &mut Self, problem: &str, help: &str| {
            this.fail(sig, LowerError::Persistent { problem: problem.into(), help: help.into() })
        };
        let Some(launch) = self.kernel_info.launch.as_ref() else { return Err(crate::Reported) };
        if !self.roles.is_empty() {
            return refuse(
                self,
                "a `persistent` kernel with `role`s written by hand",
                "write the loop over tiles inside the roles (as examples/gemm_sm90_manual.cute does), or let the \
                 compiler write the roles (`warp_specialized`)",
            );
        }
        let cluster = match (&launch.cluster, self.b.kernel().cluster) {
            (None, _) => [1, 1, 1],
            (Some(_), Some(c)) => c,
            (Some(_), None) => {
                return refuse(self, "a `persistent` kernel whose cluster shape is not a constant", "write it out");
            }
        };
        if cluster[2] != 1 {
            return refuse(
                self,
                "a `persistent` kernel with clusters along z",
                "lay the cluster along x and y: `cluster = (2, 1)`",
            );
        }
        let [cx, cy] = [cluster[0], cluster[1]].map(i64::from);
        let mut grid = [None; 3];
        for (d, g) in grid.iter_mut().enumerate() {
            let extent = launch.grid.get(d).cloned().unwrap_or(SymInt::Const(1));
            *g = Some(self.materialize(&extent, sig)?);
        }
        let [Some(gx), Some(gy), Some(gz)] = grid else { return Err(crate::Reported) };
        let ctaid_x = self.b.special(SpecialReg::BlockIdx(Dim::X));
        let nctaid_x = self.b.special(SpecialReg::GridDim(Dim::X));
        // The runtime launches whole clusters along x and only `cy` CTAs along y; it refuses a tile grid the
        // cluster does not divide, as it does any grid, so these divisions are exact.
        let cluster_id = self.div_c(ctaid_x, cx);
        let clusters = self.div_c(nctaid_x, cx);
        let (cgx, cgy) = (self.div_c(gx, cx), self.div_c(gy, cy));
        let layer = self.b.mul(cgx, cgy);
        let total = self.b.mul(layer, gz);
        // ceil((total - cluster_id) / clusters): the runtime launches no more clusters than tiles.
        let left = self.b.sub(total, cluster_id);
        let up = self.b.add(left, clusters);
        let one = self.b.i32(1);
        let up = self.b.sub(up, one);
        let mine = self.b.div(up, clusters);
        let zero = self.b.i32(0);

        let var = self.b.var("tile", cutec_ir::Type::I32);
        self.loop_ranges.insert(var, (zero, mine));
        self.epoch += 1;
        self.b.open_block();
        let i = self.b.read(var);
        let step = self.b.mul(i, clusters);
        let t = self.b.add(cluster_id, step);
        let z = self.b.div(t, layer);
        let r = self.b.rem(t, layer);
        let (cm, cn) = match p.group {
            Some(g) if g > 1 => self.grouped(r, cgx, cgy, i64::from(g)),
            _ => (self.b.rem(r, cgx), self.b.div(r, cgx)),
        };
        let bx = self.within_cluster(cm, cx, Dim::X);
        let by = self.within_cluster(cn, cy, Dim::Y);
        self.tile = Some(Tile { block: [bx, by, z], grid: [gx, gy, gz], index: i, count: mine });
        let lowered = self.block(body);
        self.tile = None;
        if !self.kernel_info.warp_specialized {
            self.at(sig);
            self.b.barrier();
        }
        let body = self.b.close_block();
        self.epoch += 1;
        self.loop_ranges.remove(&var);
        self.at(sig);
        self.b.push(cutec_ir::Stmt::For {
            var,
            start: zero,
            end: mine,
            step: 1,
            unroll: cutec_ir::Unroll::Disable,
            stages: None,
            body,
        });
        if self.tile_store_wait {
            // The storing thread of each warpgroup waits for its last tile's stores to have read the staging tile
            // before the CTA exits (see `epilogue`).
            let tid = self.b.thread_idx_x();
            let mask = self.b.i32(127);
            let lane = self.b.binary(cutec_ir::BinaryOp::And, tid, mask);
            let first = self.b.compare(CompareOp::Eq, lane, zero);
            self.b.if_then(first, |b| {
                b.op(cutec_ir::Op::BulkWait { pending: 0, read: true });
            });
        }
        lowered
    }

    /// Refuses (E0324) a shared-memory tensor of `elem` the body of a persistent kernel allocates, where the
    /// loop over tiles cannot order its uses: mbarriers (initialized again on each tile while a phase may be
    /// pending), and any tensor of a `warp_specialized` kernel (whose roles run different tiles at once).
    pub(crate) fn shared_in_tile_loop(&mut self, elem: cutec_sema::Scalar, span: Span) -> LResult<()> {
        if self.tile.is_none() {
            return Ok(());
        }
        let (problem, help) = if elem == cutec_sema::Scalar::U64 {
            (
                "mbarriers in the body of a `persistent` kernel: they would be initialized again on every tile",
                "let the compiler write the protocol (`tma_load` without `bar`, `pipelined`), or write the loop \
                 over tiles by hand around it",
            )
        } else if self.kernel_info.warp_specialized {
            (
                "shared memory allocated by the body of a `persistent` `warp_specialized` kernel: its roles run \
                 different tiles at once, and nothing orders one tile's use of it against the next's",
                "drop `persistent`, or write the loop over tiles by hand",
            )
        } else {
            return Ok(());
        };
        self.fail(span, LowerError::Persistent { problem: problem.into(), help: help.into() })
    }

    /// `x / c` for a positive constant `c`, without an operation for `c = 1`.
    fn div_c(&mut self, x: Handle<Expr>, c: i64) -> Handle<Expr> {
        if c == 1 {
            return x;
        }
        let c = self.b.i32(c as i32);
        self.b.div(x, c)
    }

    /// The CTA's coordinate along `d` of the cluster tile `c` (in cluster tiles): `c * n + rank`, the CTA's rank
    /// along `d` being its `%ctaid` modulo the cluster's extent `n` (along y the launched grid is one cluster
    /// high, so `%ctaid.y` is it).
    fn within_cluster(&mut self, c: Handle<Expr>, n: i64, d: Dim) -> Handle<Expr> {
        if n == 1 {
            return c;
        }
        let ctaid = self.b.special(SpecialReg::BlockIdx(d));
        let extent = self.b.i32(n as i32);
        let rank = if d == Dim::X { self.b.rem(ctaid, extent) } else { ctaid };
        let first = self.b.mul(c, extent);
        self.b.add(first, rank)
    }

    /// The row and column of tile `r` of a `rows` x `cols` grid in groups of `g` rows: group `r / (g * cols)`
    /// covers rows `first .. first + h` (`h = min(rows - first, g)`, the last group may be lower), and inside
    /// it the tiles go down the rows first, then along the columns.
    fn grouped(
        &mut self,
        r: Handle<Expr>,
        rows: Handle<Expr>,
        cols: Handle<Expr>,
        g: i64,
    ) -> (Handle<Expr>, Handle<Expr>) {
        let g = self.b.i32(g as i32);
        let group = self.b.mul(g, cols);
        let index = self.b.div(r, group);
        let first = self.b.mul(index, g);
        let rest = self.b.sub(rows, first);
        let lower = self.b.compare(CompareOp::Lt, rest, g);
        let h = self.b.select(lower, rest, g);
        let within = self.b.rem(r, group);
        let down = self.b.rem(within, h);
        let row = self.b.add(first, down);
        let col = self.b.div(within, h);
        (row, col)
    }

    /// What `block_idx.d` (or `grid_dim.d`, when `grid`) reads where the lowering is: the tile's in the body of
    /// a persistent kernel, the rasterized coordinate in a kernel the compiler rasterizes, else the special
    /// register.
    pub(crate) fn block_coordinate(&mut self, d: Dim, grid: bool) -> Handle<Expr> {
        match (self.tile, grid) {
            (Some(t), false) => t.block[d.index()],
            (Some(t), true) => t.grid[d.index()],
            (None, false) => match (self.raster, d) {
                (Some([x, _]), Dim::X) => x,
                (Some([_, y]), Dim::Y) => y,
                _ => self.b.special(SpecialReg::BlockIdx(d)),
            },
            (None, true) => self.b.special(SpecialReg::GridDim(d)),
        }
    }

    /// The dimension of `block_idx` that `h` is the tile coordinate of, in a persistent kernel's body (or the
    /// rasterized coordinate of a kernel the compiler rasterizes): it ranges over the launch clause's grid as
    /// `block_idx` does.
    pub(crate) fn tile_dim(&self, h: Handle<Expr>) -> Option<Dim> {
        if let Some([x, y]) = self.raster {
            return [(x, Dim::X), (y, Dim::Y)].into_iter().find(|&(r, _)| r == h).map(|(_, d)| d);
        }
        let t = self.tile?;
        [Dim::X, Dim::Y, Dim::Z].into_iter().find(|d| t.block[d.index()] == h)
    }

    /// `block_idx.x` and `.y` in the grouped order of [`Lower::grouped`] with groups of [`RASTER_GROUP`] rows: the
    /// hardware's CTA `ctaid.x + ctaid.y * nctaid.x` (the order it starts them in) takes the tile of that rank.
    /// Where the grid has more than 2^31 - 1 CTAs (the rank would not fit an `i32`) the hardware's coordinates
    /// stay: the launch is right either way.
    pub(crate) fn grouped_block_idx(&mut self) -> [Handle<Expr>; 2] {
        let (x, y) = (self.b.special(SpecialReg::BlockIdx(Dim::X)), self.b.special(SpecialReg::BlockIdx(Dim::Y)));
        let (nx, ny) = (self.b.special(SpecialReg::GridDim(Dim::X)), self.b.special(SpecialReg::GridDim(Dim::Y)));
        let max = self.b.i32(i32::MAX);
        let limit = self.b.div(max, ny);
        let fits = self.b.compare(CompareOp::Le, nx, limit);
        let along = self.b.mul(y, nx);
        let rank = self.b.add(along, x);
        let (row, col) = self.grouped(rank, nx, ny, RASTER_GROUP);
        [self.b.select(fits, row, x), self.b.select(fits, col, y)]
    }
}
