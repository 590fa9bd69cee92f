//! The codes the driver reports (E0400..E0449): reading and writing files, the command line, `cutec layout` and
//! `cutec run`. Each code belongs to one class, which decides the exit status: [`exit_status`].

use cutec_diagnostics::{CodeInfo, Diagnostic};

/// A file could not be read.
pub const READ_FAILED: &str = "E0400";
/// A file over the limit of a source file (the lexer's code, reported by the driver before reading more).
pub const SOURCE_TOO_LARGE: &str = "E0008";
/// `cutec build` has nothing to compile or a tool it needs failed.
pub const BUILD_CANNOT_PROCEED: &str = "E0401";
/// A bug in cutec reported as an error rather than a crash.
pub const INTERNAL: &str = "E0402";
/// An argument the command line does not accept.
pub const BAD_ARGUMENT: &str = "E0403";
/// Options that contradict each other, or one that would be ignored.
pub const CONFLICTING_OPTIONS: &str = "E0404";
/// `--kernel` names no kernel of the file or the manifest.
pub const UNKNOWN_KERNEL: &str = "E0405";
/// Where `-o` says the outputs go is refused (over the input, several stages in one file).
pub const OUTPUT_REFUSED: &str = "E0406";
/// A name given twice (`-D N=1 -D N=2`).
pub const GIVEN_TWICE: &str = "E0407";
/// An output file (or standard output) could not be written.
pub const WRITE_FAILED: &str = "E0408";
/// `cutec layout`: the expression is not in CuTe's notation.
pub const LAYOUT_SYNTAX: &str = "E0409";
/// `cutec layout --table/--svg`: the value is not something that can be drawn that way.
pub const NOT_DRAWABLE: &str = "E0410";
/// `cutec tune`: a `--space`, `--shape`, `--flops` or `--reference` that does not fit the kernel.
pub const TUNE_OPTIONS: &str = "E0411";
/// `cutec tune`, `build --tuning`, `run --tuning`: the tuning file is not one.
pub const TUNING_FILE: &str = "E0412";
/// `cutec run`: the manifest is not a valid manifest.
pub const MANIFEST_INVALID: &str = "E0420";
/// `cutec run`: a `.npy` file is malformed or does not fit its parameter.
pub const NPY_INVALID: &str = "E0421";
/// `cutec run`: the options do not fit the kernel.
pub const RUN_OPTIONS: &str = "E0422";
/// `cutec run`: the module cannot be loaded on the GPU.
pub const MODULE_LOAD: &str = "E0423";
/// `cutec run`: the runtime's check of the arguments against the manifest failed.
pub const ARGUMENT_REJECTED: &str = "E0424";
/// `cutec run`: the GPU or its driver reported an error.
pub const GPU_ERROR: &str = "E0425";
/// `cutec run`: the tensors do not fit in the device's free memory.
pub const OUT_OF_DEVICE_MEMORY: &str = "E0426";
/// A note of `build --tuning`/`run --tuning`: which entry of the tuning file is used, or that none is.
pub const TUNING_USED: &str = "E0441";
/// A warning: ptxas reported a coded advisory (`setmaxnreg` ignored, wgmma serialized) assembling the PTX.
pub const PTXAS_ADVISORY: &str = "E0440";

/// The checker's code for a `-D` that sets no const generic or gives one a value its type cannot hold: the value
/// of a flag, so a usage error like a `--dim` value `cutec run` refuses.
const BAD_DEFINE: &str = "E0133";

/// Codes that say the command line was used wrongly: a flag or a flag's value (`-D`, `--dim`, `--scalar`) that does
/// not fit (exit status 2); every other error is a problem of the input, a file or a program, or of the machine
/// (exit status 1).
const USAGE: &[&str] = &[
    BAD_ARGUMENT,
    CONFLICTING_OPTIONS,
    UNKNOWN_KERNEL,
    OUTPUT_REFUSED,
    GIVEN_TWICE,
    RUN_OPTIONS,
    BAD_DEFINE,
    TUNE_OPTIONS,
];

/// Whether `code` is a usage error (exit status 2).
pub fn is_usage(code: &str) -> bool {
    USAGE.contains(&code)
}

