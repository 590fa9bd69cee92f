//! The lowering's own codes beside the IR's table ([`cutec_ir::codes`]): errors only the lowering can find,
//! because they need the source (a constant index and the tensor's allocation, a tiled MMA and the block that
//! runs it, a multicast count and the kernel's cluster). `cutec explain` reads [`CODES`] with the other tables.

use cutec_diagnostics::CodeInfo;

/// A constant index outside a shared-memory tensor.
pub const SHARED_INDEX: &str = "E0353";
/// A tiled MMA over more than one warpgroup run by another number of warpgroups.
pub const MMA_WARPGROUPS: &str = "E0354";
/// `tma_load(.., multicast = n)` with a count that does not fit the kernel's cluster or the tile.
pub const MULTICAST_COUNT: &str = "E0355";

pub const CODES: &[CodeInfo] = &[
    CodeInfo {
        code: SHARED_INDEX,
        title: "an index outside a shared-memory tensor",
        explanation: "A shared-memory tensor (`make_tensor<T, smem>(layout)`, or the tile of a `tma_load`) is an \
allocation of a fixed number of elements, and an access past them is not an error the hardware reports: it reads \
or writes another tensor's shared memory, or faults. Where the index of an access is a constant (a literal, a \
const generic, a slice at a constant coordinate), the compiler checks it against the allocation the tensor views \
and refuses an element outside it; the label is at the access, and the message names the element and the \
allocation's size. (A register tensor's index is checked the same way, E0323.)\n\n    let s = \
make_tensor<f32, smem>(128);\n    s[127] = 0.0;   // ok: the last element\n    s[128] = 0.0;   // error: element \
128 of 128 elements\n",
    },
    CodeInfo {
        code: MMA_WARPGROUPS,
        title: "a tiled MMA run by another number of warpgroups",
        explanation: "A tiled MMA over W warpgroups (`tiled_mma(atom, (WM, WN))`, W = WM * WN) splits its tile \
among W warpgroups of 128 threads, by `thread_idx.x / 128`: it is run by exactly W whole warpgroups. Those are \
the threads of its `role`, else the block's (less the producer warpgroup of a `warp_specialized` kernel), and the \
block must be one-dimensional, a compile-time constant and a multiple of 128 threads. A block of 96 threads, of \
(128, 2) threads or of 4 warpgroups for a tiled MMA over 2 is refused, with the size the rule asks for.\n\n    \
kernel k(..) launch(grid = (1), block = (256)) { let mma = tiled_mma(atom, (2, 1)); ... }   // ok: 2 warpgroups\n",
    },
    CodeInfo {
        code: MULTICAST_COUNT,
        title: "a multicast count that does not fit the cluster",
        explanation: "`tma_load(g, layout, multicast = n)` loads one tile for all the CTAs of the kernel's \
cluster: each of the n CTAs copies its own n-th of the tile's rows into the shared memory of every CTA of the \
cluster. So n is a compile-time constant and the number of CTAs of the cluster (`cluster = (2, 1)`: n = 2), or 1 \
in a kernel without a cluster (a plain copy), and the tile is 2-D with a number of rows that n divides. A \
written-out mask of CTAs goes with `bar = b` (`tma_load(g, s, bar = b, multicast = mask)`, E0332).\n\n    \
launch(grid = (8, 8), block = (128), cluster = (2, 1))\n    let a = tma_load(ga, sa, multicast = 2);   // ok\n    \
let b = tma_load(gb, sb, multicast = 4);   // error: the cluster has 2 CTAs\n",
    },
];
