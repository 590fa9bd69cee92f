//! The dependency graph of a loop body: what a software pipeliner schedules.
//!
//! **Nodes** are the statements of the body in program order (for a `while`, the header's then the body's); a
//! statement with nested blocks is one node with everything nested in it. **Edges** say that one statement must
//! stay before another, and why ([`DepKind`]):
//!
//! - `data`: SSA def-use, a value defined by one statement (an emission or an operation's result) and used by
//!   the other;
//! - `var.raw|war|waw`: a variable written then read, read then written, or written twice;
//! - `mem.raw|war|waw(@stages)`: memory accesses that may touch the same bytes, named by the resource they touch
//!   ([`Resource`]: an allocation, a pointer parameter's memory, or an unknown place of an address space): two
//!   accesses to distinct allocations never conflict, and a TMA load does not access the mbarrier it signals;
//! - `order`: a barrier or fence (`bar.sync`, `mbarrier.wait`, `wgmma.wait_group`...) and a memory access it
//!   orders;
//! - `async`: an asynchronous operation (a TMA copy, a `wgmma.mma_async`, a commit) and a later wait of its
//!   domain ([`Domain`](crate::effects::Domain)): a TMA load and a wait on the mbarrier it signals (or one that may be it), wgmma groups
//!   and `wgmma.wait_group`, TMA stores and `bulk.wait_group`.
//!
//! An edge has a **distance**: 0 within one iteration (from an earlier statement to a later one), 1 from a
//! statement of iteration `i` to one of iteration `i + 1` (*loop-carried*; it may go backwards, or from a
//! statement to itself, as an accumulator's read-after-write does), or S when both accesses behind a memory
//! edge are proved to stay inside stage `i % S` of one ring ([`crate::analysis::stages`]): stage `i % S` and
//! stage `(i + 1) % S` are disjoint, so the access of iteration `k` meets only that of iteration `k + S`.
//!
//! The graph prints as a stable text form ([`DepGraph::to_text`], snapshot-tested) and as Graphviz DOT
//! ([`DepGraph::to_dot`]).

use crate::analysis::stages::{self, Stage};
use crate::arena::Handle;
use crate::effects::{self, Access, Effects, Footprint, Resource};
use crate::expr::Expr;
use crate::module::{Kernel, Var};
use crate::print::stmt_line;
use crate::stmt::{Block, Stmt};
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use std::collections::HashSet;
use std::fmt::Write;

/// A read-after-write, write-after-read or write-after-write hazard.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Hazard {
    Raw,
    War,
    Waw,
}

impl Hazard {
    pub fn name(self) -> &'static str {
        match self {
            Hazard::Raw => "raw",
            Hazard::War => "war",
            Hazard::Waw => "waw",
        }
    }
}

/// Why one statement must stay before another.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum DepKind {
    Data,
    Var(Hazard),
    /// A hazard on a resource: its index in the graph's table ([`DepGraph::resource_name`]).
    Memory(Hazard, u32),
    Order,
    Async,
}

/// An edge: its kind and its iteration distance (0, 1, or a ring's S).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Dep {
    pub kind: DepKind,
    pub distance: u32,
}

/// A statement of the loop body.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Its position among the body's statements.
    pub index: usize,
    /// Its first line in the text form.
    pub label: String,
    /// Its effects, nested statements included.
    pub effects: Effects,
}

/// The dependency graph of one loop body (see the module documentation).
#[derive(Clone, Debug)]
pub struct DepGraph {
    graph: DiGraph<Node, Dep>,
    /// The resources memory edges name, by index, with their names in the text form.
    resources: Vec<(Resource, String)>,
}

/// What one statement (with its nested blocks) defines, uses, reads and writes.
#[derive(Default)]
struct Summary {
    defs: HashSet<Handle<Expr>>,
    uses: HashSet<Handle<Expr>>,
    reads: HashSet<Handle<Var>>,
    writes: HashSet<Handle<Var>>,
    effects: Effects,
    foot: Footprint,
    /// The ring stage each of `foot`'s accesses stays inside, if proved (for the loop's variable `var`).
    stages: Vec<Option<Stage>>,
}

