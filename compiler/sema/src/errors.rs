//! The one error enum of the checker, and the one place it becomes a [`Diagnostic`].
//!
//! Errors hold values and spans, never rendered text; a span is in the file of the [`Located`] error unless it is
//! a [`Loc`] (a definition in another module, such as a stdlib function).

use crate::builtins::AttrTarget;
use cutec_diagnostics::{Diagnostic, FileId, Span};

/// A span in a given file.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Loc {
    pub file: FileId,
    pub span: Span,
}

/// An error and the file its spans are in.
#[derive(Clone, Debug)]
pub(crate) struct Located {
    pub file: FileId,
    pub error: SemaError,
}

/// What kind of binding an assignment target is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum BindingKind {
    Let,
    LoopVar,
    Param,
}

#[derive(Clone, Debug)]
pub(crate) enum SemaError {
    UnknownName {
        name: String,
        span: Span,
        suggestion: Option<String>,
    },
    UnknownType {
        name: String,
        span: Span,
        suggestion: Option<String>,
    },
    UnknownModule {
        name: String,
        span: Span,
        suggestion: Option<String>,
        available: Vec<String>,
    },
    NotStdlibPath {
        name: String,
        span: Span,
    },
    NoSubmodules {
        span: Span,
        module: String,
    },
    UnknownImport {
        name: String,
        module: String,
        span: Span,
        suggestion: Option<String>,
    },
    Duplicate {
        what: &'static str,
        name: String,
        span: Span,
        first: Loc,
    },
    /// One name imported twice from one module (`use m::{a, a};`): the span is the second.
    ImportedTwice {
        name: String,
        span: Span,
        first: Loc,
    },
    UseBeforeLet {
        name: String,
        span: Span,
        def: Span,
    },
    OutOfScope {
        name: String,
        span: Span,
        def: Span,
    },
    AssignImmutable {
        name: String,
        span: Span,
        def: Span,
        kind: BindingKind,
    },
    InvalidPlace {
        span: Span,
        what: String,
        help: Option<String>,
    },
    OutsideLoop {
        keyword: &'static str,
        span: Span,
    },
    Mismatch {
        span: Span,
        expected: String,
        found: String,
        because: Option<(Loc, String)>,
        help: Option<String>,
    },
    Arity {
        what: &'static str,
        callee: String,
        span: Span,
        expected: String,
        found: usize,
        extra: Vec<Span>,
        missing_at: Option<Span>,
        def: Option<Loc>,
        signature: Option<String>,
    },
    WrongArgKind {
        span: Span,
        expected: String,
        found: String,
        param: String,
        signature: String,
    },
    BadOperand {
        op: String,
        span: Span,
        found: String,
        expected: &'static str,
        help: Option<String>,
    },
    OperandsDontMix {
        op: String,
        lhs: (Span, String),
        rhs: (Span, String),
    },
    NonBoolCondition {
        span: Span,
        found: String,
        what: &'static str,
    },
    InvalidCast {
        span: Span,
        from: String,
        to: String,
        help: Option<String>,
    },
    ReturnMismatch {
        span: Span,
        expected: String,
        found: String,
        ret_span: Span,
    },
    ReturnInKernel {
        span: Span,
    },
    MissingReturnValue {
        span: Span,
        expected: String,
        ret_span: Span,
    },
    ReturnValueInUnitFn {
        span: Span,
        name: String,
        sig: Span,
    },
    MissingReturn {
        name: String,
        span: Span,
        ret_span: Span,
        expected: String,
    },
    LaunchOnFn {
        span: Span,
        name: String,
    },
    MissingLaunch {
        span: Span,
        name: String,
    },
    UnknownLaunchKey {
        name: String,
        span: Span,
        suggestion: Option<String>,
    },
    DuplicateLaunchKey {
        name: String,
        span: Span,
        first: Span,
    },
    MissingLaunchKey {
        key: &'static str,
        span: Span,
    },
    LaunchValueType {
        key: String,
        span: Span,
        found: String,
    },
    LaunchNotEvaluable {
        key: String,
        span: Span,
        constant: bool,
    },
    /// E0144: a launch extent (or `smem`) that is known when compiling and not positive (`smem`: negative).
    LaunchNotPositive {
        key: String,
        /// `x`, `y` or `z`; empty for `smem`.
        axis: &'static str,
        span: Span,
        value: i64,
    },
    LaunchTooLarge {
        key: String,
        span: Span,
        value: i64,
        limit: i64,
        what: &'static str,
    },
    UnknownAttribute {
        name: String,
        span: Span,
        target: AttrTarget,
        suggestion: Option<String>,
        applies_to: Option<AttrTarget>,
    },
    BadAttributeArgs {
        name: String,
        span: Span,
        problem: String,
        usage: &'static str,
        help: Option<String>,
    },
    DuplicateAttribute {
        name: String,
        span: Span,
        first: Span,
    },
    IncongruentLayout {
        span: Span,
        shape_span: Span,
        shape_profile: String,
        stride_profile: String,
        suggestion: Option<String>,
    },
    LayoutEntry {
        span: Span,
        found: String,
        part: &'static str,
    },
    NonPositiveExtent {
        span: Span,
        value: i64,
    },
    NotConstant {
        span: Span,
        context: String,
        whole: Span,
    },
    ConstEval {
        span: Span,
        problem: &'static str,
    },
    ConstCycle {
        name: String,
        span: Span,
    },
    GenericCount {
        name: String,
        span: Span,
        expected: String,
        found: usize,
        signature: Option<String>,
    },
    UnexpectedGenerics {
        name: String,
        span: Span,
    },
    BadGenericArg {
        span: Span,
        expected: &'static str,
        found: String,
        suggestion: Option<String>,
    },
    IndexRank {
        span: Span,
        found: usize,
        rank: usize,
        base: Span,
        ty: String,
    },
    IndexNonTensor {
        span: Span,
        found: String,
    },
    IndexNotInt {
        span: Span,
        found: String,
    },
    UnknownField {
        name: String,
        span: Span,
        ty: String,
        suggestion: Option<String>,
        available: String,
    },
    UnknownMethod {
        name: String,
        span: Span,
        ty: String,
        suggestion: Option<String>,
        available: String,
    },
    /// A layout-algebra error (E0200..E0299), rendered in `fold_diag.rs`.
    Layout(crate::fold_diag::LayoutDiag),
    /// An overflowing constant or a copy of mismatched static sizes (E0160, E0161), rendered in `size_diag.rs`.
    Size(crate::size_diag::SizeDiag),
    Recursion {
        span: Span,
        cycle: Vec<String>,
    },
    NotAValue {
        span: Span,
        what: String,
        help: Option<String>,
    },
    NotCallable {
        span: Span,
        what: String,
        def: Option<Loc>,
        help: Option<String>,
    },
    UnknownDefine {
        name: String,
        span: Span,
        suggestion: Option<String>,
        known: Vec<String>,
    },
    /// `-D NAME=VALUE` whose value the const generic's type `ty` cannot hold (`range` for integer types).
    BadDefineValue {
        name: String,
        span: Span,
        value: i64,
        def: Loc,
        ty: String,
        range: Option<(i128, i128)>,
    },
    BadTensorType {
        span: Span,
        problem: String,
        help: Option<String>,
    },
    UnboundDynDim {
        name: String,
        span: Span,
    },
    NonStaticParamLayout {
        span: Span,
    },
    BadAtom {
        span: Span,
        problem: String,
        help: Option<String>,
    },
    TooDeep {
        span: Span,
    },
    /// E0150: a `const` reached through a chain of constants deeper than the checker's nesting bound.
    ConstChainTooDeep {
        name: String,
        span: Span,
    },
    MisplacedWildcard {
        span: Span,
    },
    UnknownNamedArg {
        name: String,
        span: Span,
        callee: String,
        suggestion: Option<String>,
        accepted: String,
    },
    PositionalAfterNamed {
        span: Span,
        named: Span,
    },
    BadConstGenericType {
        span: Span,
        found: String,
    },
    /// E0142: a numeric literal out of its type's range.
    LiteralOutOfRange {
        span: Span,
        literal: String,
        ty: String,
        /// What the type holds, as a sentence fragment: "`i8` holds -128 to 127".
        range: String,
    },
    /// E0143: an integer division or remainder by a divisor that is 0 at compile time.
    DivisionByZero {
        op: String,
        span: Span,
    },
    StaticAssertFailed {
        /// The condition.
        span: Span,
        message: Option<String>,
        /// The sides of a comparison that are not literals, as written, with their values.
        sides: Vec<(String, i64)>,
        /// The const generics the condition names, with their values and whether `-D` gave them.
        generics: Vec<(String, i64, bool)>,
    },
}

