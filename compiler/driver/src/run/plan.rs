//! The GPU-free half of `cutec run`: the options checked against the kernel's manifest entry, the input files
//! read, each tensor argument's source and shape decided, and the runtime's launch check run on stand-ins.
//!
//! Every error names the options it is about (spelled as typed, `--dim N=0`), so the diagnostic points at them.
//! Its class follows from what is to blame: an option or the value of one (`--dim`, `--scalar`, a name the
//! kernel does not have) is a usage error, exit status 2; an input file the kernel cannot take is an error in the
//! input, exit status 1.

use super::data::{npy_to_elements, read_npy};
use super::{RunError, RunOptions};
use crate::paths::same_file;
use cutec_manifest::{Access, DType, DimComponent, Entry, Kernel, Param};
use cutec_runtime::{ArgError, RuntimeError, ScalarValue};
use std::path::PathBuf;

/// Command-line options an error is about, each spelled as typed (`--dim N=0`) with its label; the first is the
/// primary one.
pub type Options = Vec<(String, String)>;

/// How one tensor argument is made.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Source {
    /// Elements (in the parameter's dtype, little-endian) read from a file.
    File {
        shape: Vec<usize>,
        bytes: Vec<u8>,
    },
    Random {
        shape: Vec<usize>,
    },
    Poison {
        shape: Vec<usize>,
    },
}

impl Source {
    pub(crate) fn shape(&self) -> &[usize] {
        match self {
            Source::File { shape, .. } | Source::Random { shape } | Source::Poison { shape } => shape,
        }
    }
}

/// Where a dynamic dimension's value comes from: what an error about it blames.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum DimFrom {
    /// `--dim NAME=VALUE`.
    Flag,
    /// The extent or stride `of[mode]` of the array in `param`'s input file.
    Input { param: String, of: DimComponent, mode: usize },
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DimValue {
    pub name: String,
    pub value: i64,
    pub from: DimFrom,
}

/// Each parameter's argument (`None` for scalars) and the value of each dynamic dimension that has one.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    pub sources: Vec<Option<Source>>,
    pub dims: Vec<DimValue>,
    /// For each tensor whose layout is a permutation of a compact one other than row-major (a column-major
    /// matrix), its element strides: the run stores it in that order (`cutec_runtime::strided`).
    pub strides: Vec<Option<Vec<i64>>>,
}

/// The element strides `t`'s layout gives its `shape` under `dims`, when they are known (flat modes, every
/// dimension bound), differ from row-major, and lay the shape out compactly in another order.
fn permuted_strides(t: &cutec_manifest::TensorParam, shape: &[usize], dims: &[DimValue]) -> Option<Vec<i64>> {
    let mut strides = Vec::new();
    for mode in t.layout.stride.modes() {
        strides.push(match mode.as_int()? {
            Entry::Int(v) => *v,
            Entry::Dim(name) => dims.iter().find(|d| d.name == *name)?.value,
        });
    }
    let extents: Vec<i64> = shape.iter().map(|&e| i64::try_from(e).unwrap_or(i64::MAX)).collect();
    let row_major = cutec_runtime::TensorDesc::row_major_strides(&extents)?;
    let differs = strides.iter().zip(&row_major).zip(shape).any(|((a, b), &e)| e > 1 && a != b);
    (differs && cutec_runtime::strided::is_permuted_compact(shape, &strides)).then_some(strides)
}

fn usage(message: String, options: Options) -> RunError {
    RunError::Usage { message, options }
}

fn kernel_option(opts: &RunOptions) -> String {
    format!("--kernel {}", opts.kernel)
}

/// `--input NAME=FILE` as typed, for the input of `param` if it has one.
fn input_option(opts: &RunOptions, param: &str) -> Option<String> {
    opts.inputs.iter().find(|(n, _)| n == param).map(|(n, p)| format!("--input {n}={}", p.display()))
}