/// The exit status of a run that reported `diags`: 0 without errors, 2 if any error is a usage error, else 1.
pub fn exit_status(diags: &[Diagnostic]) -> u8 {
    let mut errors = diags.iter().filter(|d| d.is_error()).peekable();
    if errors.peek().is_none() {
        0
    } else if errors.any(|d| is_usage(d.code)) {
        2
    } else {
        1
    }
}

const fn code(code: &'static str, title: &'static str, explanation: &'static str) -> CodeInfo {
    CodeInfo { code, title, explanation }
}

/// Codes the driver itself reports (E0400..E0449).
pub const DRIVER_CODES: &[CodeInfo] = &[
    code(
        READ_FAILED,
        "a file could not be read",
        "The compiler could not read a file named on the command line: a source file, a module or manifest given \
to `cutec run`, an `--input` `.npy` file, or the `--eval-file` of `cutec layout`. It does not exist, it is not \
readable, or (for text files) it is not valid UTF-8. Check the path.\n\n    cutec check examples/copy.cute\n",
    ),
    code(
        BUILD_CANNOT_PROCEED,
        "the build cannot proceed",
        "`cutec build` found nothing it can compile or a tool it needs failed: the file has no `kernel` item, or \
`--emit cubin` was asked for and `ptxas` could not be found or failed.\n\n    cutec build --emit cubin \
examples/copy.cute   # needs ptxas: bash scripts/install-deps.sh, or set CUTEC_PTXAS\n",
    ),
    code(
        INTERNAL,
        "internal compiler error",
        "A stage after checking (lowering, a pass of the pipeline, or LLVM) rejected what the stage before it \
produced. This is a bug in cutec, not in your program: please report it with the input file. Where possible cutec \
reports such bugs as this error rather than crashing.\n",
    ),
    code(
        BAD_ARGUMENT,
        "invalid command-line argument",
        "The command line has an option cutec does not know, an option without its value, or a value it cannot \
use: `-D N=99999999999999999999` (const generics are 64-bit signed integers), `-O 7`, `--dump-after` naming no \
pass. The message says which argument and why; `cutec help COMMAND` lists the options. This is a usage error: the \
exit status is 2.\n\n    cutec build --dump-after fold examples/copy.cute   # error: no pass named `fold`\n    \
cutec build --print-passes                          # lists the passes\n",
    ),
    code(
        CONFLICTING_OPTIONS,
        "options that conflict or would be ignored",
        "Two options contradict each other, or one would have no effect in this combination. cutec refuses rather \
than silently ignore an option the user wrote: `--tv` only labels the cells of `--svg`, `--table` and `--svg` draw \
one expression and not the lines of `--eval-file`, `--dump-after` shows the IR and so needs a stage that builds \
it, `--manifest` and `-D` belong to a compiled module and a `.cute` file respectively, `--warmup` and `--iters` \
only count `--bench` launches. Drop the option, or add the one it needs. The exit status is 2.\n\n    cutec layout \
'(4,2):(2,1)' --tv 2,4                 # error: --tv needs --svg\n    cutec layout '(4,2):(2,1)' --svg tv.svg --tv \
2,4   # ok\n",
    ),
    code(
        UNKNOWN_KERNEL,
        "no kernel of that name",
        "`--kernel NAME` of `cutec build` or `cutec run` names no kernel of the file (or of the module's manifest). \
The message lists the kernels there are. The exit status is 2.\n\n    cutec build examples/copy.cute --kernel cpy   \
# error: no kernel `cpy`; the kernels are: copy\n",
    ),
    code(
        OUTPUT_REFUSED,
        "output refused",
        "Where `-o` says the outputs of `cutec build` go cannot hold them: `-o -` (standard output) takes one \
stage, `-o FILE` takes one stage (several are written into a directory, `-o DIR`), and no output may be written \
over the input file. Nothing is written. The exit status is 2.\n\n    cutec build k.cute --emit ptx,manifest -o \
out/   # writes out/k.ptx and out/k.json\n",
    ),
    code(
        GIVEN_TWICE,
        "an option given twice for one name",
        "The same name is given two values on the command line (`-D N=1024 -D N=4096`, or `--dim`, `--input`, \
`--output` or `--scalar` twice for one name). cutec does not guess which one is meant. Give each name once. The \
exit status is 2.\n",
    ),
    code(
        WRITE_FAILED,
        "an output could not be written",
        "A file cutec was asked to write (an output of `cutec build`, an `--output` `.npy` of `cutec run`, an \
`--svg` picture), the directory that holds it, or standard output could not be written: the directory does not \
exist and cannot be created, the disk is full, or permission is denied. The message names the file and the \
operating system's reason.\n",
    ),
    code(
        LAYOUT_SYNTAX,
        "malformed layout expression",
        "The expression given to `cutec layout` is not in CuTe's notation. A layout is `shape:stride` with integer \
tuples (`(4,8):(8,1)`); a shape alone has compact column-major strides; operations are calls \
(`composition(A, B)`, `get<1>(L)`). The label points at the first character that does not fit.\n\n    cutec layout \
'composition((6,2):(8,2), (4,3):(3,1))'\n",
    ),
    code(
        NOT_DRAWABLE,
        "the value cannot be drawn",
        "`cutec layout --table` and `--svg` draw layouts: the expression's value must be a layout (or, for \
`--table` and a plain `--svg`, a swizzled layout), not an integer or a tuple; with `--tv M,N`, a plain \
thread-value layout. Ask for the layout itself, e.g. `make_layout(...)` rather than `size(...)`.\n",
    ),
    code(
        TUNE_OPTIONS,
        "the tuning options do not fit the kernel",
        "`cutec tune` sweeps the kernel's const generic parameters (`const BN: int = 256`) over the values of \
`--space NAME=V1,V2,...` for each `--shape` (the values of the kernel's dynamic dimensions, `--shape \
M=4096,N=4096,K=4096`). An option names something that is not such a parameter (a dynamic dimension, a tensor, a \
typo: the help says the closest name), gives a value of the wrong type or the same value twice, leaves a dynamic \
dimension out of a shape, or asks for more configurations than a sweep takes; or `--flops` names no dimension, or \
`--reference` names no output. The label points at the option as typed. Nothing was compiled. The exit status \
is 2.\n\n    cutec tune examples/gemm_sm90.cute --shape M=4096,N=4096,K=4096 --space BN=128,256 --space \
STAGES=3,4\n",
    ),
    code(
        TUNING_FILE,
        "the tuning file cannot be used",
        "The tuning file (`cutec tune -o FILE`, `cutec build --tuning FILE`, `cutec run --tuning FILE`) cannot be \
read, is not JSON, or is not a tuning file of a version this cutec reads (`{\"version\": 1, \"entries\": [...]}`, \
each entry with `source_hash`, `kernel`, `device`, `shape`, `consts`, `time_us` and `default_time_us`). \
`cutec tune` checks the file it will merge into before it compiles anything, so a long sweep never ends on a file \
it cannot write. Remove or fix the file, or give another with `-o`.\n",
    ),
    code(
        MANIFEST_INVALID,
        "invalid manifest",
        "The manifest (the JSON file `cutec build` writes next to the module, or the one given with `--manifest`) \
is not a manifest this version of cutec understands: malformed JSON, a missing field, or an unknown format \
version. Rebuild the module with `cutec build`, which writes the two together.\n",
    ),
    code(
        NPY_INVALID,
        "invalid .npy input",
        "An `--input NAME=FILE.npy` of `cutec run` is not a `.npy` file cutec can use: a malformed header, a \
header that promises more data than the file holds, Fortran order, or a numpy dtype that does not fit the \
parameter's element type. Save the array in C order with the parameter's dtype (`np.ascontiguousarray(a, \
dtype=np.float32)`); `bf16` and fp8 parameters also take `float32` arrays.\n",
    ),
    code(
        RUN_OPTIONS,
        "the options do not fit the kernel",
        "An option of `cutec run` names a parameter or dimension the kernel does not have, gives a scalar a value \
of the wrong type, contradicts an input file (`--dim M=4` with an input of 5 rows), leaves a dynamic \
dimension without a value, or gives a dimension a value the kernel cannot be launched with (`--dim N=0` that \
makes an empty grid, `--dim N=-1`, a value that is not the multiple the kernel's `static_assert` requires: the \
launch check of E0424, about a flag's value). The message names the parameter and lists what the kernel has; the \
label points at the option. Nothing was launched. The exit status is 2.\n\n    cutec run softmax.ptx --kernel \
softmax --dim M=4096 --scalar scale=0.5\n",
    ),
    code(
        MODULE_LOAD,
        "the module cannot be loaded",
        "`cutec run` could not load the module on the GPU: the PTX is not valid text, the binary is neither a \
cubin nor a fatbin, it was compiled for another architecture than the device's, the driver rejected it (its log \
is shown), or a kernel of the manifest is missing from it. Rebuild the module and its manifest together with \
`cutec build` for this device.\n",
    ),
    code(
        ARGUMENT_REJECTED,
        "an argument does not fit the kernel's manifest",
        "Before launching, the runtime checks every argument against the manifest: element type, rank, shapes \
shared through dynamic dimensions, alignment, the launch configuration. One did not fit; the message names the \
parameter, and the label the input file it was made from. Nothing was launched. Give an input of the shape and \
dtype the manifest says (`cutec build` prints it). When the value of a `--dim` is what does not fit, the error is \
E0422, a usage error, instead. Two checks come from the kernel's code: a dimension must be a multiple of what the kernel requires (its \
`static_assert(M % 128 == 0)`, the manifest's `requires`), and no extent or offset may pass 2^31 - 2^24 \
elements, since kernels index with 32-bit integers. A kernel that reads a tensor through a TMA tensor map (the \
manifest's `tensor_maps`) also needs what the hardware needs of it: every stride but the innermost a multiple of \
16 bytes (a row of 1001 f32 elements is 4004 bytes: pad the rows to a multiple of 4 elements) and below 2^40 \
bytes, every extent of the map's modes 1 to 2^32, and a 16-byte-aligned address; the message names the map, the \
tensor and its mode.\n",
    ),
    code(
        GPU_ERROR,
        "the GPU reported an error",
        "The CUDA driver reported an error while `cutec run` prepared, launched or synchronized the kernel: no \
driver or device, out of memory, or a fault during the kernel (an illegal address is usually an access out of \
bounds). The message names the driver call and the driver's error name. Run the kernel under \
`compute-sanitizer` to find a faulting access.\n",
    ),
    code(
        OUT_OF_DEVICE_MEMORY,
        "the tensors do not fit in device memory",
        "`cutec run` makes every tensor argument on the device before the launch, and checks first that they fit \
in the device's free memory. They do not: the message gives what they need, what is free, and each tensor's \
size. Nothing was allocated. Give smaller dimensions, or free the memory other processes hold (`nvidia-smi`).\n",
    ),
    code(
        PTXAS_ADVISORY,
        "ptxas ignored or weakened what the kernel asks for",
        "A warning of `cutec build --emit cubin`: ptxas assembled the PTX but printed a coded advisory, which means \
the machine code does not do what the program states. The advisories that matter most: C7507 and C7508, a \
`setmaxnreg` ignored (a role's `registers` is below what its code keeps live, or the registers at entry are not \
known), so the role runs with another register budget than the one written; C7509, C7510, C7514 and C7515, \
wgmma instructions serialized (each waits for the previous one), which costs most of the tensor cores' speed. The \
kernel is still correct. For C7507, raise the role's `registers` (the compiler refuses only budgets below the \
accumulator's registers, E0333, since ptxas's exact need is known only to ptxas); for the wgmma advisories, see \
the book's Hopper chapters.\n",
    ),
    code(
        TUNING_USED,
        "which tuned configuration is used",
        "A note of `cutec build --tuning FILE --shape ...` and `cutec run --tuning FILE`: the entry of the tuning \
file for this source (by the hash of its text), kernel, device and shape, whose const values are compiled in, \
or that no entry matches exactly and the source's defaults are used (with the shapes and devices the file has \
for this kernel). A `-D` given on the command line overrides the entry's value of that parameter. Tune the \
missing shape with `cutec tune`.\n",
    ),
];