fn summarize(k: &Kernel, s: &Stmt, var: Option<Handle<Var>>) -> Summary {
    let foot = Footprint::deep(k, s);
    let stage = |x: &Access| -> Option<Stage> {
        let (ptr, bytes) = x.at?;
        stages::stage_of(k, ptr, bytes, var?)
    };
    let stages = foot.accesses.iter().map(stage).collect();
    let mut sum = Summary { effects: effects::deep(k, s), foot, stages, ..Summary::default() };
    let mut visit = |s: &Stmt| {
        sum.defs.extend(s.defines());
        s.for_each_use(&k.exprs, |h| {
            sum.uses.insert(h);
        });
        sum.reads.extend(s.reads_var(&k.exprs));
        sum.writes.extend(s.writes_var());
    };
    visit(s);
    for b in s.blocks() {
        b.visit(&mut visit);
    }
    // Values defined and used inside the statement are its own business.
    let defs = sum.defs.clone();
    sum.uses.retain(|h| !defs.contains(h));
    sum
}

/// `s`'s accesses that write (or read, `write` false), each with its ring stage.
fn accesses(s: &Summary, write: bool) -> impl Iterator<Item = (&Access, &Option<Stage>)> {
    s.foot.accesses.iter().zip(&s.stages).filter(move |(x, _)| x.write == write)
}

/// The hazards from `a` (earlier) to `b` (later) over memory, each with the resource it is on (`a`'s, unless
/// only `b`'s is named) and, for a loop-carried one (`carried`), its distance: `S`
/// when every pair of accesses behind it stays inside the stages `i % S` of one ring ([`stages`]), else 1.
fn memory(k: &Kernel, a: &Summary, b: &Summary, carried: bool) -> Vec<(Hazard, Resource, u32)> {
    let mut out: Vec<(Hazard, Resource, u32)> = Vec::new();
    let named = |x: Resource, y: Resource| match x {
        Resource::Space(_) | Resource::Any => y,
        _ => x,
    };
    for (hazard, from_write, to_write) in
        [(Hazard::Raw, true, false), (Hazard::War, false, true), (Hazard::Waw, true, true)]
    {
        for (x, sx) in accesses(a, from_write) {
            for (y, sy) in accesses(b, to_write) {
                if !x.resource.may_alias(y.resource, k) {
                    continue;
                }
                let distance = match (sx, sy) {
                    (Some(s), Some(t)) if carried && s == t => u32::try_from(s.modulus).unwrap_or(1),
                    _ => 1,
                };
                let resource = named(x.resource, y.resource);
                match out.iter_mut().find(|(h, r, _)| *h == hazard && *r == resource) {
                    Some(found) => found.2 = found.2.min(distance),
                    None => out.push((hazard, resource, distance)),
                }
            }
        }
    }
    out
}

/// Whether `a` starts asynchronous work that a wait of `b` may complete.
fn completes(k: &Kernel, a: &Footprint, b: &Footprint) -> bool {
    a.starts.iter().any(|&s| b.completes.iter().any(|&w| s.completed_by(w, k)))
}

fn vars(a: &Summary, b: &Summary) -> Vec<DepKind> {
    let meets = |x: &HashSet<Handle<Var>>, y: &HashSet<Handle<Var>>| x.iter().any(|v| y.contains(v));
    let mut out = Vec::new();
    if meets(&a.writes, &b.reads) {
        out.push(DepKind::Var(Hazard::Raw));
    }
    if meets(&a.reads, &b.writes) {
        out.push(DepKind::Var(Hazard::War));
    }
    if meets(&a.writes, &b.writes) {
        out.push(DepKind::Var(Hazard::Waw));
    }
    out
}