/// Refuses a file written by the run (`--output`, `--save-input`) that is also read by it (an input, the module,
/// the manifest) or written twice: nothing a run reads is overwritten, and no result silently replaces another.
fn check_written_paths(opts: &RunOptions) -> Result<(), RunError> {
    let named = |flag: &str, v: &[(String, PathBuf)], what: &str| -> Vec<(String, String, PathBuf)> {
        v.iter().map(|(n, p)| (format!("{what} `{n}`"), format!("{flag} {n}={}", p.display()), p.clone())).collect()
    };
    let mut read = named("--input", &opts.inputs, "input");
    for (what, path) in [("the module", &opts.ptx_path), ("the manifest", &opts.manifest_path)] {
        read.push((what.to_owned(), path.display().to_string(), path.clone()));
    }
    let mut written = named("--output", &opts.outputs, "output");
    written.extend(named("--save-input", &opts.save_inputs, "saved input"));
    for (k, (what, option, path)) in written.iter().enumerate() {
        let clash = read.iter().chain(&written[..k]).find(|(_, _, other)| same_file(path, other));
        if let Some((other, other_option, _)) = clash {
            return Err(usage(
                format!("{what} would be written to `{}`, which is also {other}", path.display()),
                vec![(option.clone(), "would overwrite it".into()), (other_option.clone(), other.clone())],
            ));
        }
    }
    Ok(())
}

/// The GPU-free half of [`super::run`]: every check of `opts` against the kernel's manifest entry (names,
/// dimensions, scalars), the input files read, and each tensor argument's name, type and shape, in parameter
/// order. What `run` does before it opens the device; the mutation tests call it with hostile options.
pub fn plan_tensors(kernel: &Kernel, opts: &RunOptions) -> Result<Vec<(String, DType, Vec<usize>)>, RunError> {
    let plan = plan_arguments(kernel, opts)?;
    let scalars = parse_scalars(kernel, opts)?;
    precheck_launch(kernel, opts, &plan, &scalars)?;
    let tensors = kernel.params.iter().zip(&plan.sources);
    Ok(tensors.filter_map(|(p, s)| Some((p.name().to_owned(), p.dtype(), s.as_ref()?.shape().to_vec()))).collect())
}

/// The address `precheck_launch` gives the tensor of parameter `index`: the CPU path tells the tensors of a
/// launch plan by it.
pub fn stand_in_address(index: usize) -> u64 {
    (index as u64 + 1) << 40
}

/// The runtime's launch check (shapes against the manifest, requirements, 32-bit index range, launch
/// configuration) on the planned arguments, before anything is allocated: a launch that would be refused costs
/// no memory and no time. The addresses are stand-ins, aligned as any allocation is.
pub(crate) fn precheck_launch(
    kernel: &Kernel,
    opts: &RunOptions,
    plan: &Plan,
    scalars: &[ScalarValue],
) -> Result<cutec_runtime::LaunchPlan, RunError> {
    let mut scalars = scalars.iter();
    let mut args = Vec::with_capacity(plan.sources.len());
    for (i, (p, s)) in kernel.params.iter().zip(&plan.sources).enumerate() {
        args.push(match s {
            Some(s) => {
                let shape: Vec<i64> = s.shape().iter().map(|&e| i64::try_from(e).unwrap_or(i64::MAX)).collect();
                let len = shape.iter().try_fold(1u64, |acc, &e| acc.checked_mul(e.max(0) as u64)).unwrap_or(u64::MAX);
                let strides = match plan.strides.get(i).cloned().flatten() {
                    Some(strides) => Some(strides),
                    None => cutec_runtime::TensorDesc::row_major_strides(&shape),
                };
                let Some(strides) = strides else {
                    let options = blame_param(kernel, opts, &plan.dims, p.name());
                    return Err(blamed(format!("the shape of `{}` overflows", p.name()), false, options, opts));
                };
                // 1 TiB apart and 4 KiB aligned: the stand-ins neither overlap nor fail an alignment check
                // (and `cpu.rs` tells each argument by its stand-in).
                let ptr = stand_in_address(i);
                cutec_runtime::ArgDesc::Tensor(cutec_runtime::TensorDesc {
                    dtype: p.dtype(),
                    shape,
                    strides,
                    ptr,
                    len,
                    device: 0,
                })
            }
            None => cutec_runtime::ArgDesc::Scalar(
                *scalars.next().ok_or_else(|| RunError::Internal("scalar count mismatch".into()))?,
            ),
        });
    }
    cutec_runtime::check_launch(kernel, 0, &args).map_err(|mut e| {
        // The check bound the dimensions from the stand-ins' shapes; a value given with `--dim` is said to be.
        if let ArgError::DimRange { dim, origin, .. }
        | ArgError::NotMultiple { dim, origin, .. }
        | ArgError::DimMismatch { dim, origin, .. } = &mut e
            && let Some(d) = plan.dims.iter().find(|d| d.name == *dim && d.from == DimFrom::Flag)
        {
            *origin = format!("--dim {}={}", d.name, d.value);
        }
        let options = blame_arg_error(kernel, opts, &plan.dims, &e);
        let source = RuntimeError::Argument { kernel: kernel.name.clone(), source: Box::new(e) };
        blamed(source.to_string(), true, options, opts)
    })
}

