//! Warnings about valid IR that will be slow: run after the pass pipeline, when what could be made constant
//! has been.

use crate::codes;
use crate::expr::Expr;
use crate::module::{Kernel, Module};
use crate::stmt::Stmt;
use crate::types::AddrSpace;
use cutec_diagnostics::Diagnostic;
use std::collections::BTreeSet;

/// Every warning of every kernel, in program order, once per source span (a loop unrolled 16 times has 16
/// copies of its accesses, with one span):
/// - `E0301`: a register array (`Local` allocation) accessed at an offset that is not a literal. ptxas may then
///   place the array in local memory (off-chip, cached) instead of registers, unless it can remove the run-time
///   indexing itself.
pub fn warnings(module: &Module) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for k in &module.kernels {
        k.body.visit(&mut |s| offsets(k, s, &mut out));
    }
    let mut seen = BTreeSet::new();
    out.retain(|d| d.primary().is_none_or(|l| seen.insert((d.code, l.file, l.span, d.message.clone()))));
    out
}

/// E0301 for an emitted offset into a register array by a non-literal index.
fn offsets(k: &Kernel, s: &Stmt, out: &mut Vec<Diagnostic>) {
    if let Stmt::Emit(h) = s
        && let Some(Expr::Offset { base, index, .. }) = k.exprs.get(*h)
        && let Some(Expr::AllocPtr(a)) = k.exprs.get(*base)
        && k.allocs.get(*a).is_some_and(|a| a.space == AddrSpace::Local)
        && !matches!(k.exprs.get(*index), Some(Expr::Literal(_)))
    {
        let name = k.allocs.get(*a).map_or("", |a| a.name.as_str());
        let loc = k.exprs.loc(*h);
        out.push(
            Diagnostic::warning(
                codes::DYNAMIC_FRAGMENT_INDEX,
                format!("register tensor `{name}` is indexed with a value known only at run time"),
                loc.file,
                loc.span,
            )
            .with_primary_message("this index is not a compile-time constant")
            .with_note(
                "the tensor may be placed in local memory (much slower than registers) unless ptxas can \
                     remove the run-time indexing",
            )
            .with_help(
                "index it with compile-time constants: loop over it with constant bounds and `unroll`, \
                     and avoid run-time values in the index",
            ),
        );
    }
}
