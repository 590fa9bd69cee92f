//! The IR's text form (`--emit ir`): stable, one statement a line, for snapshots and `--dump-after`.
//!
//! It prints any kernel, valid or not (a dump after a broken pass must still be readable): a type that cannot be
//! resolved prints as `?`, a handle out of range as `%?N`. Expressions are numbered by their arena index, so
//! numbers have gaps where passes left dead expressions; global expressions (literals, parameters, allocation
//! addresses) are written inline at their uses.

use crate::arena::Handle;
use crate::expr::{BinaryOp, CompareOp, Expr, Literal, UnaryOp};
use crate::module::{Kernel, Module, Var};
use crate::op::Op;
use crate::stmt::{Block, Role, Stmt, Unroll};
use crate::types::{Scalar, Type};
use crate::valid::types::resolve;
use std::fmt::Write;

/// The text of a module.
pub fn print(module: &Module) -> String {
    let mut out = String::new();
    for (i, k) in module.kernels.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&print_kernel(k));
    }
    out
}

/// The text of one kernel.
pub fn print_kernel(kernel: &Kernel) -> String {
    let mut p = printer(kernel, 1);
    p.header();
    p.block(&kernel.body);
    p.out.push_str("}\n");
    p.out
}

/// The first line of a statement's text (a statement with blocks ends in `{ .. }`), for labels.
pub fn stmt_line(kernel: &Kernel, stmt: &Stmt) -> String {
    let mut p = printer(kernel, 0);
    p.stmt(stmt);
    let mut lines = p.out.lines();
    let first = lines.next().unwrap_or("").to_string();
    if lines.next().is_some() { format!("{first} .. }}") } else { first }
}

fn printer(kernel: &Kernel, indent: usize) -> Printer<'_> {
    let mut types = Vec::with_capacity(kernel.exprs.len());
    let mut known = Vec::with_capacity(kernel.exprs.len());
    for (h, e) in kernel.exprs.iter() {
        let mut ok = true;
        e.for_each_operand(|op| ok &= op < h && known.get(op.index()).copied().unwrap_or(false));
        let t = if ok { resolve(kernel, h, e, &types).ok() } else { None };
        known.push(t.is_some());
        types.push(t.unwrap_or(Type::I1));
    }
    Printer { kernel, types, known, out: String::new(), indent }
}

struct Printer<'a> {
    kernel: &'a Kernel,
    types: Vec<Type>,
    known: Vec<bool>,
    out: String,
    indent: usize,
}