/// An option to blame and whether it is an input file (else a flag's value).
type Blame = (String, bool);

/// The error for `message` blamed on `options`. An input file among them makes it an error in the input (E0424,
/// exit status 1); the values of flags alone make it a usage error (E0422, exit status 2), as `--dim N=-1` and
/// `--dim N=0` both are. A refusal of the launch check (`refused`) with nothing to blame refuses the manifest's own
/// values.
fn blamed(message: String, refused: bool, options: Vec<Blame>, opts: &RunOptions) -> RunError {
    let label = |is_input: bool| if is_input { "from this file" } else { "from this value" }.to_owned();
    let inputs: Options = options.iter().filter(|(_, i)| *i).map(|(o, _)| (o.clone(), label(true))).collect();
    let flags: Options = options.iter().filter(|(_, i)| !*i).map(|(o, _)| (o.clone(), label(false))).collect();
    if !inputs.is_empty() || refused && flags.is_empty() {
        let mut options = inputs;
        options.extend(flags);
        if options.is_empty() {
            let manifest = opts.manifest_path.display().to_string();
            options.push((manifest, "the kernel's manifest, whose own values are refused".into()));
        }
        return RunError::Rejected { message, options };
    }
    let mut options = flags;
    if options.is_empty() {
        options.push((kernel_option(opts), "this kernel".into()));
    }
    usage(message, options)
}

/// What gave dimension `name` its value.
fn blame_dim(opts: &RunOptions, dims: &[DimValue], name: &str) -> Vec<Blame> {
    match dims.iter().find(|d| d.name == name) {
        Some(DimValue { value, from: DimFrom::Flag, .. }) => vec![(format!("--dim {name}={value}"), false)],
        Some(DimValue { from: DimFrom::Input { param, .. }, .. }) => {
            input_option(opts, param).map(|o| (o, true)).into_iter().collect()
        }
        None => Vec::new(),
    }
}

/// What made the argument of `param`: its input file, or the values of the dimensions of its layout.
fn blame_param(kernel: &Kernel, opts: &RunOptions, dims: &[DimValue], param: &str) -> Vec<Blame> {
    if let Some(o) = input_option(opts, param) {
        return vec![(o, true)];
    }
    let Some(Param::Tensor(t)) = kernel.param(param) else { return Vec::new() };
    let mut out = Vec::new();
    for leaf in t.layout.shape.leaves().into_iter().chain(t.layout.stride.leaves()) {
        if let Entry::Dim(name) = leaf {
            out.extend(blame_dim(opts, dims, name));
        }
    }
    out
}

/// What a refusal of the launch check is about.
fn blame_arg_error(kernel: &Kernel, opts: &RunOptions, dims: &[DimValue], e: &ArgError) -> Vec<Blame> {
    let mut out = match e {
        ArgError::DimRange { dim, .. } | ArgError::NotMultiple { dim, .. } => blame_dim(opts, dims, dim),
        ArgError::DimMismatch { dim, param, .. } => {
            let mut v = blame_param(kernel, opts, dims, param);
            v.extend(blame_dim(opts, dims, dim));
            v
        }
        ArgError::Kind { param, .. }
        | ArgError::DType { param, .. }
        | ArgError::Device { param, .. }
        | ArgError::Rank { param, .. }
        | ArgError::Descriptor { param, .. }
        | ArgError::Misaligned { param, .. }
        | ArgError::StaticMismatch { param, .. }
        | ArgError::NestedMode { param, .. }
        | ArgError::BufferTooSmall { param, .. }
        | ArgError::IndexRange { param, .. }
        | ArgError::NegativeOffset { param, .. }
        | ArgError::LayoutOverflow { param, .. }
        | ArgError::TensorMap { tensor: param, .. } => blame_param(kernel, opts, dims, param),
        // A launch expression is blamed on the dimensions it names.
        ArgError::LaunchExpr { expr, .. } | ArgError::LaunchRange { expr, .. } => expr
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .flat_map(|w| blame_dim(opts, dims, w))
            .collect(),
        ArgError::Arity { .. }
        | ArgError::BlockTooLarge { .. }
        | ArgError::ClusterTooLarge { .. }
        | ArgError::ClusterDivides { .. }
        | ArgError::BadManifest { .. } => Vec::new(),
    };
    let mut seen = std::collections::HashSet::new();
    out.retain(|b| seen.insert(b.clone()));
    out
}

