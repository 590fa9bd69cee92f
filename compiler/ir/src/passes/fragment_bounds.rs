//! `check-fragment-bounds`: no access to a register array (a `Local` allocation: fragments, accumulators) outside
//! it. An access past the array would be undefined behaviour in LLVM, which may then delete the code around it (a
//! kernel whose body becomes `ret`), so it is E0323 at the access instead. After `unroll`, the indices of
//! `for i in 0..n { r[i] }` are literals; an index known only at run time must be proved inside the array by the
//! range analysis ([`crate::analysis::range`]: loop bounds, thread indices, masks), or it is refused with the
//! range found. (It is also E0301's warning: the array may leave registers.)

use super::{Analyses, FragmentAccess, Pass, PassError, PassErrorKind, Preserved};
use crate::analysis::range::{Ranges, Region};
use crate::arena::Handle;
use crate::expr::Expr;
use crate::module::{Kernel, Module};
use crate::op::Op;
use crate::stmt::{Block, Stmt};
use crate::types::{AddrSpace, Type};
use crate::valid::KernelInfo;

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
        super::module_info(self, module, analyses)?;
        for (i, kernel) in module.kernels.iter().enumerate() {
            let Some(mut ranges) = super::kernel_ranges(self, module, analyses, i)? else { continue };
            let kinfo = ranges.info();
            let cta = ranges.cta();
            if let Some((ptr, kind)) = first_outside(kernel, kinfo, &mut ranges, &kernel.body, cta) {
                return Err(PassError::at(self.name(), kernel, kernel.exprs.loc(ptr), kind));
            }
        }
        Ok(())
    }
    fn preserves(&self) -> Preserved {
        Preserved::ALL
    }
}

/// The first access of `block` (run by the threads of `region`) outside its register array.
fn first_outside(
    kernel: &Kernel,
    info: &KernelInfo,
    ranges: &mut Ranges<'_>,
    block: &Block,
    region: Region,
) -> Option<(Handle<Expr>, PassErrorKind)> {
    for stmt in block.stmts() {
        // Register arrays are read and written only by loads and stores (an operation's operands are values).
        let access = match stmt {
            Stmt::Op { op: Op::Load { ptr, ty, .. }, .. } => Some((*ptr, *ty)),
            Stmt::Store { ptr, value, .. } => Some((*ptr, info.ty(*value))),
            _ => None,
        };
        if let Some((ptr, ty)) = access
            && let Some(kind) = outside(kernel, ranges, region, ptr, ty)
        {
            return Some((ptr, kind));
        }
        if let Stmt::Roles(regions) = stmt {
            for r in regions {
                let inner = ranges.role(region, &r.role);
                if let Some(found) = first_outside(kernel, info, ranges, &r.body, inner) {
                    return Some(found);
                }
            }
            continue;
        }
        for b in stmt.blocks() {
            if let Some(found) = first_outside(kernel, info, ranges, b, region) {
                return Some(found);
            }
        }
    }
    None
}

/// The error for an access of `ty` at `ptr` when `ptr` is a register array's base plus a number of elements
/// whose range (in `region`) does not lie inside the array.
fn outside(
    kernel: &Kernel,
    ranges: &mut Ranges<'_>,
    region: Region,
    ptr: Handle<Expr>,
    ty: Type,
) -> Option<PassErrorKind> {
    let Some(Expr::Offset { base, index, elem }) = kernel.exprs.get(ptr) else { return None };
    let Some(Expr::AllocPtr(a)) = kernel.exprs.get(*base) else { return None };
    let alloc = kernel.allocs.get(*a).filter(|a| a.space == AddrSpace::Local)?;
    let range = ranges.of(region, *index);
    let (lo, hi) = if range.is_empty() { (i128::MIN / 4, i128::MAX / 4) } else { (range.lo, range.hi) };
    let step = i128::from(elem.size_bytes());
    let start = lo.saturating_mul(step);
    let end = hi.saturating_mul(step).saturating_add(i128::from(ty.size_bytes()));
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
        known: range.as_exact().is_some(),
    })))
}