impl Printer<'_> {
    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn header(&mut self) {
        let k = self.kernel;
        let params: Vec<String> = k
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut s = format!("%{}: {}", p.name, p.ty);
                if let Type::Ptr(_) = p.ty {
                    let _ = write!(s, " align({})", p.align);
                    if p.noalias {
                        s.push_str(" noalias");
                    }
                    if p.readonly {
                        s.push_str(" readonly");
                    }
                    if let Some(bytes) = u32::try_from(i).ok().and_then(|i| k.tma_box_bytes(i)) {
                        let _ = write!(s, " box({bytes})");
                    }
                }
                s
            })
            .collect();
        let _ = write!(self.out, "kernel @{}({})", k.name, params.join(", "));
        if let Some([x, y, z]) = k.block_size {
            let _ = write!(self.out, " block({x}, {y}, {z})");
        }
        if let Some([x, y, z]) = k.cluster {
            let _ = write!(self.out, " cluster({x}, {y}, {z})");
        }
        if k.warp_specialized {
            self.out.push_str(" warp_specialized");
        }
        if k.unchecked_protocol {
            self.out.push_str(" unchecked_protocol");
        }
        self.out.push_str(" {\n");
        for (_, a) in k.allocs.iter() {
            self.line(&format!("{} @{}: [{} x {}] align({})", a.space.name(), a.name, a.len, a.elem, a.align));
        }
        for (_, v) in k.vars.iter() {
            self.line(&format!("var ${}: {}", v.name, v.ty));
        }
        for (h, b) in k.barriers.iter() {
            let line = crate::schedule::barrier_line(k, h, b);
            self.line(&line);
        }
        for (h, r) in k.rings.iter() {
            let line = crate::schedule::ring_line(k, h, r);
            self.line(&line);
        }
        for (h, g) in k.groups.iter() {
            let line = crate::schedule::group_line(k, h, g);
            self.line(&line);
        }
    }

    fn block(&mut self, block: &Block) {
        for (stmt, _) in block.iter() {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match *stmt {
            Stmt::Emit(h) => {
                let ty = self.ty_name(h);
                let text = match self.kernel.exprs.get(h) {
                    Some(e) => self.expr(e),
                    None => "?".to_string(),
                };
                self.line(&format!("%{}: {ty} = {text}", h.index()));
            }
            Stmt::WriteVar { var, value } => {
                let v = self.var(var);
                let value = self.operand(value);
                self.line(&format!("{v} = {value}"));
            }
            Stmt::Store { ptr, value, align } => {
                let (v, p) = (self.operand(value), self.operand(ptr));
                self.line(&format!("store {v}, {p} align({align})"));
            }
            Stmt::If { cond, ref accept, ref reject } => {
                let c = self.operand(cond);
                self.line(&format!("if {c} {{"));
                self.nested(accept);
                if !reject.is_empty() {
                    self.line("} else {");
                    self.nested(reject);
                }
                self.line("}");
            }
            Stmt::For { var, start, end, step, unroll, stages, ref body } => {
                let (v, s, e) = (self.var(var), self.operand(start), self.operand(end));
                let mut attrs = match unroll {
                    Unroll::Auto => String::new(),
                    Unroll::Full => " unroll(full)".to_string(),
                    Unroll::Count(n) => format!(" unroll({n})"),
                    Unroll::Disable => " unroll(disable)".to_string(),
                };
                if let Some(s) = stages {
                    let _ = write!(attrs, " pipelined(stages = {s})");
                }
                self.line(&format!("for {v} in {s}..{e} step {step}{attrs} {{"));
                self.nested(body);
                self.line("}");
            }
            Stmt::While { ref header, cond, ref body } => {
                self.line("loop {");
                self.nested(header);
                let c = self.operand(cond);
                self.line(&format!("}} while {c} {{"));
                self.nested(body);
                self.line("}");
            }
            // A chain reads like `if .. else if ..`: `warpgroup a 0..1 { .. } else warpgroup b 1..3 { .. }`.
            Stmt::Roles(ref regions) => {
                for (i, r) in regions.iter().enumerate() {
                    let Role { kind, first, count } = &r.role;
                    let end = u64::from(*first) + u64::from(*count);
                    let regs = r.regs.map_or(String::new(), |r| format!(" regs({r})"));
                    let head = if i == 0 { "" } else { "} else " };
                    self.line(&format!("{head}warpgroup {kind} {first}..{end}{regs} {{"));
                    self.nested(&r.body);
                }
                self.line("}");
            }
            Stmt::Op { result, ref op } => {
                let text = self.op(op);
                match result {
                    Some(h) => {
                        let ty = self.ty_name(h);
                        self.line(&format!("%{}: {ty} = {text}", h.index()));
                    }
                    None => self.line(&text),
                }
            }
            Stmt::Break => self.line("break"),
            Stmt::Continue => self.line("continue"),
            Stmt::Return => self.line("return"),
            Stmt::Barrier(_) => self.line("barrier.cta"),
        }
    }

    fn nested(&mut self, block: &Block) {
        self.indent += 1;
        self.block(block);
        self.indent -= 1;
    }

    fn ty_name(&self, h: Handle<Expr>) -> String {
        match self.known.get(h.index()) {
            Some(true) => self.types[h.index()].to_string(),
            _ => "?".to_string(),
        }
    }

    fn var(&self, h: Handle<Var>) -> String {
        self.kernel.vars.get(h).map_or(format!("$?{}", h.index()), |v| format!("${}", v.name))
    }

    /// An operand: global expressions inline, others by number.
    fn operand(&self, h: Handle<Expr>) -> String {
        match self.kernel.exprs.get(h) {
            None => format!("%?{}", h.index()),
            Some(Expr::Literal(l)) => literal(*l),
            Some(Expr::Param(i)) => {
                self.kernel.params.get(*i as usize).map_or(format!("%?param{i}"), |p| format!("%{}", p.name))
            }
            Some(Expr::AllocPtr(a)) => {
                self.kernel.allocs.get(*a).map_or(format!("@?{}", a.index()), |a| format!("@{}", a.name))
            }
            Some(_) => format!("%{}", h.index()),
        }
    }

    fn expr(&self, e: &Expr) -> String {
        let o = |h| self.operand(h);
        match *e {
            Expr::Literal(_) | Expr::Param(_) | Expr::AllocPtr(_) => "?global".to_string(),
            Expr::Special(r) => format!("sreg {}", r.name()),
            Expr::ReadVar(v) => format!("read {}", self.var(v)),
            Expr::Unary { op, value } => {
                let name = match op {
                    UnaryOp::Neg => "neg",
                    UnaryOp::Not => "not",
                };
                format!("{name} {}", o(value))
            }
            Expr::Binary { op, lhs, rhs } => format!("{} {}, {}", binary_name(op), o(lhs), o(rhs)),
            Expr::Compare { op, lhs, rhs } => format!("cmp.{} {}, {}", compare_name(op), o(lhs), o(rhs)),
            Expr::Select { cond, accept, reject } => format!("select {}, {}, {}", o(cond), o(accept), o(reject)),
            Expr::Convert { value, to } => format!("convert {} to {to}", o(value)),
            Expr::Math { fun, arg, arg1, arg2 } => {
                let args: Vec<String> = std::iter::once(arg).chain(arg1).chain(arg2).map(o).collect();
                format!("{} {}", fun.name(), args.join(", "))
            }
            Expr::Offset { base, index, elem } => format!("offset {}, {} x {elem}", o(base), o(index)),
            Expr::OpResult(_) => "?result".to_string(),
            Expr::Extract { vector, lane } => format!("extract {}, {lane}", o(vector)),
            Expr::Compose { ty, ref parts } => {
                let parts: Vec<String> = parts.iter().map(|&p| o(p)).collect();
                format!("compose {ty} [{}]", parts.join(", "))
            }
            Expr::MapShared { ptr, cta } => format!("mapa {}, cta {}", o(ptr), o(cta)),
        }
    }
}

