//! `check-fragment-bounds`: no access to a register array (a `Local` allocation: fragments, accumulators) at a
//! constant offset outside it. After `unroll`, the indices of `for i in 0..n { r[i] }` are literals; an access past
//! the array would be undefined behaviour in LLVM, which may then delete the code around it (a kernel whose body
//! becomes `ret`), so it is E0323 at the access instead. Offsets known only at run time are E0301's warning (the
//! array may leave registers); they are not checked here.

use super::{Analyses, FragmentAccess, Pass, PassError, PassErrorKind};
use crate::arena::Handle;
use crate::expr::Expr;
use crate::module::{Kernel, Module};
use crate::op::Op;
use crate::stmt::Stmt;
use crate::types::{AddrSpace, Type};

pub struct CheckFragmentBounds;

impl Pass for CheckFragmentBounds {
    fn name(&self) -> &'static str {
        "check-fragment-bounds"
    }
    fn description(&self) -> &'static str {
        "refuse constant accesses outside a register array (changes nothing)"
    }
    fn run(&self, module: &mut Module, analyses: &mut Analyses) -> Result<(), PassError> {
        let module = &*module;
        let info = analyses.info(module).map_err(|e| PassError {
            pass: self.name(),
            kernel: e.kernel.clone(),
            loc: e.loc,
            kind: PassErrorKind::Invalid(Box::new(e)),
        })?;
        for (kernel, kinfo) in module.kernels.iter().zip(&info.kernels) {
            let mut found = None;
            kernel.body.visit(&mut |s| {
                // Register arrays are read and written only by loads and stores (an operation's operands are values).
                let access = if let Stmt::Op { op: Op::Load { ptr, ty, .. }, .. } = s {
                    Some((*ptr, *ty))
                } else if let Stmt::Store { ptr, value, .. } = s {
                    Some((*ptr, kinfo.ty(*value)))
                } else {
                    None
                };
                if found.is_none()
                    && let Some((ptr, ty)) = access
                {
                    found = outside(kernel, ptr, ty).map(|kind| (ptr, kind));
                }
            });
            if let Some((ptr, kind)) = found {
                return Err(PassError {
                    pass: self.name(),
                    kernel: kernel.name.clone(),
                    loc: kernel.exprs.loc(ptr),
                    kind,
                });
            }
        }
        Ok(())
    }
    fn preserves_all(&self) -> bool {
        true
    }
}

/// The error for an access of `ty` at `ptr` when `ptr` is a register array's base plus a literal number of
/// elements and the access does not fit in the array.
fn outside(kernel: &Kernel, ptr: Handle<Expr>, ty: Type) -> Option<PassErrorKind> {
    let Some(Expr::Offset { base, index, elem }) = kernel.exprs.get(ptr) else { return None };
    let Some(Expr::AllocPtr(a)) = kernel.exprs.get(*base) else { return None };
    let alloc = kernel.allocs.get(*a).filter(|a| a.space == AddrSpace::Local)?;
    let Some(Expr::Literal(l)) = kernel.exprs.get(*index) else { return None };
    let index = l.as_int()?;
    let start = i128::from(index) * i128::from(elem.size_bytes());
    let end = start + i128::from(ty.size_bytes());
    let size = i128::from(alloc.size_bytes());
    if start >= 0 && end <= size {
        return None;
    }
    let elems = i128::from(alloc.len);
    let per = i128::from(alloc.elem.size_bytes().max(1));
    Some(PassErrorKind::FragmentIndex(Box::new(FragmentAccess {
        array: alloc.name.clone(),
        first: start.div_euclid(per),
        last: (end - 1).div_euclid(per),
        len: elems,
    })))
}