/// Whether a barrier orders the two (one is a barrier, the other touches memory or is a barrier too).
fn ordered(a: Effects, b: Effects) -> bool {
    let barrier = |e: Effects| e.contains(Effects::BARRIER);
    let memory = |e: Effects| e.touches_memory() || barrier(e);
    (barrier(a) && memory(b)) || (barrier(b) && memory(a))
}

impl DepGraph {
    /// The graph of a loop statement's body (`None` if `stmt` is not a loop).
    pub fn of_loop(kernel: &Kernel, stmt: &Stmt) -> Option<DepGraph> {
        if !stmt.is_loop() {
            return None;
        }
        // A `for`'s body; a `while`'s header, then its body.
        let stmts: Vec<&Stmt> = stmt.blocks().flat_map(|b| b.stmts()).collect();
        // The stages of a ring are told apart by a `for` variable that steps by 1 from a non-negative start.
        let var = match *stmt {
            Stmt::For { var, start, step: 1, .. } if stages::nonnegative(kernel, start) => Some(var),
            _ => None,
        };
        Some(DepGraph::of_stmts(kernel, &stmts, var))
    }

    /// The graph of a block taken as a loop body.
    pub fn of_block(kernel: &Kernel, body: &Block) -> DepGraph {
        DepGraph::of_stmts(kernel, &body.stmts().iter().collect::<Vec<_>>(), None)
    }

    fn of_stmts(kernel: &Kernel, stmts: &[&Stmt], var: Option<Handle<Var>>) -> DepGraph {
        let sums: Vec<Summary> = stmts.iter().map(|s| summarize(kernel, s, var)).collect();
        let mut graph = DiGraph::new();
        let mut resources: Vec<(Resource, String)> = Vec::new();
        let mut index_of = |r: Resource| -> u32 {
            let i = resources.iter().position(|(x, _)| *x == r).unwrap_or_else(|| {
                resources.push((r, r.name(kernel)));
                resources.len() - 1
            });
            i as u32
        };
        let nodes: Vec<NodeIndex> = stmts
            .iter()
            .zip(&sums)
            .enumerate()
            .map(|(index, (s, sum))| graph.add_node(Node { index, label: stmt_line(kernel, s), effects: sum.effects }))
            .collect();
        let n = stmts.len();
        for i in 0..n {
            for j in 0..n {
                let (a, b) = (&sums[i], &sums[j]);
                let mut kinds: Vec<(DepKind, u32)> = Vec::new();
                if i < j {
                    // Within one iteration, from the earlier statement to the later one.
                    let mem = memory(kernel, a, b, false);
                    if b.uses.iter().any(|h| a.defs.contains(h)) {
                        kinds.push((DepKind::Data, 0));
                    }
                    kinds.extend(vars(a, b).into_iter().map(|k| (k, 0)));
                    let any_mem = !mem.is_empty();
                    kinds.extend(mem.into_iter().map(|(h, r, _)| (DepKind::Memory(h, index_of(r)), 0)));
                    if !any_mem && ordered(a.effects, b.effects) {
                        kinds.push((DepKind::Order, 0));
                    }
                    if completes(kernel, &a.foot, &b.foot) {
                        kinds.push((DepKind::Async, 0));
                    }
                } else {
                    // From iteration k's statement i to a later iteration's statement j (j <= i): iteration k + 1,
                    // or k + S for accesses that stay in the stages of a ring. A statement to itself only through a
                    // read-after-write (an accumulator): its other self-hazards are its own order.
                    let mem = memory(kernel, a, b, true);
                    let mut carried: Vec<(DepKind, u32)> = vars(a, b).into_iter().map(|k| (k, 1)).collect();
                    carried.extend(mem.into_iter().map(|(h, r, d)| (DepKind::Memory(h, index_of(r)), d)));
                    if i == j {
                        carried
                            .retain(|(k, _)| matches!(k, DepKind::Var(Hazard::Raw) | DepKind::Memory(Hazard::Raw, _)));
                    } else {
                        if carried.iter().all(|(k, _)| !matches!(k, DepKind::Memory(..)))
                            && ordered(a.effects, b.effects)
                        {
                            carried.push((DepKind::Order, 1));
                        }
                        if completes(kernel, &a.foot, &b.foot) {
                            carried.push((DepKind::Async, 1));
                        }
                    }
                    kinds.extend(carried);
                }
                kinds.iter().for_each(|&(kind, distance)| {
                    graph.add_edge(nodes[i], nodes[j], Dep { kind, distance });
                });
            }
        }
        DepGraph { graph, resources }
    }

