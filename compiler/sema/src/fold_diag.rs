//! The layout-algebra errors found while folding (E0200..E0299), and their diagnostics.
//!
//! They are values like every other checker error ([`crate::errors::SemaError::Layout`] holds one); this file is
//! where they become text. The messages are the algebra's own ([`LayoutError`]'s `Display` names the operation
//! and the values involved); the checker adds the spans, the folded values of the arguments, and a help line
//! computed from the error's fields (the operation, the numbers that do not divide), never from its text.

use cutec_diagnostics::{Diagnostic, FileId, Span};
use cutec_layout::{LayoutError, LayoutOp};

/// A layout-algebra error of the program.
#[derive(Clone, Debug)]
pub(crate) enum LayoutDiag {
    /// An operation of the algebra failed on static values.
    Algebra {
        /// The operation called (`logical_divide`); the error names the one that failed, which may be another
        /// one computed on the way (`composition`). `None` outside any operation (`cutec layout --eval` of an
        /// unknown operation or a malformed swizzle).
        op: Option<LayoutOp>,
        error: LayoutError,
        /// The offending expression: the call, or the generic argument the error names.
        span: Span,
        /// The arguments that are not literals, with their folded values (`tv` is `(256,4):(4,1)`).
        args: Vec<(Span, String)>,
    },
    /// A static index beyond a static extent: `t[4, 0]` of a `(4,8)` tensor.
    IndexOutOfRange {
        span: Span,
        index: i64,
        extent: i64,
        /// The mode indexed; `None` for a single (linear) index.
        mode: Option<usize>,
        base: Span,
        layout: String,
    },
    /// More or fewer indices than the folded layout has modes (where the type did not know the rank).
    IndexCount { span: Span, found: usize, rank: usize, base: Span, layout: String },
    /// `composition(Swizzle<B,M,S>, L)` sends an offset of `L` outside `L`'s codomain.
    SwizzleOutside { span: Span, swizzle: String, layout: String, offset: i64, to: i64, cosize: i64 },
}

/// The code of an algebra error.
fn code_of(e: &LayoutError) -> &'static str {
    match e {
        LayoutError::NotDivisible { .. } => "E0200",
        LayoutError::RankMismatch { .. } => "E0201",
        LayoutError::Overflow { .. } => "E0202",
        LayoutError::NotInjective { .. } => "E0203",
        LayoutError::IndexOutOfRange { .. } => "E0204",
        LayoutError::Invalid { .. }
        | LayoutError::NeedsStatic { .. }
        | LayoutError::Swizzled { .. }
        | LayoutError::BadSwizzle { .. }
        | LayoutError::UnknownOp { .. } => "E0205",
    }
}

