//! The one error enum of the checker, and the one place it becomes a [`Diagnostic`].
//!
//! Errors hold values and spans, never rendered text (each family of errors is rendered by its module,
//! `errors/render_*.rs`); a span is in the file of the [`Located`] error unless it is
//! a [`Loc`] (a definition in another module, such as a stdlib function).

use crate::builtins::AttrTarget;
use cutec_diagnostics::{Diagnostic, FileId, Span};

mod render_access;
mod render_consts;
mod render_launch;
mod render_misc;
mod render_names;
mod render_types;

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
    /// A named argument that only means something beside another (`with` without `map`).
    NamedArgWithout {
        span: Span,
        name: String,
        needs: String,
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
    /// E0170: the grid's extent along `axis` is not a multiple of the cluster's.
    GridNotClusters {
        axis: &'static str,
        grid: i64,
        cluster: i64,
        span: Span,
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
    /// `-D NAME=VALUE` whose value the const generic's type `ty` cannot hold: `range` for an integer out of its
    /// integer type's range, `None` for the wrong kind of literal (`true` for an `int`, `1` for a `bool`).
    BadDefineValue {
        name: String,
        span: Span,
        value: String,
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

pub(super) fn did_you_mean(d: Diagnostic, suggestion: &Option<String>) -> Diagnostic {
    match suggestion {
        Some(s) => d.with_help(format!("a name with a similar spelling exists: `{s}`")),
        None => d,
    }
}

pub(super) fn plural(n: usize, one: &str) -> String {
    if n == 1 { format!("{n} {one}") } else { format!("{n} {one}s") }
}

impl Located {
    /// The diagnostic of this error; the only place the checker's errors become text. Each family of errors is
    /// rendered by its module (`errors/render_*.rs`); this match says which, and is exhaustive so that a new
    /// error cannot go unrendered.
    pub fn to_diagnostic(&self) -> Diagnostic {
        use SemaError as E;
        let (f, e) = (self.file, &self.error);
        let rendered = match e {
            E::Layout(d) => return d.to_diagnostic(f),
            E::Size(d) => return d.to_diagnostic(f),
            E::UnknownName { .. }
            | E::UnknownType { .. }
            | E::UnknownModule { .. }
            | E::NotStdlibPath { .. }
            | E::NoSubmodules { .. }
            | E::UnknownImport { .. }
            | E::Duplicate { .. }
            | E::ImportedTwice { .. }
            | E::UseBeforeLet { .. }
            | E::OutOfScope { .. }
            | E::AssignImmutable { .. }
            | E::InvalidPlace { .. }
            | E::OutsideLoop { .. } => render_names::render(f, e),
            E::Mismatch { .. }
            | E::Arity { .. }
            | E::WrongArgKind { .. }
            | E::NamedArgWithout { .. }
            | E::BadOperand { .. }
            | E::OperandsDontMix { .. }
            | E::NonBoolCondition { .. }
            | E::InvalidCast { .. }
            | E::ReturnMismatch { .. }
            | E::ReturnInKernel { .. }
            | E::MissingReturnValue { .. }
            | E::ReturnValueInUnitFn { .. }
            | E::MissingReturn { .. } => render_types::render(f, e),
            E::LaunchOnFn { .. }
            | E::MissingLaunch { .. }
            | E::UnknownLaunchKey { .. }
            | E::DuplicateLaunchKey { .. }
            | E::MissingLaunchKey { .. }
            | E::LaunchValueType { .. }
            | E::LaunchNotEvaluable { .. }
            | E::LaunchNotPositive { .. }
            | E::LaunchTooLarge { .. }
            | E::GridNotClusters { .. }
            | E::UnknownAttribute { .. }
            | E::BadAttributeArgs { .. }
            | E::DuplicateAttribute { .. } => render_launch::render(f, e),
            E::IncongruentLayout { .. }
            | E::LayoutEntry { .. }
            | E::NonPositiveExtent { .. }
            | E::NotConstant { .. }
            | E::ConstEval { .. }
            | E::ConstCycle { .. }
            | E::GenericCount { .. }
            | E::UnexpectedGenerics { .. }
            | E::BadGenericArg { .. } => render_consts::render(f, e),
            E::IndexRank { .. }
            | E::IndexNonTensor { .. }
            | E::IndexNotInt { .. }
            | E::UnknownField { .. }
            | E::UnknownMethod { .. }
            | E::Recursion { .. }
            | E::NotAValue { .. }
            | E::NotCallable { .. }
            | E::UnknownDefine { .. }
            | E::BadDefineValue { .. } => render_access::render(f, e),
            E::BadTensorType { .. }
            | E::UnboundDynDim { .. }
            | E::NonStaticParamLayout { .. }
            | E::BadAtom { .. }
            | E::TooDeep { .. }
            | E::ConstChainTooDeep { .. }
            | E::MisplacedWildcard { .. }
            | E::UnknownNamedArg { .. }
            | E::PositionalAfterNamed { .. }
            | E::BadConstGenericType { .. }
            | E::LiteralOutOfRange { .. }
            | E::DivisionByZero { .. }
            | E::StaticAssertFailed { .. } => render_misc::render(f, e),
        };
        // Each family renders every variant the match above sends it, so this fallback is never taken; it keeps
        // the checker total without a panic.
        rendered.unwrap_or_else(|| {
            Diagnostic::error("E0000", format!("unrendered checker error {e:?}"), f, Span::default())
        })
    }
}