    /// How the text form names an edge's kind: `data`, `var.raw`, `mem.war(@stages)`, `order`, `async`.
    pub fn kind_name(&self, kind: DepKind) -> String {
        match kind {
            DepKind::Data => "data".into(),
            DepKind::Var(h) => format!("var.{}", h.name()),
            DepKind::Memory(h, r) => format!("mem.{}({})", h.name(), self.resource_name(r)),
            DepKind::Order => "order".into(),
            DepKind::Async => "async".into(),
        }
    }

    /// The name of resource `index` of a memory edge (`@stages`, `%out`, `shared`).
    pub fn resource_name(&self, index: u32) -> &str {
        self.resources.get(index as usize).map_or("?", |(_, n)| n.as_str())
    }

    /// The petgraph graph, for algorithms (cycles, longest paths).
    pub fn graph(&self) -> &DiGraph<Node, Dep> {
        &self.graph
    }
    pub fn node_count(&self) -> usize {
        self.graph.node_count()
    }
    pub fn edge_count(&self) -> usize {
        self.graph.edge_count()
    }
    pub fn loop_carried_count(&self) -> usize {
        self.graph.edge_weights().filter(|d| d.distance > 0).count()
    }

    /// The edges as `(from, to, dep)` statement indices, sorted: from, to, distance, kind.
    pub fn edges(&self) -> Vec<(usize, usize, Dep)> {
        let mut out: Vec<(usize, usize, Dep)> = self
            .graph
            .edge_references()
            .map(|e| (self.graph[e.source()].index, self.graph[e.target()].index, *e.weight()))
            .collect();
        out.sort_by_key(|&(a, b, d)| (a, b, d.distance, self.kind_name(d.kind)));
        out
    }

    /// The stable text form: one line per statement (`s3: <text>  [effects]`), then one per edge
    /// (`s1 -> s3 mem.raw(shared)`, `+1` for loop-carried ones).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for n in self.graph.node_weights() {
            let _ = writeln!(out, "s{}: {}  [{}]", n.index, n.label, n.effects);
        }
        for (a, b, d) in self.edges() {
            let carried = if d.distance > 0 { format!(" +{}", d.distance) } else { String::new() };
            let _ = writeln!(out, "s{a} -> s{b} {}{carried}", self.kind_name(d.kind));
        }
        out
    }

    /// Graphviz DOT: loop-carried edges dashed, labelled with their distance.
    pub fn to_dot(&self) -> String {
        let mut out = String::from("digraph deps {\n  node [shape=box, fontname=monospace];\n");
        for n in self.graph.node_weights() {
            let label = format!("s{}: {}", n.index, n.label).replace('\\', "\\\\").replace('"', "\\\"");
            let _ = writeln!(out, "  s{} [label=\"{label}\"];", n.index);
        }
        for (a, b, d) in self.edges() {
            let style = if d.distance > 0 {
                format!(", style=dashed, label=\"{} +{}\"", self.kind_name(d.kind), d.distance)
            } else {
                format!(", label=\"{}\"", self.kind_name(d.kind))
            };
            let _ = writeln!(out, "  s{a} -> s{b} [{}];", style.trim_start_matches(", "));
        }
        out.push_str("}\n");
        out
    }
}
