//! The launches the check runs: values of the kernel's integer parameters that make its loops run 0, 1, 2, ...
//! times (up to 3 for a loop that holds another loop, the tiles of a persistent kernel; up to 2S + 1 for the
//! others, the k-tiles of an S-stage ring), found by evaluating each loop's bounds for candidate values.

use super::value::{Base, Relevant, Shape, Val, apply, global, per_thread, special};
use crate::arena::Handle;
use crate::expr::Expr;
use crate::module::Kernel;
use crate::stmt::{Block, Stmt};
use crate::types::Type;
use crate::valid::KernelInfo;
use std::collections::BTreeMap;

/// At most this many launches per kernel (the smallest trip counts first).
const MAX_CONFIGS: usize = 48;
/// Combinations of candidate values evaluated at most.
const MAX_COMBINATIONS: usize = 4096;

/// One launch: the parameters' values, the grid (clusters, the one simulated), and how to say them.
pub(super) struct Config {
    pub params: Vec<Val>,
    pub grid: (u32, u32),
    pub desc: String,
}

/// The grids: one cluster, and two of which the second is simulated (a persistent kernel's last cluster gets
/// the fewest tiles, none when there are fewer tiles than clusters).
const GRIDS: [(u32, u32); 2] = [(1, 0), (2, 1)];

/// A `for` loop whose bounds the configurations vary: its bounds, and whether it holds another loop.
struct Loop {
    start: Handle<Expr>,
    end: Handle<Expr>,
    step: i64,
    outer: bool,
}

fn loops(block: &Block, out: &mut Vec<Loop>) {
    for s in block.stmts() {
        if let Stmt::For { start, end, step, body, .. } = s {
            let mut inner = false;
            body.visit(&mut |s| inner |= matches!(s, Stmt::For { .. } | Stmt::While { .. }));
            out.push(Loop { start: *start, end: *end, step: (*step).max(1), outer: inner });
        }
        for b in s.blocks() {
            loops(b, out);
        }
    }
}