/// The divisors of `n` (up to a few), as "1, 2 or 4".
fn divisors(n: i64) -> String {
    let d: Vec<String> = (1..=n.min(1 << 20)).filter(|k| n % k == 0).take(6).map(|k| k.to_string()).collect();
    match d.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

fn help_for(op: Option<LayoutOp>, e: &LayoutError) -> Option<String> {
    match e {
        LayoutError::NotDivisible { numbers, .. } => match op {
            Some(LayoutOp::TileToShape) => {
                Some("make every mode of the target shape a multiple of the atom's".to_owned())
            }
            Some(op @ (LayoutOp::Upcast | LayoutOp::Downcast)) => {
                Some(format!("`{op}<N>` needs N to divide the layout's shapes and strides (or be a multiple of them)"))
            }
            _ => {
                let (x, y) = (*numbers)?;
                (x > 0 && y > 0).then(|| format!("make {x} divide {y} ({}), or make it a multiple of {y}", divisors(y)))
            }
        },
        LayoutError::RankMismatch { .. } => Some(match op {
            Some(LayoutOp::MakeLayout | LayoutOp::MakeOrderedLayout) => {
                "the stride needs the same nesting as the shape".to_owned()
            }
            Some(LayoutOp::Coalesce | LayoutOp::Filter) => {
                "the profile needs at most as many modes as the layout".to_owned()
            }
            _ => "a tuple tiler has at most one entry per mode of the layout; `_` keeps a mode whole".to_owned(),
        }),
        LayoutError::Overflow { .. } => Some("every size and index of a layout must fit in 64 bits".to_owned()),
        LayoutError::NotInjective { .. } => Some(
            "the layout maps two coordinates to one index; its modes, sorted by stride, must each start \
             where the previous one ends (stride >= previous size * stride)"
                .to_owned(),
        ),
        LayoutError::IndexOutOfRange { rank, index, .. } => Some(match (*rank, *index < 0) {
            (0, _) => "mode indices start at 0".to_owned(),
            (r, true) => format!("mode indices are not negative: they count from 0, and valid modes are 0..{r}"),
            (r, false) => format!("valid modes are 0..{r}"),
        }),
        LayoutError::Swizzled { .. } => {
            Some("apply the operation to the layout before composing the swizzle".to_owned())
        }
        LayoutError::NeedsStatic { .. }
        | LayoutError::BadSwizzle { .. }
        | LayoutError::UnknownOp { .. }
        | LayoutError::Invalid { .. } => None,
    }
}

impl LayoutDiag {
    pub fn to_diagnostic(&self, f: FileId) -> Diagnostic {
        match self {
            LayoutDiag::Algebra { op, error, span, args } => {
                let primary = match error {
                    LayoutError::NotDivisible { .. } => "the shapes and strides here do not divide".to_owned(),
                    LayoutError::RankMismatch { .. } => "ranks do not match".to_owned(),
                    LayoutError::Overflow { .. } => "overflows 64-bit integers".to_owned(),
                    LayoutError::NotInjective { .. } => "needs an injective layout".to_owned(),
                    LayoutError::IndexOutOfRange { index, .. } => format!("mode {index} does not exist"),
                    LayoutError::BadSwizzle { .. } => "not a swizzle".to_owned(),
                    LayoutError::UnknownOp { .. } => "not an operation of the layout algebra".to_owned(),
                    _ => match op.or(error.op()) {
                        Some(op) => format!("`{op}` has no result here"),
                        None => "no result here".to_owned(),
                    },
                };
                let mut d =
                    Diagnostic::error(code_of(error), error.to_string(), f, *span).with_primary_message(primary);
                for (s, v) in args {
                    d = d.with_label(f, *s, format!("this is `{v}`"));
                }
                if let (Some(op), Some(inner)) = (op, error.op())
                    && inner != *op
                {
                    d = d.with_note(format!("`{op}` computes a `{inner}` on the way"));
                }
                match help_for(*op, error) {
                    Some(h) => d.with_help(h),
                    None => d,
                }
            }
            LayoutDiag::IndexOutOfRange { span, index, extent, mode, base, layout } => {
                let whose = match mode {
                    Some(m) => format!("mode {m} of extent {extent}"),
                    None => format!("a tensor of {extent} elements"),
                };
                let valid = match mode {
                    Some(m) => format!("valid indices of mode {m} are 0..{extent}"),
                    None => format!("valid indices are 0..{extent}"),
                };
                Diagnostic::error("E0206", format!("index {index} is out of range for {whose}"), f, *span)
                    .with_primary_message("index out of range")
                    .with_label(f, *base, format!("this tensor's layout is `{layout}`"))
                    .with_help(valid)
            }
            LayoutDiag::IndexCount { span, found, rank, base, layout } => {
                let n = if *found == 1 { "1 index".to_owned() } else { format!("{found} indices") };
                Diagnostic::error("E0207", format!("this tensor has rank {rank} but {n} were given"), f, *span)
                    .with_primary_message(format!("expected 1 or {rank} indices"))
                    .with_label(f, *base, format!("this tensor's layout is `{layout}`"))
                    .with_note("one index reads the tensor in colexicographic order; otherwise give one per mode")
            }
            LayoutDiag::SwizzleOutside { span, swizzle, layout, offset, to, cosize } => Diagnostic::error(
                "E0208",
                format!("{swizzle} maps offset {offset} of {layout} to {to}, outside its {cosize} elements"),
                f,
                *span,
            )
            .with_primary_message("the swizzled layout leaves its codomain")
            .with_note(format!(
                "a swizzle xors bits of each offset; the layout's codomain must be a whole number of the swizzle's \
                 blocks for the result to stay inside it ({cosize} elements here)"
            ))
            .with_help("pad the layout's codomain, or use a swizzle with fewer bits"),
        }
    }
}

/// The diagnostic of an algebra error outside any program (`cutec layout --eval`): the code, message and help
/// it has in a program, with the primary label on `span` (the whole expression).
pub fn algebra_diagnostic(error: &LayoutError, file: FileId, span: Span) -> Diagnostic {
    LayoutDiag::Algebra { op: error.op(), error: error.clone(), span, args: Vec::new() }.to_diagnostic(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divisibility_help_names_the_divisors() {
        let e = LayoutError::NotDivisible {
            op: LayoutOp::Composition,
            what: "shape 3 and shape 4 of (4,4):(1,8) do not divide each other".to_owned(),
            numbers: Some((3, 4)),
        };
        assert_eq!(
            help_for(Some(LayoutOp::Composition), &e).as_deref(),
            Some("make 3 divide 4 (1, 2 or 4), or make it a multiple of 4")
        );
        assert_eq!(divisors(12), "1, 2, 3, 4, 6 or 12");
        assert_eq!(divisors(1), "1");
        let unknown = LayoutError::NotDivisible { op: LayoutOp::Composition, what: String::new(), numbers: None };
        assert_eq!(help_for(Some(LayoutOp::Composition), &unknown), None);
    }
}