/// A wgmma descriptor's fields, as the parser reads them back.
fn desc(d: &crate::GmmaDesc) -> String {
    let major = if d.mn_major { "mn" } else { "k" };
    format!("desc({}, lbo {}, sbo {}, {major})", crate::op::gmma_swizzle_name(d.swizzle), d.lbo, d.sbo)
}

impl Printer<'_> {
    /// An operation: its mnemonic and operands.
    fn op(&self, op: &Op) -> String {
        let o = |h| self.operand(h);
        let name = op.name();
        match *op {
            Op::Load { ptr, ty, align } => format!("{name} {ty}, {} align({align})", o(ptr)),
            Op::Shuffle { value, lane, .. } => format!("{name} {}, {}", o(value), o(lane)),
            Op::MbarrierInit { bar, count: x } | Op::MbarrierArriveExpectTx { bar, bytes: x } => {
                format!("{name} {}, {}", o(bar), o(x))
            }
            Op::MbarrierArrive { bar } => format!("{name} {}", o(bar)),
            Op::MbarrierWait { bar, parity } => format!("{name} {}, parity {}", o(bar), o(parity)),
            Op::TmaLoad { dst, map, ref coords, bar, multicast } => {
                let coords: Vec<String> = coords.iter().map(|&c| o(c)).collect();
                let mask = multicast.map(|m| format!(" multicast {}", o(m))).unwrap_or_default();
                format!("{name} {}, {}[{}], {}{mask}", o(dst), o(map), coords.join(", "), o(bar))
            }
            Op::TmaLoadUnscheduled { dst, map, ref coords, multicast } => {
                let coords: Vec<String> = coords.iter().map(|&c| o(c)).collect();
                let mask = multicast.map(|m| format!(" multicast {}", o(m))).unwrap_or_default();
                format!("{name} {}, {}[{}]{mask}", o(dst), o(map), coords.join(", "))
            }
            Op::MbarrierArriveRemote { bar, cta } => format!("{name} {}, cta {}", o(bar), o(cta)),
            Op::TmaStore { src, map, ref coords } => {
                let coords: Vec<String> = coords.iter().map(|&c| o(c)).collect();
                format!("{name} {}[{}], {}", o(map), coords.join(", "), o(src))
            }
            Op::PrefetchTensorMap { map } => format!("{name} {}", o(map)),
            Op::Stmatrix { ptr, ref values } => {
                let values: Vec<String> = values.iter().map(|&v| o(v)).collect();
                format!("{name}.x{} {}, {}", values.len(), o(ptr), values.join(", "))
            }
            Op::NamedBarrier { id, threads, barrier } => match barrier {
                Some(b) => format!("{name} {}, {} of #b{}", o(id), o(threads), b.index()),
                None => format!("{name} {}, {}", o(id), o(threads)),
            },
            Op::BulkWait { pending, .. } => format!("{name} {pending}"),
            // The descriptors once, with the first step; the other steps after `;`:
            // `wgmma.mma_async m64n128k16.bf16 %acc, %a0 desc(..), %b0 desc(..), scale_d %s0; %a1, %b1, scale_d %s1`.
            Op::Wgmma { shape, acc, a_desc, b_desc, ref steps } => {
                let mut text = format!(
                    "{name} m{}n{}k{}.{} {}",
                    shape.m,
                    shape.n,
                    shape.k,
                    // One type when A and B agree (`m64n128k16.bf16`), else both (`m64n256k32.e4m3.e5m2`).
                    if shape.input == shape.input_b { shape.input.to_string() } else { shape.input_suffix() },
                    o(acc),
                );
                for (j, s) in steps.iter().enumerate() {
                    if j == 0 {
                        let a = a_desc.as_ref().map_or_else(|| "regs".to_string(), desc);
                        let b = desc(&b_desc);
                        text += &format!(", {} {a}, {} {b}, scale_d {}", o(s.a), o(s.b), o(s.scale_d));
                    } else {
                        text += &format!("; {}, {}, scale_d {}", o(s.a), o(s.b), o(s.scale_d));
                    }
                }
                text
            }
            Op::Setmaxnreg { regs, .. } => format!("{name} {regs}"),
            Op::WgmmaWait { pending } => format!("{name} {pending}"),
            Op::WgmmaCommit { group: Some(g) } => format!("{name} #g{}", g.index()),
            Op::WgmmaCommit { group: None } => name.to_string(),
            Op::FenceProxyAsync
            | Op::WgmmaFence
            | Op::BulkCommit
            | Op::FenceMbarrierInit
            | Op::ClusterBarrier
            | Op::ElectOne => name.to_string(),
        }
    }
}