/// Candidate values of an integer parameter (a dynamic dimension, at least 1: TMA maps and grids need it):
/// c * 2^j for c in 1..=9, which give every trip count up to 9 of a `ceil_div(D, t)` for tiles t that are a
/// small number times a power of two.
fn candidates() -> Vec<i64> {
    let mut v: Vec<i64> = Vec::new();
    for j in 0..15 {
        for c in 1..=9i64 {
            v.push(c << j);
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// The expressions the loops' bounds are computed from, in order (operands first), and where each expression
/// of the arena is among them. Only these are evaluated (the search below evaluates thousands of launches, and a
/// kernel's arena holds tens of thousands of expressions): found once, for every launch.
struct Needed<'k> {
    exprs: Vec<(Handle<Expr>, &'k Expr)>,
    at: Vec<u32>,
    /// The operands of each (where they are among them, `u32::MAX` for the others; every expression has at
    /// most three operands, and `apply` reads no more), and how many.
    operands: Vec<([u32; 3], usize)>,
}

impl<'k> Needed<'k> {
    fn of(kernel: &'k Kernel, relevant: &Relevant, bounds: &[bool]) -> Needed<'k> {
        let exprs: Vec<(Handle<Expr>, &Expr)> = kernel
            .exprs
            .iter()
            .filter(|(h, _)| relevant.expr(*h) && bounds.get(h.index()).copied().unwrap_or(false))
            .collect();
        let mut at = vec![u32::MAX; kernel.exprs.len()];
        for (i, (h, _)) in exprs.iter().enumerate() {
            if let Some(x) = at.get_mut(h.index()) {
                *x = i as u32;
            }
        }
        let operands = exprs
            .iter()
            .map(|(_, e)| {
                let (mut ops, mut n) = ([u32::MAX; 3], 0);
                e.for_each_operand(|o| {
                    if let Some(x) = ops.get_mut(n) {
                        *x = at.get(o.index()).copied().unwrap_or(u32::MAX);
                    }
                    n += 1;
                });
                (ops, n.min(3))
            })
            .collect();
        Needed { exprs, at, operands }
    }
    /// The value of `h` among `vals` (one per needed expression); the others read as unknown.
    fn get(&self, vals: &[Val], h: Handle<Expr>) -> Val {
        self.at.get(h.index()).and_then(|&i| vals.get(i as usize)).copied().unwrap_or(Val::Unknown)
    }
}

/// The trip count of each loop in each CTA of the cluster (`None` where a bound depends on a thread or a
/// variable), with the parameters `params`.
fn trips(info: &KernelInfo, shape: &Shape, ls: &[Loop], needed: &Needed) -> Vec<Option<i64>> {
    let mut out = Vec::new();
    let mut vals: Vec<Val> = Vec::with_capacity(needed.exprs.len());
    for cta in 0..shape.ctas() as usize {
        vals.clear();
        for (&(h, e), (ops, n)) in needed.exprs.iter().zip(&needed.operands) {
            let v = if let Some(g) = global(e, shape) {
                g
            } else {
                match *e {
                    Expr::Special(s) if per_thread(s) => Val::Unknown,
                    Expr::Special(s) => special(s, shape, cta, 0),
                    Expr::ReadVar(_) | Expr::OpResult(_) => Val::Unknown,
                    _ => {
                        let a = ops.map(|i| vals.get(i as usize).copied().unwrap_or(Val::Unknown));
                        apply(e, info.ty(h), a.get(..*n).unwrap_or(&a))
                    }
                }
            };
            vals.push(v);
        }
        for l in ls {
            let at = |h: Handle<Expr>| Some(needed.get(&vals, h));
            out.push(match (at(l.start), at(l.end)) {
                (Some(Val::Int(s)), Some(Val::Int(e))) => Some((e.saturating_sub(s).max(0) + l.step - 1) / l.step),
                _ => None,
            });
        }
    }
    out
}

fn within(t: &[Option<i64>], ls: &[Loop], stages: i64) -> bool {
    t.iter().enumerate().all(|(i, t)| {
        let outer = ls.get(i % ls.len().max(1)).is_some_and(|l| l.outer);
        t.is_none_or(|t| t <= if outer { 3 } else { 2 * stages + 1 })
    })
}

/// Which expressions the bounds of the loops `ls` are computed from (operands are earlier expressions, so one
/// backward sweep over the arena finds them all).
fn bound_exprs(kernel: &Kernel, ls: &[Loop]) -> Vec<bool> {
    let mut needed = vec![false; kernel.exprs.len()];
    for l in ls {
        for h in [l.start, l.end] {
            if let Some(n) = needed.get_mut(h.index()) {
                *n = true;
            }
        }
    }
    let all: Vec<_> = kernel.exprs.iter().collect();
    for (h, e) in all.into_iter().rev() {
        if needed.get(h.index()).copied().unwrap_or(false) {
            e.for_each_operand(|o| {
                if let Some(n) = needed.get_mut(o.index()) {
                    *n = true;
                }
            });
        }
    }
    needed
}

/// The launches to run, the smallest first.
pub(super) fn configs(
    kernel: &Kernel,
    info: &KernelInfo,
    relevant: &Relevant,
    block: [u32; 3],
    cluster: [u32; 3],
    stages: i64,
) -> Vec<Config> {
    let mut ls = Vec::new();
    loops(&kernel.body, &mut ls);
    let bounds = bound_exprs(kernel, &ls);
    let needed = Needed::of(kernel, relevant, &bounds);
    let ints: Vec<usize> = (0..kernel.params.len())
        .filter(|&i| kernel.params.get(i).is_some_and(|p| p.ty == Type::I32 || p.ty == Type::I64))
        .collect();
    let base: Vec<Val> =
        (0..kernel.params.len())
            .map(|i| {
                if ints.contains(&i) {
                    Val::Int(1)
                } else {
                    Val::Ptr { base: Base::Param(i as u32), off: 0, rank: None }
                }
            })
            .collect();
    let shape_of = |params: Vec<Val>, (clusters, index): (u32, u32)| Shape { block, cluster, params, clusters, index };
    // Each parameter alone (the others 1): one value per distinct vector of trip counts in range.
    let mut choices: Vec<Vec<i64>> = Vec::new();
    for &p in &ints {
        let mut seen: BTreeMap<Vec<Option<i64>>, i64> = BTreeMap::new();
        for c in candidates() {
            let mut params = base.clone();
            if let Some(x) = params.get_mut(p) {
                *x = Val::Int(c);
            }
            let t = trips(info, &shape_of(params, (1, 0)), &ls, &needed);
            // Per vector, the smallest value with the most factors of two (up to 256): divisibility the launch
            // may require (a `static_assert(K % 64 == 0)` checked at run time) holds for it.
            let rank = |v: i64| (v.trailing_zeros().min(8), -v);
            let better = |old: i64| rank(c) > rank(old);
            if within(&t, &ls, stages) && seen.get(&t).is_none_or(|&old| better(old)) {
                seen.insert(t, c);
            }
        }
        let mut vals: Vec<i64> = seen.into_values().collect();
        vals.sort_unstable();
        if vals.is_empty() {
            vals.push(1);
        }
        choices.push(vals);
    }
    // Their combinations, again one per distinct vector of trip counts in range.
    let mut combos: Vec<Vec<i64>> = vec![Vec::new()];
    for c in &choices {
        combos = combos
            .iter()
            .flat_map(|prefix| {
                c.iter().map(move |&v| {
                    let mut p = prefix.clone();
                    p.push(v);
                    p
                })
            })
            .take(MAX_COMBINATIONS)
            .collect();
    }
    // Per vector of trip counts, the first grid and parameter values that give it.
    type Found = BTreeMap<Vec<Option<i64>>, ((u32, u32), Vec<i64>)>;
    let mut found: Found = BTreeMap::new();
    for grid in GRIDS {
        for combo in &combos {
            let mut params = base.clone();
            for (&p, &v) in ints.iter().zip(combo) {
                if let Some(x) = params.get_mut(p) {
                    *x = Val::Int(v);
                }
            }
            let t = trips(info, &shape_of(params, grid), &ls, &needed);
            if within(&t, &ls, stages) {
                found.entry(t).or_insert((grid, combo.clone()));
            }
        }
    }
    let mut picked: Vec<(i64, (u32, u32), Vec<i64>)> =
        found.into_iter().map(|(t, (g, c))| (t.iter().map(|t| t.unwrap_or(0)).sum(), g, c)).collect();
    picked.sort();
    picked.truncate(MAX_CONFIGS);
    if picked.is_empty() {
        picked.push((0, (1, 0), ints.iter().map(|_| 1).collect()));
    }
    picked
        .into_iter()
        .map(|(_, grid, combo)| {
            let mut params = base.clone();
            let mut desc = Vec::new();
            for (&p, &v) in ints.iter().zip(&combo) {
                if let Some(x) = params.get_mut(p) {
                    *x = Val::Int(v);
                }
                if let Some(param) = kernel.params.get(p) {
                    desc.push(format!("{} = {v}", param.name));
                }
            }
            if grid.0 > 1 {
                desc.push(format!("a grid of {} clusters, of which the last is run", grid.0));
            }
            Config { params, grid, desc: desc.join(", ") }
        })
        .collect()
}