fn did_you_mean(d: Diagnostic, suggestion: &Option<String>) -> Diagnostic {
    match suggestion {
        Some(s) => d.with_help(format!("a name with a similar spelling exists: `{s}`")),
        None => d,
    }
}

fn plural(n: usize, one: &str) -> String {
    if n == 1 { format!("{n} {one}") } else { format!("{n} {one}s") }
}

impl Located {
    /// The diagnostic of this error; the only place the checker's errors become text.
    pub fn to_diagnostic(&self) -> Diagnostic {
        use SemaError as E;
        let f = self.file;
        let err = |code, msg: String, span| Diagnostic::error(code, msg, f, span);
        match &self.error {
            E::UnknownName { name, span, suggestion } => did_you_mean(
                err("E0100", format!("cannot find `{name}` in this scope"), *span)
                    .with_primary_message("not found in this scope"),
                suggestion,
            ),
            E::UnknownType { name, span, suggestion } => {
                let d = err("E0101", format!("unknown type `{name}`"), *span).with_primary_message("not a type");
                did_you_mean(d, suggestion).with_note(
                    "types are the scalars (`int`, `f32`, `bf16`, ...), `Tensor<T, layout, space>` and tuples",
                )
            }
            E::UnknownModule { name, span, suggestion, available } => {
                let d = err("E0102", format!("unknown module `stdlib::{name}`"), *span)
                    .with_primary_message("no such stdlib module");
                let list: Vec<String> = available.iter().map(|m| format!("`{m}`")).collect();
                did_you_mean(d, suggestion).with_note(format!("the standard library has: {}", list.join(", ")))
            }
            E::NotStdlibPath { name, span } => err("E0102", format!("unknown module `{name}`"), *span)
                .with_primary_message("not a module")
                .with_help("only standard library modules can be used: `use stdlib::reduce;`"),
            E::NoSubmodules { span, module } => err("E0102", format!("`stdlib::{module}` has no submodules"), *span)
                .with_primary_message("expected a name defined in the module")
                .with_help(format!("import names with `use stdlib::{module}::{{a, b}};`")),
            E::UnknownImport { name, module, span, suggestion } => did_you_mean(
                err("E0103", format!("`{name}` is not defined in `{module}`"), *span)
                    .with_primary_message(format!("no `{name}` in `{module}`")),
                suggestion,
            ),
            E::Duplicate { what, name, span, first } => {
                err("E0104", format!("the {what} `{name}` is defined more than once"), *span)
                    .with_primary_message(format!("`{name}` redefined here"))
                    .with_label(first.file, first.span, format!("first definition of `{name}`"))
            }
            E::ImportedTwice { name, span, first } => err("E0162", format!("`{name}` is imported twice"), *span)
                .with_primary_message(format!("`{name}` imported again here"))
                .with_label(first.file, first.span, format!("`{name}` first imported here"))
                .with_help("remove one of the two"),
            E::UseBeforeLet { name, span, def } => err("E0105", format!("cannot use `{name}` before its `let`"), *span)
                .with_primary_message("used here, before its definition is complete")
                .with_label(f, *def, format!("`{name}` is defined here"))
                .with_help(format!("move the `let {name}` above this use")),
            E::OutOfScope { name, span, def } => err("E0105", format!("`{name}` is not in scope here"), *span)
                .with_primary_message("not in scope")
                .with_label(f, *def, "defined here, in a block that has ended")
                .with_help(format!("declare `{name}` before the block (`let mut {name} = ...;`) and assign it inside")),
            E::AssignImmutable { name, span, def, kind } => {
                let d = err("E0106", format!("cannot assign twice to immutable `{name}`"), *span)
                    .with_primary_message("cannot assign twice to an immutable binding");
                match kind {
                    BindingKind::Let => d
                        .with_label(f, *def, format!("first assignment to `{name}`"))
                        .with_help(format!("make the binding mutable: `let mut {name}`")),
                    BindingKind::LoopVar => d
                        .with_label(f, *def, "the loop variable, set by the loop")
                        .with_help("copy it into a `let mut` variable to change it"),
                    BindingKind::Param => d
                        .with_label(f, *def, "a parameter")
                        .with_help(format!("copy it first: `let mut {name} = {name};`")),
                }
                .with_note("elements of tensors can always be assigned: `t[i] = v;`")
            }
            E::InvalidPlace { span, what, help } => {
                let d = err("E0107", format!("cannot assign to {what}"), *span)
                    .with_primary_message("not a variable or a tensor element");
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            E::OutsideLoop { keyword, span } => err("E0108", format!("`{keyword}` outside of a loop"), *span)
                .with_primary_message(format!("cannot `{keyword}` outside of a loop")),
            E::Mismatch { span, expected, found, because, help } => {
                let mut d = err("E0109", "mismatched types".into(), *span)
                    .with_primary_message(format!("expected `{expected}`, found `{found}`"));
                if let Some((loc, msg)) = because {
                    d = d.with_label(loc.file, loc.span, msg.clone());
                }
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            E::Arity { what, callee, span, expected, found, extra, missing_at, def, signature } => {
                let args = |n: &str| if n == "1" { "argument" } else { "arguments" };
                let mut d = err(
                    "E0110",
                    format!(
                        "this {what} takes {expected} {} but {} {} supplied",
                        args(expected),
                        plural(*found, "argument"),
                        if *found == 1 { "was" } else { "were" }
                    ),
                    *span,
                )
                .with_primary_message(format!("`{callee}` expects {expected} {}", args(expected)));
                for s in extra {
                    d = d.with_label(f, *s, "unexpected argument");
                }
                if let Some(s) = missing_at {
                    d = d.with_label(f, *s, "an argument is missing here");
                }
                if let Some(loc) = def {
                    d = d.with_label(loc.file, loc.span, format!("`{callee}` defined here"));
                }
                match signature {
                    Some(s) => d.with_note(format!("`{callee}` is `{s}`")),
                    None => d,
                }
            }
            E::WrongArgKind { span, expected, found, param, signature } => {
                err("E0111", format!("expected {expected}, found {found}"), *span)
                    .with_primary_message(format!("`{param}` must be {expected}"))
                    .with_note(format!("the signature is `{signature}`"))
            }
            E::BadOperand { op, span, found, expected, help } => {
                let d = err("E0112", format!("`{op}` cannot be applied to {found}"), *span)
                    .with_primary_message(format!("expected {expected}, found {found}"));
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            E::OperandsDontMix { op, lhs, rhs } => {
                err("E0112", format!("`{op}` cannot combine `{}` and `{}`", lhs.1, rhs.1), rhs.0)
                    .with_primary_message(format!("`{}` does not mix with `{}` without a conversion", rhs.1, lhs.1))
                    .with_label(f, lhs.0, format!("this is `{}`", lhs.1))
                    .with_help(format!("convert one side with `as`, e.g. `(...) as {}`", lhs.1))
            }
            E::NonBoolCondition { span, found, what } => {
                let d = err("E0113", format!("the condition of {what} must be a `bool`"), *span)
                    .with_primary_message(format!("expected `bool`, found `{found}`"));
                if found == "int" || found.starts_with('i') || found.starts_with('u') {
                    d.with_help("compare explicitly: `x != 0`")
                } else {
                    d
                }
            }
            E::InvalidCast { span, from, to, help } => {
                let d = err("E0114", format!("cannot cast {from} to `{to}`"), *span)
                    .with_primary_message("`as` converts between numeric types only");
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            E::ReturnMismatch { span, expected, found, ret_span } => {
                err("E0115", "mismatched return type".into(), *span)
                    .with_primary_message(format!("expected `{expected}`, found `{found}`"))
                    .with_label(f, *ret_span, format!("the function returns `{expected}`"))
                    .with_help(format!("convert it: `return (...) as {expected};`"))
            }
            E::ReturnInKernel { span } => err("E0115", "a kernel cannot return a value".into(), *span)
                .with_primary_message("kernels return nothing")
                .with_help("write the result to an output tensor; use `return;` to leave early"),
            E::MissingReturnValue { span, expected, ret_span } => {
                err("E0115", "`return` without a value in a function that returns a value".into(), *span)
                    .with_primary_message(format!("expected a value of type `{expected}`"))
                    .with_label(f, *ret_span, format!("the function returns `{expected}`"))
            }
            E::ReturnValueInUnitFn { span, name, sig } => {
                err("E0115", format!("`{name}` returns nothing but this `return` has a value"), *span)
                    .with_primary_message("unexpected value")
                    .with_label(f, *sig, "no `-> T` in the signature")
                    .with_help("declare the return type: `fn name(...) -> f32`")
            }
            E::MissingReturn { name, span, ret_span, expected } => {
                err("E0116", format!("`{name}` may reach its end without returning a value"), *span)
                    .with_primary_message(format!("expected a `return` of type `{expected}` before here"))
                    .with_label(f, *ret_span, "return type declared here")
                    .with_help("end the function with `return value;` on every path")
            }
            E::LaunchOnFn { span, name } => {
                err("E0117", format!("device function `{name}` has a launch clause"), *span)
                    .with_primary_message("only kernels are launched")
                    .with_help("remove the clause, or declare it with `kernel` instead of `fn`")
            }
            E::MissingLaunch { span, name } => err("E0117", format!("kernel `{name}` has no launch clause"), *span)
                .with_primary_message("missing `launch(...)`")
                .with_help("add one after the parameters: `launch(grid = (ceil_div(N, 256)), block = (256))`"),
            E::UnknownLaunchKey { name, span, suggestion } => did_you_mean(
                err("E0118", format!("unknown launch setting `{name}`"), *span)
                    .with_primary_message("not a launch setting")
                    .with_note("the launch settings are `grid`, `block`, `cluster` and `smem`"),
                suggestion,
            ),
            E::DuplicateLaunchKey { name, span, first } => {
                err("E0118", format!("launch setting `{name}` is given more than once"), *span)
                    .with_primary_message("given again here")
                    .with_label(f, *first, "first given here")
            }
            E::MissingLaunchKey { key, span } => err("E0118", format!("the launch clause has no `{key}`"), *span)
                .with_primary_message(format!("missing `{key} = ...`"))
                .with_help("a launch clause needs `grid` and `block`"),
            E::LaunchValueType { key, span, found } => {
                let expected = if key == "smem" { "an integer" } else { "an integer or a tuple of 1 to 3 integers" };
                err("E0119", format!("invalid `{key}` in the launch clause"), *span)
                    .with_primary_message(format!("expected {expected}, found {found}"))
            }
            E::LaunchNotEvaluable { key, span, constant } => {
                let (what, help) = if *constant {
                    ("a compile-time constant", "use integers, const generics and constants")
                } else {
                    (
                        "computable before the launch",
                        "use integers, const generics, constants, dynamic dimensions and integer parameters",
                    )
                };
                err("E0119", format!("`{key}` must be {what}"), *span)
                    .with_primary_message("this is not known before the kernel starts")
                    .with_help(help)
            }
            E::LaunchNotPositive { key, axis, span, value } => {
                let (name, want) =
                    if axis.is_empty() { (key.clone(), "at least 0") } else { (format!("{key}.{axis}"), "at least 1") };
                err("E0144", format!("`{name}` is {value}; it must be {want}"), *span)
                    .with_primary_message(format!("this is {value}"))
                    .with_note("a launch with an empty grid or block does nothing, and the driver refuses it")
            }
            E::LaunchTooLarge { key, span, value, limit, what } => {
                err("E0119", format!("`{key}` asks for {value} {what}, more than the limit of {limit}"), *span)
                    .with_primary_message(format!("{value} {what}"))
            }
            E::UnknownAttribute { name, span, target, suggestion, applies_to } => {
                let d = err("E0120", format!("unknown attribute `{name}` on {}", target.describe()), *span)
                    .with_primary_message("not an attribute here");
                match applies_to {
                    Some(t) => d.with_note(format!("`{name}` applies to {}", t.describe())),
                    None => did_you_mean(d, suggestion),
                }
            }
            E::BadAttributeArgs { name, span, problem, usage, help } => {
                let d = err("E0121", format!("invalid arguments of `{name}`: {problem}"), *span)
                    .with_primary_message(problem.clone())
                    .with_note(format!("usage: `{usage}`"));
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            E::DuplicateAttribute { name, span, first } => {
                err("E0121", format!("attribute `{name}` is given more than once"), *span)
                    .with_primary_message("repeated here")
                    .with_label(f, *first, "first given here")
            }
            E::IncongruentLayout { span, shape_span, shape_profile, stride_profile, suggestion } => {
                let d = err(
                    "E0122",
                    format!("layout shape `{shape_profile}` and stride `{stride_profile}` are not congruent"),
                    *span,
                )
                .with_primary_message(format!("stride has profile `{stride_profile}`"))
                .with_label(f, *shape_span, format!("shape has profile `{shape_profile}`"))
                .with_note("a stride needs one entry for every entry of the shape, nested the same way");
                match suggestion {
                    Some(s) => d.with_help(format!("for compact column-major strides write `{s}`, or omit the stride")),
                    None => d,
                }
            }
            E::LayoutEntry { span, found, part } => {
                err("E0123", format!("a layout {part} must be made of integers"), *span)
                    .with_primary_message(format!("expected an integer, found {found}"))
            }
            E::NonPositiveExtent { span, value } => err("E0123", "a layout shape entry must be positive".into(), *span)
                .with_primary_message(format!("this extent is {value}")),
            E::NotConstant { span, context, whole } => {
                let mut d = err("E0124", format!("{context} must be a compile-time constant"), *span)
                    .with_primary_message("not known at compile time");
                if whole != span {
                    d = d.with_label(f, *whole, "in this constant expression");
                }
                d.with_help("use integers, const generics and `const` items")
            }
            E::ConstEval { span, problem } => {
                err("E0124", format!("this constant cannot be computed: {problem}"), *span)
                    .with_primary_message(*problem)
            }
            E::ConstCycle { name, span } => err("E0124", format!("the value of `{name}` depends on itself"), *span)
                .with_primary_message("cyclic constant"),
            E::GenericCount { name, span, expected, found, signature } => {
                let d = err(
                    "E0125",
                    format!(
                        "`{name}` takes {expected} generic {} but {found} {} supplied",
                        if expected == "1" { "argument" } else { "arguments" },
                        if *found == 1 { "was" } else { "were" }
                    ),
                    *span,
                )
                .with_primary_message(format!("expected {expected}"));
                match signature {
                    Some(s) => d.with_note(format!("`{name}` is `{s}`")),
                    None => d,
                }
            }
            E::Layout(d) => d.to_diagnostic(f),
            E::Size(d) => d.to_diagnostic(f),
            E::UnexpectedGenerics { name, span } => err("E0125", format!("`{name}` takes no generic arguments"), *span)
                .with_primary_message("unexpected generic arguments"),
            E::BadGenericArg { span, expected, found, suggestion } => did_you_mean(
                err("E0126", format!("expected {expected}, found {found}"), *span)
                    .with_primary_message(format!("expected {expected}")),
                suggestion,
            ),
            E::IndexRank { span, found, rank, base, ty } => err(
                "E0127",
                format!("this tensor has rank {rank} but {} were given", plural(*found, "index"))
                    .replace("indexs", "indices"),
                *span,
            )
            .with_primary_message(format!("expected 1 or {rank} indices"))
            .with_label(f, *base, format!("this is `{ty}`"))
            .with_note("one index reads the tensor in colexicographic order; otherwise give one per mode"),
            E::IndexNonTensor { span, found } => {
                err("E0128", format!("cannot index into {found}"), *span).with_primary_message("not a tensor")
            }
            E::IndexNotInt { span, found } => err("E0128", "tensor indices must be integers or `_`".into(), *span)
                .with_primary_message(format!("expected an integer, found {found}")),
            E::UnknownField { name, span, ty, suggestion, available } => did_you_mean(
                err("E0129", format!("no field `{name}` on `{ty}`"), *span)
                    .with_primary_message("unknown field")
                    .with_note(format!("available: {available}")),
                suggestion,
            ),
            E::UnknownMethod { name, span, ty, suggestion, available } => did_you_mean(
                err("E0129", format!("no method `{name}` on {ty}"), *span)
                    .with_primary_message("method not found")
                    .with_note(format!("available: {available}")),
                suggestion,
            ),
            E::Recursion { span, cycle } => {
                let msg = if cycle.len() <= 2 {
                    format!("function `{}` calls itself", cycle[0])
                } else {
                    format!("recursive call cycle: {}", cycle.join(" -> "))
                };
                err("E0130", msg, *span)
                    .with_primary_message("recursive call")
                    .with_note("GPU code has no call stack for recursion; device functions are inlined")
                    .with_help("rewrite the recursion as a loop")
            }
            E::NotAValue { span, what, help } => {
                let d =
                    err("E0131", format!("expected a value, found {what}"), *span).with_primary_message("not a value");
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            E::NotCallable { span, what, def, help } => {
                let mut d =
                    err("E0132", format!("{what} cannot be called"), *span).with_primary_message("not a function");
                if let Some(l) = def {
                    d = d.with_label(l.file, l.span, "defined here");
                }
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            E::UnknownDefine { name, span, suggestion, known } => {
                let d = err("E0133", format!("`-D {name}` sets no const parameter of any kernel"), *span)
                    .with_primary_message("unknown const parameter");
                let d = did_you_mean(d, suggestion);
                if known.is_empty() {
                    d.with_note("no kernel of this program has const parameters")
                } else {
                    d.with_note(format!("the kernels' const parameters are: {}", known.join(", ")))
                }
            }
            E::BadDefineValue { name, span, value, def, ty, range } => {
                let (message, expected) = match range {
                    Some((lo, hi)) => (
                        format!("`-D {name}={value}` is out of range for `{ty}`"),
                        format!("`{ty}` holds {lo} to {hi}"),
                    ),
                    None => (format!("`-D {name}={value}` is not a `{ty}`"), "expected 0 or 1".to_owned()),
                };
                err("E0133", message, *span).with_primary_message(expected).with_label(
                    def.file,
                    def.span,
                    format!("`{name}` is declared `{ty}` here"),
                )
            }
            E::BadTensorType { span, problem, help } => {
                let d = err("E0134", format!("invalid tensor type: {problem}"), *span)
                    .with_primary_message(problem.clone());
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            E::UnboundDynDim { name, span } => {
                err("E0135", format!("dynamic dimension `{name}` cannot be read from any parameter"), *span)
                    .with_primary_message(format!("`{name}` is only used inside an expression"))
                    .with_help(format!("use `{name}` as a whole shape or stride entry, e.g. `({name}, 64):(64, 1)`"))
            }
            E::NonStaticParamLayout { span } => err(
                "E0135",
                "a parameter layout can only use integers, const generics and dimension names".into(),
                *span,
            )
            .with_primary_message("only known inside the kernel"),
            E::BadAtom { span, problem, help } => {
                let d = err("E0136", format!("invalid hardware atom: {problem}"), *span)
                    .with_primary_message(problem.clone());
                match help {
                    Some(h) => d.with_help(h.clone()),
                    None => d,
                }
            }
            E::TooDeep { span } => err("E0137", "expression nested too deeply".into(), *span)
                .with_primary_message("nesting limit reached here")
                .with_help("split the expression with `let`"),
            E::ConstChainTooDeep { name, span } => {
                err("E0150", format!("the constant `{name}` is reached through too long a chain of constants"), *span)
                    .with_primary_message("the chain is cut here")
                    .with_help("define the constants from a common base rather than each from the previous one")
            }
            E::MisplacedWildcard { span } => err("E0138", "`_` is not a value".into(), *span)
                .with_primary_message("`_` is only allowed as an index, in a tiler or in a coordinate"),
            E::UnknownNamedArg { name, span, callee, suggestion, accepted } => {
                let d = err("E0139", format!("`{callee}` has no argument named `{name}`"), *span)
                    .with_primary_message("unknown named argument");
                let d = did_you_mean(d, suggestion);
                if accepted.is_empty() {
                    d.with_note(format!("`{callee}` takes positional arguments only"))
                } else {
                    d.with_note(format!("named arguments of `{callee}`: {accepted}"))
                }
            }
            E::PositionalAfterNamed { span, named } => {
                err("E0139", "positional argument after a named argument".into(), *span)
                    .with_primary_message("positional argument")
                    .with_label(f, *named, "named argument")
                    .with_help("put named arguments last")
            }
            E::BadConstGenericType { span, found } => {
                err("E0140", format!("a const generic must be `int` or `bool`, not `{found}`"), *span)
                    .with_primary_message("unsupported const generic type")
            }
            E::LiteralOutOfRange { span, literal, ty, range } => {
                let what = if literal == "this literal" { literal.clone() } else { format!("`{literal}`") };
                err("E0142", format!("literal out of range for `{ty}`"), *span)
                    .with_primary_message(format!("{what} does not fit in `{ty}`"))
                    .with_note(range.clone())
                    .with_help("use a wider type, or a value the type can hold")
            }
            E::DivisionByZero { op, span } => err("E0143", format!("integer `{op}` by zero"), *span)
                .with_primary_message("this divisor is 0 when compiling")
                .with_note("an integer division or remainder by zero has no value"),
            E::StaticAssertFailed { span, message, sides, generics } => {
                let msg = match message {
                    Some(m) if !m.is_empty() => format!("static assertion failed: {m}"),
                    _ => "static assertion failed".to_owned(),
                };
                let d = err("E0141", msg, *span).with_primary_message("this is `false`");
                let values: Vec<String> = generics
                    .iter()
                    .map(|(n, v, define)| if *define { format!("{n} = {v} (from -D)") } else { format!("{n} = {v}") })
                    .collect();
                let sides: Vec<String> = sides.iter().map(|(s, v)| format!("`{s}` is {v}")).collect();
                let note = match (values.is_empty(), sides.is_empty()) {
                    (true, true) => return d,
                    (false, true) => format!("with {}", values.join(", ")),
                    (true, false) => sides.join(", "),
                    (false, false) => format!("with {}: {}", values.join(", "), sides.join(", ")),
                };
                d.with_note(note)
            }
        }
    }
}