/// Decides how each parameter's argument is made (`None` for scalars), reading input files. GPU-free.
pub(crate) fn plan_arguments(kernel: &Kernel, opts: &RunOptions) -> Result<Plan, RunError> {
    check_written_paths(opts)?;
    let tensor_index =
        |name: &str, what: &str, option: String| match kernel.params.iter().position(|p| p.name() == name) {
            Some(i) if matches!(kernel.params[i], Param::Tensor(_)) => Ok(i),
            Some(_) => Err(usage(
                format!("{what} `{name}` is a scalar parameter, not a tensor"),
                vec![(option, "a scalar parameter".into())],
            )),
            None => Err(usage(
                format!(
                    "kernel `{}` has no parameter `{name}` (its parameters: {})",
                    kernel.name,
                    kernel.params.iter().map(Param::name).collect::<Vec<_>>().join(", ")
                ),
                vec![(option, "no such parameter".into())],
            )),
        };
    for (name, value) in &opts.dims {
        if kernel.dim(name).is_none() {
            let names: Vec<&str> = kernel.dims.iter().map(|d| d.name.as_str()).collect();
            return Err(usage(
                format!(
                    "kernel `{}` has no dimension `{name}` (its dimensions: {})",
                    kernel.name,
                    if names.is_empty() { "none".to_owned() } else { names.join(", ") }
                ),
                vec![(format!("--dim {name}={value}"), "no such dimension".into())],
            ));
        }
    }
    let mut files: Vec<Option<(Vec<usize>, Vec<u8>)>> = vec![None; kernel.params.len()];
    for (name, path) in &opts.inputs {
        let i = tensor_index(name, "input", format!("--input {name}={}", path.display()))?;
        let array = read_npy(path)?;
        let shape = array.shape.clone();
        if let Param::Tensor(t) = &kernel.params[i]
            && shape.len() != t.layout.rank()
        {
            // Said here, with the ranks: the dimensions bound from this file would otherwise be missing.
            let held = match shape.len() {
                0 => "a rank-0 array (a single value, shape ())".to_owned(),
                r => format!("an array of rank {r} (shape {shape:?})"),
            };
            let message =
                format!("input `{name}`: the file holds {held}, but `{name}` is a tensor of rank {}", t.layout.rank());
            return Err(RunError::Npy { path: path.clone(), message: format!("{message} (layout {})", t.layout) });
        }
        files[i] = Some((shape, npy_to_elements(path, name, kernel.params[i].dtype(), array)?));
    }
    let mut outputs = vec![false; kernel.params.len()];
    for (name, path) in &opts.outputs {
        outputs[tensor_index(name, "output", format!("--output {name}={}", path.display()))?] = true;
    }
    for (name, path) in &opts.save_inputs {
        tensor_index(name, "saved input", format!("--save-input {name}={}", path.display()))?;
    }

    let mut dims: Vec<DimValue> =
        opts.dims.iter().map(|(n, v)| DimValue { name: n.clone(), value: *v, from: DimFrom::Flag }).collect();
    for d in &kernel.dims {
        let Some(i) = kernel.params.iter().position(|p| p.name() == d.from.param) else { continue };
        let Some((shape, _)) = &files[i] else { continue };
        let extents: Vec<i64> = shape.iter().map(|&e| e as i64).collect();
        let from_file = match d.from.of {
            DimComponent::Shape => extents.get(d.from.mode).copied(),
            DimComponent::Stride => {
                cutec_runtime::TensorDesc::row_major_strides(&extents).and_then(|s| s.get(d.from.mode).copied())
            }
        };
        let Some(value) = from_file else { continue }; // a nested mode: the launch check reports a mismatch
        match dims.iter().find(|v| v.name == d.name) {
            Some(given) if given.value != value => {
                let (p, of, mode) = (&d.from.param, d.from.of, d.from.mode);
                let flag = format!("--dim {}={}", d.name, given.value);
                let mut options = vec![(flag.clone(), "contradicts the input file".to_owned())];
                options.extend(input_option(opts, p).map(|o| (o, format!("{p}.{of}[{mode}] = {value}"))));
                return Err(usage(format!("{flag} contradicts {p}.{of}[{mode}] of the input file = {value}"), options));
            }
            Some(_) => {}
            None => dims.push(DimValue {
                name: d.name.clone(),
                value,
                from: DimFrom::Input { param: d.from.param.clone(), of: d.from.of, mode: d.from.mode },
            }),
        }
    }

    let mut sources = Vec::with_capacity(kernel.params.len());
    for (i, param) in kernel.params.iter().enumerate() {
        let Param::Tensor(t) = param else {
            sources.push(None);
            continue;
        };
        if let Some((shape, bytes)) = files[i].take() {
            sources.push(Some(Source::File { shape, bytes }));
            continue;
        }
        let mut shape = Vec::new();
        for mode in t.layout.shape.modes() {
            let mut extent: i64 = 1;
            for leaf in mode.leaves() {
                let v = match leaf {
                    Entry::Int(v) => *v,
                    Entry::Dim(name) => match dims.iter().find(|d| d.name == *name) {
                        Some(d) => d.value,
                        None => {
                            let source = kernel.dim(name).map_or(String::new(), |d| d.from.param.clone());
                            return Err(usage(
                                format!(
                                    "dimension `{name}` has no value (needed for the shape of `{}`): \
                                     give --dim {name}=N or an input file for `{source}`",
                                    t.name
                                ),
                                vec![(kernel_option(opts), format!("needs a value of `{name}`"))],
                            ));
                        }
                    },
                };
                extent = extent.checked_mul(v).ok_or_else(|| {
                    let options = blame_param(kernel, opts, &dims, &t.name);
                    blamed(format!("the shape of `{}` overflows ({})", t.name, t.layout.shape), false, options, opts)
                })?;
            }
            let Ok(extent) = usize::try_from(extent) else {
                let options = blame_param(kernel, opts, &dims, &t.name);
                return Err(blamed(format!("`{}` has negative extent {extent}", t.name), false, options, opts));
            };
            shape.push(extent);
        }
        sources.push(Some(if outputs[i] || t.access == Access::Write {
            Source::Poison { shape }
        } else {
            Source::Random { shape }
        }));
    }
    let strides = kernel
        .params
        .iter()
        .zip(&sources)
        .map(|(p, s)| match (p, s) {
            (Param::Tensor(t), Some(s)) => permuted_strides(t, s.shape(), &dims),
            _ => None,
        })
        .collect();
    Ok(Plan { sources, dims, strides })
}

