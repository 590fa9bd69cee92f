//! Integers and sizes known while checking that cannot work (E0160, E0161): a constant expression whose value
//! leaves the 64-bit range, and a `copy` between tensors of different static sizes. Found here, at the
//! expression, rather than later by the lowering with less to say.

use cutec_diagnostics::{Diagnostic, FileId, Span};

#[derive(Clone, Debug)]
pub(crate) enum SizeDiag {
    /// `lhs op rhs` of two compile-time integers overflows `i64` (`256 * VEC` with `-D VEC=2^62`).
    Overflow {
        span: Span,
        /// The expression as written (`THREADS * VEC`).
        text: String,
        op: &'static str,
        lhs: i64,
        rhs: i64,
        /// The const generics the expression names, with their values: where a too large value came from.
        generics: Vec<(String, i64)>,
    },
    /// `copy(src, dst)` where both tensors have static sizes and they differ.
    CopySize { span: Span, src: (Span, i64, String), dst: (Span, i64, String) },
}

impl SizeDiag {
    pub fn to_diagnostic(&self, f: FileId) -> Diagnostic {
        match self {
            SizeDiag::Overflow { span, text, op, lhs, rhs, generics } => {
                let mut d = Diagnostic::error(
                    "E0160",
                    format!("`{text}` overflows: {lhs} {op} {rhs} is out of the range of 64-bit integers"),
                    f,
                    *span,
                )
                .with_primary_message("does not fit in 64 bits");
                if !generics.is_empty() {
                    let values: Vec<String> = generics.iter().map(|(n, v)| format!("{n} = {v}")).collect();
                    d = d.with_note(format!("with {}", values.join(", ")));
                }
                d.with_help(format!(
                    "compile-time integers are 64-bit signed, {} to {}; use smaller values",
                    i64::MIN,
                    i64::MAX
                ))
            }
            SizeDiag::CopySize { span, src, dst } => Diagnostic::error(
                "E0161",
                format!("`copy` from a tensor of {} elements to one of {}", src.1, dst.1),
                f,
                *span,
            )
            .with_primary_message("the two tensors must have the same number of elements")
            .with_label(f, src.0, format!("{} elements: layout {}", src.1, src.2))
            .with_label(f, dst.0, format!("{} elements: layout {}", dst.1, dst.2))
            .with_help(
                "copy a slice or tile of the larger tensor (`local_tile`, `t[_, i]`) that has the size of the other",
            ),
        }
    }
}
