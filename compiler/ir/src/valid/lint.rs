//! Warnings about valid IR that will be slow: run after the pass pipeline, when what could be made constant
//! has been.

use crate::codes;
use crate::expr::Expr;
use crate::module::{Kernel, Module};
use crate::stmt::{Block, Stmt};
use crate::types::AddrSpace;
use cutec_diagnostics::Diagnostic;

/// Every warning of every kernel, in program order:
/// - `E0301`: a register array (`Local` allocation) accessed at an offset that is not a literal. The array
///   then lives in local memory (off-chip, cached) instead of registers.
pub fn warnings(module: &Module) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for k in &module.kernels {
        block(k, &k.body, &mut out);
    }
    out
}

fn block(k: &Kernel, b: &Block, out: &mut Vec<Diagnostic>) {
    for s in b.stmts() {
        match s {
            Stmt::Emit(h) => {
                if let Some(Expr::Offset { base, index, .. }) = k.exprs.get(*h)
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
                        .with_note("the tensor will live in local memory, which is much slower than registers")
                        .with_help("index it with constants, or inside a loop with constant bounds"),
                    );
                }
            }
            Stmt::If { accept, reject, .. } => {
                block(k, accept, out);
                block(k, reject, out);
            }
            Stmt::For { body, .. } => block(k, body, out),
            _ => {}
        }
    }
}
