//! The error codes of the lowering and the IR (`E0300`..`E0399`), with what `cutec explain` prints.

use cutec_diagnostics::CodeInfo;

/// A construct the checker accepts but code generation v0 cannot compile yet.
pub const UNSUPPORTED: &str = "E0300";
/// A register tensor (a fragment) indexed by a value not known at compile time (a warning: it still works, maybe
/// in local memory).
pub const DYNAMIC_FRAGMENT_INDEX: &str = "E0301";
/// A layout the lowering cannot turn into address arithmetic (a dynamic stride where a static one is needed...).
pub const UNSUPPORTED_LAYOUT: &str = "E0302";
/// A device function that cannot be inlined (recursion, a `return` before the end).
pub const NOT_INLINABLE: &str = "E0303";
/// `copy` between tensors of different sizes.
pub const COPY_SIZE_MISMATCH: &str = "E0304";
/// A value the lowering needs at compile time is only known at run time.
pub const NOT_CONSTANT: &str = "E0305";
/// A scheduling attribute (`pipelined`, `warp_specialized`) no pass implements yet.
pub const NOT_IMPLEMENTED: &str = "E0306";
/// The kernel's static shared memory is over sm_90a's 48 KiB per block.
pub const TOO_MUCH_SHARED: &str = "E0307";
/// Unrolling a loop would make more statements than the budget (`passes::unroll::MAX_STMTS`).
pub const UNROLL_TOO_LARGE: &str = "E0320";
/// A kernel has more statements after inlining and unrolling than the budget.
pub const KERNEL_TOO_LARGE: &str = "E0321";
/// Blocks nest deeper than the lowering follows once device functions are inlined.
pub const NESTING_TOO_DEEP: &str = "E0322";
/// The IR failed validation: a compiler bug.
pub const INTERNAL: &str = "E0399";

pub const CODES: &[CodeInfo] = &[
    CodeInfo {
        code: UNSUPPORTED,
        title: "not supported yet by codegen v0",
        explanation: "The program is valid, but this construct cannot be compiled to PTX yet: code generation v0 \
covers the slice of the language the first examples need (global tensors, tiling and slicing, register \
fragments, static shared memory, copies, loops, branches, warp shuffles and barriers). Rewrite the code with \
those, or wait for a later version.",
    },
    CodeInfo {
        code: DYNAMIC_FRAGMENT_INDEX,
        title: "register tensor indexed at run time",
        explanation: "A register tensor (made by `make_fragment_like` or `make_tensor<_, rmem>`) is sure to live in \
registers only if every index into it is known at compile time: registers cannot be addressed at run time, so \
ptxas may place a tensor indexed with a run-time value in local memory (off-chip, much slower), unless it can \
remove the run-time indexing itself. Index it with constants or with the variable of a loop whose bounds are \
constants, which the compiler unrolls fully (say `unroll` to make it explicit):\n\n    for i in 0..size(frag) \
unroll { frag[i] = 0.0; }",
    },
    CodeInfo {
        code: UNSUPPORTED_LAYOUT,
        title: "layout not supported by codegen v0",
        explanation: "The layout of this tensor cannot be turned into address arithmetic yet. v0 supports layouts \
whose strides are static except in the modes of kernel parameters (dynamic dimensions), and slices or tiles of \
them. Make the offending shape or stride a compile-time constant.",
    },
    CodeInfo {
        code: NOT_INLINABLE,
        title: "device function cannot be inlined",
        explanation: "Device functions are inlined into the kernel that calls them. A function that calls itself, \
directly or not, cannot be inlined, and v0 requires `return` to be the last statement of a function. Restructure \
the function so that it returns at its end, for example by assigning to a `let mut` result.",
    },
    CodeInfo {
        code: COPY_SIZE_MISMATCH,
        title: "copy between tensors of different sizes",
        explanation: "`copy(src, dst)` copies element i of `src` to element i of `dst` for every i: both tensors \
must have the same number of elements. Slice or tile them so their sizes agree.",
    },
    CodeInfo {
        code: NOT_CONSTANT,
        title: "value must be known at compile time",
        explanation: "This value decides the shape of the generated code (a tile size, a layout, the size of a \
register or shared-memory tensor), so it must be a compile-time constant: a literal, a `const`, a const \
generic parameter, or arithmetic on them.",
    },
    CodeInfo {
        code: NOT_IMPLEMENTED,
        title: "scheduling attribute not implemented yet",
        explanation: "The program asks for a schedule that the pass pipeline cannot produce yet: \
`pipelined(stages = S)` on a loop (software pipelining: copies issued S - 1 iterations ahead into a ring of \
shared-memory stages) or `#[warp_specialized]` on a kernel (producer and consumer warpgroups). The compiler \
reports it instead of ignoring the attribute, since the kernel would not have the performance it asks for. \
Remove the attribute for now; the loop or kernel then runs unscheduled.",
    },
    CodeInfo {
        code: TOO_MUCH_SHARED,
        title: "static shared memory over 48 KiB",
        explanation: "A block may declare at most 48 KiB (49152 bytes) of static shared memory on sm_90a; more \
must be dynamic shared memory, requested by the launch (`smem = ...`, up to 227 KiB). The message gives the \
kernel's total, each `make_tensor<_, smem>` aligned as it asks; the label is at the allocation that goes over.\n\n    \
let s = make_tensor<f32, smem>((128, 128):(128, 1));   // 64 KiB: error\n",
    },
    CodeInfo {
        code: UNROLL_TOO_LARGE,
        title: "loop too large to unroll",
        explanation: "A loop marked `unroll` (or `unroll(N)`) is copied once per iteration, and the copies make more statements than the compiler's budget of 65536 per kernel (nested statements count, and so do the copies made by unrolling an inner loop). Past that size the back end takes minutes and the code no longer fits the instruction cache, so the compiler stops rather than hang. The message gives the number of copies and the size of the body. Unroll fewer iterations (`unroll(4)`), unroll only the inner loop, or drop `unroll`:\n\n    for i in 0..100000 unroll { ... }       // error: 100000 copies\n    for i in 0..100000 unroll(8) { ... }    // 8 copies per trip of the loop\n",
    },
    CodeInfo {
        code: KERNEL_TOO_LARGE,
        title: "kernel too large",
        explanation: "The kernel has more than 65536 statements once device functions are inlined and loops marked `unroll` are unrolled (a source statement makes a few). Code that large takes the back end minutes and does not fit the instruction cache. Put repeated work in a loop, or split the kernel.",
    },
    CodeInfo {
        code: NESTING_TOO_DEEP,
        title: "blocks nest too deeply after inlining",
        explanation: "Device functions are inlined where they are called, so a call from deep inside nested blocks \
(`if`, `for`, `while`, `{ }`) puts the function's own blocks deeper still. Past 512 levels, counted through every \
inlined call, the compiler stops rather than risk overflowing its stack. The label is at the first block past \
the limit. Flatten the nesting (early `return`s are not available, but conditions can be combined with `&&`), or \
call the function from a shallower place:\n\n    if a { if b { if c { f(x); } } }   // the same as\n    \
if a && b && c { f(x); }\n",
    },
    CodeInfo {
        code: INTERNAL,
        title: "internal compiler error: invalid IR",
        explanation: "The compiler produced intermediate code that its own validator rejects. This is a bug in \
cutec; please report it with the program that triggers it.",
    },
];