/// The scalar arguments in parameter order.
pub(crate) fn parse_scalars(kernel: &Kernel, opts: &RunOptions) -> Result<Vec<ScalarValue>, RunError> {
    let given = &opts.scalars;
    for (name, text) in given {
        if !matches!(kernel.param(name), Some(Param::Scalar(_))) {
            return Err(usage(
                format!("kernel `{}` has no scalar parameter `{name}`", kernel.name),
                vec![(format!("--scalar {name}={text}"), "no such scalar parameter".into())],
            ));
        }
    }
    let mut out = Vec::new();
    for param in &kernel.params {
        let Param::Scalar(s) = param else { continue };
        let Some((_, text)) = given.iter().find(|(n, _)| *n == s.name) else {
            return Err(usage(
                format!("scalar `{}` ({}) needs a value: --scalar {}=V", s.name, s.dtype, s.name),
                vec![(kernel_option(opts), format!("takes the scalar `{}`", s.name))],
            ));
        };
        let value = ScalarValue::parse(s.dtype, text).map_err(|e| {
            usage(
                format!("scalar `{}`: {e}", s.name),
                vec![(format!("--scalar {}={text}", s.name), format!("not a valid {}", s.dtype))],
            )
        })?;
        out.push(value);
    }
    Ok(out)
}