pub(crate) fn binary_name(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "add",
        BinaryOp::Sub => "sub",
        BinaryOp::Mul => "mul",
        BinaryOp::Div => "div",
        BinaryOp::Rem => "rem",
        BinaryOp::And => "and",
        BinaryOp::Or => "or",
        BinaryOp::Xor => "xor",
        BinaryOp::Shl => "shl",
        BinaryOp::Shr => "shr",
    }
}

pub(crate) fn compare_name(op: CompareOp) -> &'static str {
    match op {
        CompareOp::Eq => "eq",
        CompareOp::Ne => "ne",
        CompareOp::Lt => "lt",
        CompareOp::Le => "le",
        CompareOp::Gt => "gt",
        CompareOp::Ge => "ge",
    }
}

/// A literal as written in the text form: `i32` and `f32` bare (`4`, `1.0`), other types suffixed (`4i64`).
pub fn literal(l: Literal) -> String {
    match l {
        Literal::Bool(b) => b.to_string(),
        Literal::Int { value, ty: Scalar::I32 } => value.to_string(),
        Literal::Int { value, ty } => format!("{value}{ty}"),
        // f32 prints through f32's own shortest form (0.1, not 0.10000000149011612).
        Literal::Float { value, ty: Scalar::F32 } => float(value, format!("{:?}", value as f32)),
        Literal::Float { value, ty } => format!("{}{ty}", float(value, format!("{value:?}"))),
    }
}

/// Shortest text that reads back as the same value, always with a `.` or an exponent so it is not an integer.
fn float(v: f64, s: String) -> String {
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v.is_nan() {
        return "nan".into();
    }
    if s.contains(['.', 'e', 'E']) { s } else { format!("{s}.0") }
}
