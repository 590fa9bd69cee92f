//! What `cutec explain E01xx` prints: one entry per code the checker emits (E0100..E0199 for names and types,
//! E0200..E0299 for the layout algebra, found while folding layouts).

use cutec_diagnostics::CodeInfo;

const fn code(code: &'static str, title: &'static str, explanation: &'static str) -> CodeInfo {
    CodeInfo { code, title, explanation }
}

/// The checker's codes.
pub const CODES: &[CodeInfo] = &[
    code(
        "E0100",
        "unknown name",
        "A name is used that is not defined here: not a variable in scope, a parameter, a const generic, a dynamic \
dimension, an item of the module, an imported name or a builtin. Check the spelling (the diagnostic suggests a \
close name when there is one) or `use` the standard library module that defines it.\n\n    let y = exq(x);   // error: \
cannot find `exq`; did you mean `exp`?\n",
    ),
    code(
        "E0101",
        "unknown type",
        "A type annotation names no type. Types are the scalars `int i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 e4m3 \
e5m2 f32 f64 bool`, `Tensor<T, layout, space>` and tuples of types.\n\n    fn half(x: flaot) -> f32 { ... }   // \
error: unknown type `flaot`; write `f32`\n",
    ),
    code(
        "E0102",
        "unknown module",
        "A `use` names a module that does not exist. Only the standard library can be used, as `stdlib::<module>`, \
and its modules have no submodules.\n\n    use stdlib::reduction::block_sum;   // error: the module is \
`stdlib::reduce`\n",
    ),
    code(
        "E0103",
        "name not found in module",
        "A `use` imports a name the module does not define.\n\n    use stdlib::reduce::block_summ;   // error: \
did you mean `block_sum`?\n",
    ),
    code(
        "E0104",
        "name defined more than once",
        "Two items of a module, two parameters or const generics of one kernel, or an import and an item have the \
same name. Rename one of them. (`let` bindings may shadow each other; that is not this error.)\n\n    kernel k(x: \
f32, x: f32) ...   // error: the parameter `x` is defined more than once\n",
    ),
    code(
        "E0105",
        "variable used outside its scope",
        "A variable is used before its `let`, in its own initializer, or after the block that declared it has \
ended. Declare it earlier, or before the block and assign it inside.\n\n    let a = b + 1;   // error: cannot use \
`b` before its `let`\n    let b = 2;\n",
    ),
    code(
        "E0106",
        "assignment to an immutable binding",
        "A `let` binding, a loop variable or a parameter is assigned. Bindings are immutable unless declared `let \
mut`. Tensor elements are always assignable: `t[i] = v;` is fine for a `let t` tensor.\n\n    let s = 0.0;\n    s \
+= 1.0;          // error: make it `let mut s`\n",
    ),
    code(
        "E0107",
        "invalid assignment target",
        "Only variables and tensor elements can be assigned. A slice (`t[i, _]`), the result of a call, a constant \
or an identity tensor cannot.\n\n    t[_, 0] = 1.0;   // error: a slice; index every mode or `copy` into it\n",
    ),
    code(
        "E0108",
        "`break` or `continue` outside a loop",
        "`break` and `continue` only make sense inside `for` and `while` loops.\n\n    if done { break; }   // \
error unless inside a loop; use `return;` to leave the kernel\n",
    ),
    code(
        "E0109",
        "mismatched types",
        "A value of one type is used where another is expected: in a `let` with a type, an assignment, an argument \
of a device function, a loop bound, or a tensor operation whose element types must agree. Conversions that may \
lose information (`f32` to `bf16`, `i64` to `int`) must be written with `as`.\n\n    let h: bf16 = x * 2.0;   // \
error: expected `bf16`, found `f32`; write `(x * 2.0) as bf16`\n",
    ),
    code(
        "E0110",
        "wrong number of arguments",
        "A function or method is called with more or fewer arguments than it takes. The note shows its \
signature.\n\n    let c = ceil_div(n, 128, 2);   // error: this function takes 2 arguments but 3 were supplied\n",
    ),
    code(
        "E0111",
        "argument of the wrong kind",
        "A builtin received a value of the wrong kind: a scalar where a tensor is expected, a tensor where a layout \
is expected, and so on. The note shows the builtin's signature.\n\n    copy(x, 1.0);   // error: expected a \
tensor, found `f32`\n",
    ),
    code(
        "E0112",
        "invalid operand types",
        "An operator is applied to values it does not support: arithmetic on `bool` or on fp8 values (`e4m3`, \
`e5m2` are storage formats: convert with `as f32`), `&&` on numbers, bit operations on floats, or two types that \
do not mix without a conversion (`i32 + u32`).\n\n    let y = x_e4m3 * 2.0;   // error: write `(x_e4m3 as f32) * \
2.0`\n",
    ),
    code(
        "E0113",
        "condition is not a `bool`",
        "The condition of `if` and `while` must be a `bool`; integers are not implicitly true or false.\n\n    if \
n { ... }   // error: write `if n != 0 { ... }`\n",
    ),
    code(
        "E0114",
        "invalid cast",
        "`as` converts between numeric types (and from `bool` to numbers). Tensors, layouts and other values \
cannot be cast; convert to `bool` by comparing.\n\n    let b = x as bool;   // error: write `x != 0`\n",
    ),
    code(
        "E0115",
        "invalid `return`",
        "A `return` does not match the function: its value has the wrong type, a value is missing, or a kernel or \
a function without `-> T` returns a value. Kernels return nothing; they write results to tensors.\n\n    fn f(x: \
f32) -> f32 { return x > 0.0; }   // error: expected `f32`, found `bool`\n",
    ),
    code(
        "E0116",
        "missing `return`",
        "A function with a return type can reach the end of its body without returning. Every path must end in \
`return value;` (an `if` returns on all paths only with an `else` that returns too).\n\n    fn sign(x: f32) -> f32 \
{ if x < 0.0 { return -1.0; } }   // error: add `return 1.0;`\n",
    ),
    code(
        "E0117",
        "misplaced or missing launch clause",
        "Every kernel needs a launch clause saying how many CTAs and threads run it; a device function (`fn`) is \
called, not launched, so it has none.\n\n    kernel k(x: Tensor<f32, N:1, gmem>) { ... }   // error: add \
`launch(grid = (ceil_div(N, 256)), block = (256))`\n",
    ),
    code(
        "E0118",
        "invalid launch setting",
        "A launch clause takes `grid`, `block`, `cluster` and `smem`, each at most once, and needs `grid` and \
`block`.\n\n    launch(grid = (M), blocks = (256))   // error: unknown launch setting `blocks`; did you mean \
`block`?\n",
    ),
    code(
        "E0119",
        "invalid launch value",
        "`grid`, `block` and `cluster` take an integer or a tuple of 1 to 3 integers, `smem` an integer. They must \
be computable before the kernel starts: from integers, const generics, constants, dynamic dimensions and integer \
parameters (the cluster shape from compile-time values only), and within sm_90a's limits where they are known \
when compiling (1024 threads per CTA and 64 in `z`, a grid of 2^31 - 1 x 65535 x 65535 CTAs, 16 CTAs per \
cluster, 227 KiB of dynamic shared memory).\n\n    launch(grid = (M), block = (thread_idx.x))   // error: not known before the \
kernel starts\n",
    ),
    code(
        "E0120",
        "unknown attribute",
        "An attribute is not known, or not valid where it is written. Kernels take `warp_specialized` and \
`persistent`, device functions `inline`, `for` loops `unroll`, `unroll(N)` and `pipelined(stages = S)`.\n\n    for k in 0..n \
pipelind(stages = 4) { ... }   // error: did you mean `pipelined`?\n",
    ),
    code(
        "E0121",
        "invalid attribute use",
        "An attribute has wrong arguments, is repeated, or conflicts with another: `warp_specialized` and `inline` \
take none, `unroll` an optional positive count, `pipelined` exactly `stages = S`, `persistent` optionally \
`raster = grouped(G)`, and a loop cannot be both \
unrolled and pipelined. Counts must be compile-time constants from 1 to 4294967295. The G of `grouped(G)` is \
bounded further: the loop over tiles computes `G * (tiles along y)` in 32-bit integers, so G is at most \
2147483647 divided by the tiles along y (the launch's constant `grid.y` over the cluster's y, or 65535 over it \
where `grid.y` is known only at launch: 32768 for a cluster one CTA high).\n\n    for k in 0..n pipelined(4) { ... }   // error: \
write `pipelined(stages = 4)`\n",
    ),
    code(
        "E0122",
        "incongruent layout",
        "In a layout literal `shape:stride` the stride must have the same nesting as the shape: one stride per \
shape entry. Leave the stride out for compact column-major strides.\n\n    let l = (4, 8):(1);   // error: shape \
`(_,_)` and stride `_` are not congruent; write `(4, 8):(1, 4)` or `(4, 8)`\n",
    ),
    code(
        "E0123",
        "invalid layout entry",
        "Shapes and strides are integers: literals, const generics, constants, dimension names or integer \
expressions. A static shape entry must be positive.\n\n    let l = (4, 0):(1, 4);   // error: a layout shape entry \
must be positive\n",
    ),
    code(
        "E0124",
        "not a compile-time constant",
        "The value must be known when compiling: generic arguments (`Swizzle<3, 4, 3>`, `wgmma<...>`, `size<0>`), \
defaults of const generics, attribute counts, `const` items and the warpgroup tiling of `tiled_mma`. Use \
integers, const generics and constants; a constant must not depend on itself.\n\n    let l = size<thread_idx.x>(t); \
  // error: not known at compile time\n",
    ),
    code(
        "E0125",
        "wrong number of generic arguments",
        "A name is given more or fewer generic arguments than it takes, or takes none.\n\n    let t = \
make_tensor<f32>(32:1);   // error: `make_tensor` takes 2 generic arguments: write `make_tensor<f32, smem>(32:1)`\n",
    ),
    code(
        "E0126",
        "invalid generic argument",
        "A generic argument is of the wrong kind: an element type (`f32`, `bf16`, ...), a memory space (`gmem`, \
`smem`, `rmem`) or a constant integer was expected.\n\n    let s = make_tensor<f32, shared>(32:1);   // error: \
expected a memory space; did you mean `smem`?\n",
    ),
    code(
        "E0127",
        "wrong number of indices",
        "A tensor of known rank is indexed with more than one index but not one per mode. One index reads the \
tensor in colexicographic order; otherwise give one index (or `_`) per mode.\n\n    let x = acc[i, j, k];   // \
error if `acc` has rank 2\n",
    ),
    code(
        "E0128",
        "invalid indexing",
        "Only tensors can be indexed, and indices are integers or `_`.\n\n    let x = n[0];   // error if `n` is an \
`int`\n",
    ),
    code(
        "E0129",
        "unknown field or method",
        "A field or method does not exist on the value. `thread_idx`, `block_idx`, `block_dim` and `grid_dim` have \
fields `x`, `y`, `z`; a tiled MMA has the methods `fragment_a`, `fragment_b`, `fragment_c`, `partition_a`, \
`partition_b` and `partition_c`.\n\n    let t = thread_idx.w;   // error: no field `w`\n",
    ),
    code(
        "E0130",
        "recursion",
        "A device function calls itself, directly or through others. GPU code is inlined and has no call stack for \
recursion; write the recursion as a loop.\n\n    fn fact(n: int) -> int { return n * fact(n - 1); }   // error\n",
    ),
    code(
        "E0131",
        "not a value",
        "Something that is not a value is used as one: a type (`f32`), a memory space, a function or builtin \
function without a call, a kernel, a string.\n\n    let y = f32;   // error: to convert, write `x as f32`\n",
    ),
    code(
        "E0132",
        "not callable",
        "Something that is not a function is called: a variable, a value builtin (`thread_idx`), a type (write \
`x as f32` to convert) or a kernel (kernels are launched by the host, not called).\n\n    let y = f32(x);   // \
error: write `x as f32`\n",
    ),
    code(
        "E0133",
        "invalid `-D` definition",
        "`-D NAME=VALUE` on the command line sets a const generic of a kernel. The name must be a const parameter \
of some kernel of the program, and the value must be a literal of the parameter's type: `true` or `false` for a \
`bool`, an integer from -2147483648 to 2147483647 for an `int` (32-bit), one in the type's range for the other \
integer types. An integer is no `bool` and `true` is no integer: `-D STAGES=true` is refused rather than read as \
1. Like every bad value of a flag, this is a usage error: the exit status is 2.\n\n    cutec build gemm.cute \
-D BMM=64   # error: did you mean `BM`?\n    cutec build gemm.cute -D \
TMA_STORE=false   # a `bool` parameter\n",
    ),
    code(
        "E0134",
        "invalid tensor type",
        "`Tensor` takes three generic arguments: an element type, a layout and a memory space. Kernel parameters \
live in global memory (`gmem`); shared memory and registers are allocated with `make_tensor<T, smem>(layout)` \
and `make_fragment_like`; a kernel cannot allocate global memory.\n\n    kernel k(x: Tensor<f32, N:1, smem>) \
...   // error: kernel tensors are `gmem`\n",
    ),
    code(
        "E0135",
        "invalid dynamic dimension",
        "Names in a parameter's layout that are not const generics or constants are dynamic dimensions, read from \
the tensor argument at launch. A dimension must appear somewhere as a whole shape or stride entry so its value \
can be read, and parameter layouts cannot use values only known inside the kernel.\n\n    kernel k(x: \
Tensor<f32, (M / 2, 2):(2, 1), gmem>) ...   // error: `M` is only used inside an expression\n",
    ),
    code(
        "E0136",
        "invalid hardware atom",
        "A hardware instruction or atom is given parameters the GPU does not support: `wgmma` needs M = 64, N a \
multiple of 8 up to 256, K = 16 for f16/bf16 and 32 for fp8 operands and an f32 (or f16) accumulator; `Swizzle<B, \
M, S>` needs |S| >= B; `setmaxnreg` a multiple of 8 in 24..=256.\n\n    let a = wgmma<64, 128, 32, bf16, bf16, \
f32>;   // error: bf16 operands need K = 16\n",
    ),
    code(
        "E0137",
        "nested too deeply",
        "An expression or block is nested so deeply that the checker stops descending into it. Split it with \
`let` bindings or functions.\n\n    let x = ((((((((...))))))));\n",
    ),
    code(
        "E0138",
        "misplaced `_`",
        "`_` is CuTe's wildcard: it keeps a whole mode in a slice (`t[i, _]`), a tiler or a coordinate \
(`local_tile(a, (BM, BK), (block_idx.x, _))`). It is not a value otherwise.\n\n    let x = _ + 1;   // error\n",
    ),
    code(
        "E0139",
        "invalid named argument",
        "A call has a named argument the function does not take, or a positional argument after a named one. \
Only some builtins take named arguments (`tma_load(src, dst, multicast = 2)`).\n\n    tma_load(g, s, multicst = \
2);   // error: did you mean `multicast`?\n",
    ),
    code(
        "E0140",
        "invalid constant type",
        "Const generics are `int` or `bool`; `const` items are scalars.\n\n    kernel k<const S: f32>(...)   // error: \
use `int` or `bool`\n",
    ),
    code(
        "E0141",
        "static assertion failed",
        "The condition of a `static_assert` is false for the values the program is compiled with. The condition \
is evaluated when compiling, from literals, `const` items, const generics with a value (a default or `-D`) and \
layout queries of folded layouts (`size(l)`); while a const generic it needs has no value yet it is not checked, \
and a condition that uses a run-time value (`thread_idx.x`, a dynamic dimension) is an error (E0124). Use it to \
state what a kernel assumes of its const generics, so a wrong `-D` stops the build instead of computing a wrong \
result:\n\n    kernel softmax<const N: int, const THREADS: int = 256, const VEC: int = 4>(...) ... {\n        \
static_assert(N % (THREADS * VEC) == 0, \"N must be a multiple of THREADS * VEC\");   // error with -D N=1536\n",
    ),
    code(
        "E0142",
        "literal out of range for its type",
        "A numeric literal takes its type from where it is used (`let v: i8 = ...`, an element of an `i32` \
tensor, the other operand of `+`), and its value must fit in that type: an integer within the type's range \
(`int` is 32-bit; `-128` fits in `i8`, `128` does not), a float finite and within the largest finite value of the \
type (65504 for `f16`, 448 for `e4m3`). A literal that does not fit would be truncated or become infinite without \
a word, so it is an error.\n\n    let v: i8 = 1000;        // error: `1000` does not fit in `i8`\n    let h: f16 = \
1e5;       // error: the largest finite `f16` is 65504\n    y[0] = 4294967296;       // error with `y` an `i32` \
tensor\n",
    ),
    code(
        "E0143",
        "integer division by zero",
        "An integer `/` or `%` whose divisor is 0 when compiling (a literal, a `const`, a const generic's value, \
or arithmetic on them) is a mistake the compiler can see: at run time `x / 0` would give -1 and `x % 0` give \
`x` (cutec defines them so that no code is deleted), which is never what was meant. Float division by zero is \
defined (an infinity or a NaN) and is not reported.\n\n    w[0] = 4 / 0;            \
// error\n    let q = n % (TILE - 32); // error with TILE = 32\n",
    ),
    code(
        "E0144",
        "launch extent not positive",
        "Every extent of `grid`, `block` and `cluster` that is known when compiling (a literal, a const generic's \
value, arithmetic on them) must be at least 1, and `smem` at least 0: a launch of zero threads does nothing and \
the driver refuses it, so the build stops instead. Extents that depend on dynamic dimensions are checked by the \
runtime at each launch.\n\n    kernel k<const T: int = 256>(...) launch(grid = (1), block = (T)) { ... }   \
// error with -D T=0\n",
    ),
    code(
        "E0150",
        "constants defined through too long a chain",
        "A `const` is defined by another, which is defined by another, and so on, deeper than the checker follows (a few hundred levels, counting the nesting of the expressions on the way). Each link is checked from the one before it, so the chain is bounded like a nested expression. Define the constants from a common base instead of each from the previous one:\n\n    const C0: int = C1 + 1;   // C1 = C2 + 1, C2 = C3 + 1, ... a thousand times: error\n    const C0: int = BASE + 1000;   // ok\n",
    ),
    code(
        "E0160",
        "compile-time integer overflow",
        "An arithmetic expression of compile-time integers (literals, constants, const generics) has a value outside \
the range of 64-bit signed integers, -9223372036854775808 to 9223372036854775807. Nothing later could compute it \
either. The note gives the values of the const generics involved: a value given with `-D` is often the cause.\n\n    \
kernel copy<const THREADS: int = 256, const VEC: int = 4>(...)\n    let gx = local_tile(x, THREADS * VEC, \
block_idx.x);   // with -D VEC=4611686018427387904: error, 256 * 2^62 overflows\n",
    ),
    code(
        "E0161",
        "copy between tensors of different sizes",
        "`copy(src, dst)` copies element i of `src` to element i of `dst`, so the two tensors need the same number of \
elements. Both sizes are known at compile time here and they differ. Copy a tile or slice of the larger one that \
has the size of the smaller (`local_tile(t, n, i)`, `t[_, i]`).\n\n    let a = make_tensor<f32, rmem>((4, 2));\n    \
let b = make_tensor<f32, rmem>(4);\n    copy(a, b);          // error: 8 elements to 4\n    copy(a[_, 0], b);    // \
ok: column 0 of `a` has 4 elements\n",
    ),
    code(
        "E0162",
        "name imported twice",
        "A `use` imports the same name from the same module twice, in one list or in two `use` items. The second \
import does nothing; it is usually a slip for another name. Remove it, or write the name that was meant.\n\n    use \
stdlib::reduce::{block_max, block_max};   // error: `block_max` is imported twice\n    use \
stdlib::reduce::{block_max, block_sum};   // ok\n",
    ),
    code(
        "E0170",
        "a grid that is not whole clusters",
        "A kernel launched in clusters of `(cx, cy, cz)` CTAs needs a grid whose extent along each dimension is a \
multiple of the cluster's: the CUDA driver launches whole clusters only. When the grid is known at compile time \
the compiler refuses it here; a grid computed from dynamic dimensions is checked by the runtime, which refuses the \
launch and says which grid it computed.\n\n    launch(grid = (3), block = (128), cluster = (2))   // error: \
3 CTAs are not whole clusters of 2\n    launch(grid = (ceil_div(M, 128) * 2), block = (128), cluster = (2))   // ok\n",
    ),
    code(
        "E0200",
        "layout shapes or strides do not divide",
        "CuTe's algebra composes, divides and reshapes layouts mode by mode, and needs the quantities it splits \
to divide one another: when `composition(A, B)` walks `A` with `B`'s strides and sizes, each stride and size of \
`B` must divide a shape of `A` or be a multiple of it (CuTe's `shape_div`); `tile_to_shape` needs the target to be \
a multiple of the atom; `upcast<N>` needs N to divide the layout's shapes and strides. The message names the two \
quantities and the layout. Pick a tile that divides the layout's modes (or a multiple of them).\n\n    let a = \
(4, 4):(1, 8);\n    let b = composition(a, 3:3);   // error: after stride 3, 2 elements are left: 3 and 2 do not divide\n",
    ),
    code(
        "E0201",
        "layout ranks do not match",
        "A tuple tiler has one entry per mode of the layout it tiles, a stride has the nesting of its shape, a \
profile at most the layout's modes. Use `_` in a tiler to keep a mode whole.\n\n    let d = logical_divide((8, \
8):(1, 8), (4, 2, 2));   // error: the tiler has 3 modes, the layout 2\n",
    ),
    code(
        "E0202",
        "integer overflow in the layout algebra",
        "A size, stride or index of a folded layout does not fit in a 64-bit integer. Products multiply sizes \
(`logical_product(A, B)` has size(A) * size(B) elements), so large operands overflow quickly.\n\n    let p = \
logical_product((1000000000, 1000000000):(1, 1000000000), 1000000000:1);   // error: overflow\n",
    ),
    code(
        "E0203",
        "layout is not injective",
        "`complement` (and `left_inverse`, `logical_divide` and the products, which use it) needs a layout that maps \
distinct coordinates to distinct indices, with modes that nest when sorted by stride: each stride at least the \
previous mode's size times its stride.\n\n    let c = complement((2, 2):(1, 1));   // error: (2,2):(1,1) maps (1,0) \
and (0,1) to 1\n",
    ),
    code(
        "E0204",
        "mode index out of range",
        "`get<i>`, `select<i, ...>`, `size<i>` and the other mode queries name top-level modes 0..rank (and \
sub-modes 0..rank of the mode for a deeper index). This is found when the layout folds, where the type did not \
know the rank.\n\n    let m = get<0, 2>(((2, 2), 4):((1, 2), 4));   // error: mode 0 has 2 sub-modes\n",
    ),
    code(
        "E0205",
        "invalid argument to a layout operation",
        "A layout operation was given a value it is not defined for: a swizzled layout where a plain one is \
needed (`right_inverse`, `left_inverse`), a factor that is not positive, a negative stride where the operation \
needs a positive one, or dynamic integers so large that an integer would hold more than 1024 operations (a \
product over hundreds of dynamic modes). Apply the operation before composing the swizzle.\n\n    let s = composition(Swizzle<3, 3, 3>, \
(8, 64):(64, 1));\n    let r = right_inverse(s);   // error: not defined for a swizzled layout\n",
    ),
    code(
        "E0206",
        "index out of range",
        "A constant index is beyond the extent of a tensor whose layout is known at compile time: a mode of extent \
n takes indices 0..n, a single (linear) index 0..size.\n\n    let r = make_tensor<f32, rmem>((4, 8));\n    r[4, 0] = \
1.0;   // error: mode 0 has extent 4\n",
    ),
    code(
        "E0207",
        "wrong number of indices",
        "A tensor is indexed with one index (read in colexicographic order) or one index per top-level mode of its \
layout. This is found when the layout folds, where the type did not know the rank.\n\n    let s = make_tensor<f32, \
smem>(coalesce((4, 8):(8, 1)));\n    s[1, 2, 3] = 0.0;   // error: the layout has 2 modes\n",
    ),
    code(
        "E0208",
        "swizzle maps outside the layout",
        "`composition(Swizzle<B, M, S>, L)` xors bits of each offset of `L`; an offset in the last, partial block of \
`L`'s codomain can be sent beyond `cosize(L)`, outside the memory the layout describes. Make the codomain a whole \
number of 2^(M+B)-element blocks, or use a swizzle with fewer bits.\n\n    let s = composition(Swizzle<3, 3, 3>, (8, \
60):(60, 1));   // error: offset 448 goes to 504, past 480\n",
    ),
];
#[cfg(test)]
mod tests {
    use super::CODES;

    #[test]
    fn codes_are_sorted_unique_and_in_range() {
        for w in CODES.windows(2) {
            assert!(w[0].code < w[1].code, "{} before {}", w[0].code, w[1].code);
        }
        for c in CODES {
            assert!(c.code >= "E0100" && c.code <= "E0299", "{} out of range", c.code);
            assert!(c.explanation.contains("\n    "), "{} needs an example", c.code);
        }
    }
}
