//! A stable, indented dump of the AST for snapshot tests and `--emit ast`.
//!
//! One node per line, two spaces per level; every line ends with the node's span `@start..end`, and nodes with a
//! [`NodeId`](crate::ast::NodeId) show it as `#n` before the span. Types are printed inline in source form
//! (`Tensor<f32, (M, N):(N, 1), gmem>`), since their structure is rarely what a snapshot is about. Recursion is
//! safe: the parser bounds the depth of every tree (see [`crate::MAX_NESTING`]).

use crate::ast::*;
use std::fmt::Write;

/// Renders `module` as an indented tree (see the module documentation for the format).
pub fn print_ast(module: &Module) -> String {
    let mut p = Printer { out: String::new(), indent: 0 };
    p.line(format_args!("Module @{:?} nodes={}", module.span, module.node_count));
    p.indent += 1;
    for doc in &module.docs {
        p.line(format_args!("//! {:?}", doc));
    }
    for item in &module.items {
        p.item(item);
    }
    p.out
}

struct Printer {
    out: String,
    indent: usize,
}

impl Printer {
    fn line(&mut self, args: std::fmt::Arguments<'_>) {
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
        let _ = self.out.write_fmt(args);
        self.out.push('\n');
    }

    fn nested(&mut self, f: impl FnOnce(&mut Self)) {
        self.indent += 1;
        f(self);
        self.indent -= 1;
    }

    fn item(&mut self, item: &Item) {
        for doc in &item.docs {
            self.line(format_args!("/// {:?}", doc));
        }
        let span = item.span;
        match &item.kind {
            ItemKind::Use(u) => {
                let path = u.path.iter().map(|i| i.name.as_str()).collect::<Vec<_>>().join("::");
                match &u.names {
                    None => self.line(format_args!("Use {path} @{span:?}")),
                    Some(names) => {
                        let names = names.iter().map(|i| i.name.as_str()).collect::<Vec<_>>().join(", ");
                        self.line(format_args!("Use {path}::{{{names}}} @{span:?}"))
                    }
                }
            }
            ItemKind::Const(c) => {
                let ty = c.ty.as_ref().map(|t| format!(": {}", type_text(t))).unwrap_or_default();
                self.line(format_args!("Const {}{ty} #{} @{span:?}", c.name.name, c.id.0));
                self.nested(|p| p.expr(&c.value, ""));
            }
            ItemKind::Kernel(f) => self.function("Kernel", f, span),
            ItemKind::Fn(f) => self.function("Fn", f, span),
            ItemKind::Error => self.line(format_args!("ErrorItem @{span:?}")),
        }
    }

    fn function(&mut self, what: &str, f: &Function, span: Span) {
        let ret = f.ret.as_ref().map(|t| format!(" -> {}", type_text(t))).unwrap_or_default();
        self.line(format_args!("{what} {}{ret} @{span:?} sig @{:?}", f.name.name, f.sig_span));
        self.nested(|p| {
            for g in &f.generics {
                p.line(format_args!("Generic {}: {} #{} @{:?}", g.name.name, type_text(&g.ty), g.id.0, g.span));
                if let Some(default) = &g.default {
                    p.nested(|p| p.expr(default, "default = "));
                }
            }
            for param in &f.params {
                p.line(format_args!(
                    "Param {}: {} #{} @{:?}",
                    param.name.name,
                    type_text(&param.ty),
                    param.id.0,
                    param.span
                ));
            }
            if let Some(launch) = &f.launch {
                p.line(format_args!("Launch @{:?}", launch.span));
                p.nested(|p| {
                    for arg in &launch.args {
                        p.expr(&arg.value, &format!("{} = ", arg.name.name));
                    }
                });
            }
            p.attrs(&f.attrs);
            p.block(&f.body);
        });
    }

    fn attrs(&mut self, attrs: &[Attribute]) {
        for a in attrs {
            self.line(format_args!("Attr {} @{:?}", a.name.name, a.span));
            self.nested(|p| p.args(&a.args));
        }
    }

    fn args(&mut self, args: &[Arg]) {
        for arg in args {
            match &arg.name {
                Some(name) => self.expr(&arg.value, &format!("{} = ", name.name)),
                None => self.expr(&arg.value, ""),
            }
        }
    }

    fn block(&mut self, block: &Block) {
        self.line(format_args!("Block @{:?}", block.span));
        self.nested(|p| {
            for stmt in &block.stmts {
                p.stmt(stmt);
            }
        });
    }

    fn stmt(&mut self, stmt: &Stmt) {
        let span = stmt.span;
        match &stmt.kind {
            StmtKind::Let { id, mutable, name, ty, value } => {
                let m = if *mutable { "mut " } else { "" };
                let ty = ty.as_ref().map(|t| format!(": {}", type_text(t))).unwrap_or_default();
                self.line(format_args!("Let {m}{}{ty} #{} @{span:?}", name.name, id.0));
                self.nested(|p| p.expr(value, ""));
            }
            StmtKind::Assign { target, op, value } => {
                let op = op.map(|o| o.as_str()).unwrap_or("");
                self.line(format_args!("Assign {op}= @{span:?}"));
                self.nested(|p| {
                    p.expr(target, "");
                    p.expr(value, "");
                });
            }
            StmtKind::Expr(e) => {
                self.line(format_args!("ExprStmt @{span:?}"));
                self.nested(|p| p.expr(e, ""));
            }
            StmtKind::For { id, var, start, end, attrs, body } => {
                self.line(format_args!("For {} #{} @{span:?}", var.name, id.0));
                self.nested(|p| {
                    p.expr(start, "start = ");
                    p.expr(end, "end = ");
                    p.attrs(attrs);
                    p.block(body);
                });
            }
            StmtKind::While { cond, body } => {
                self.line(format_args!("While @{span:?}"));
                self.nested(|p| {
                    p.expr(cond, "");
                    p.block(body);
                });
            }
            StmtKind::Role { id, name, args, rank, body } => {
                let rank = rank.as_ref().map(|r| format!(" as {}", r.name)).unwrap_or_default();
                self.line(format_args!("Role {}{rank} #{} @{span:?}", name.name, id.0));
                self.nested(|p| {
                    for arg in args {
                        p.expr(&arg.value, &format!("{} = ", arg.name.name));
                    }
                    p.block(body);
                });
            }
            StmtKind::If { cond, then_block, else_block } => {
                self.line(format_args!("If @{span:?}"));
                self.nested(|p| {
                    p.expr(cond, "");
                    p.block(then_block);
                    if let Some(b) = else_block {
                        p.line(format_args!("Else"));
                        p.block(b);
                    }
                });
            }
            StmtKind::Return(value) => {
                self.line(format_args!("Return @{span:?}"));
                if let Some(v) = value {
                    self.nested(|p| p.expr(v, ""));
                }
            }
            StmtKind::Break => self.line(format_args!("Break @{span:?}")),
            StmtKind::Continue => self.line(format_args!("Continue @{span:?}")),
            StmtKind::Block(b) => self.block(b),
            StmtKind::Error => self.line(format_args!("ErrorStmt @{span:?}")),
        }
    }

    /// One expression; `role` prefixes its line (`stages = `, `start = `).
    fn expr(&mut self, e: &Expr, role: &str) {
        let tail = format!("#{} @{:?}", e.id.0, e.span);
        match &e.kind {
            ExprKind::Int(v) => self.line(format_args!("{role}Int {v} {tail}")),
            ExprKind::Float(v) => self.line(format_args!("{role}Float {v:?} {tail}")),
            ExprKind::Bool(v) => self.line(format_args!("{role}Bool {v} {tail}")),
            ExprKind::Str(s) => self.line(format_args!("{role}Str {s:?} {tail}")),
            ExprKind::Wildcard => self.line(format_args!("{role}Wildcard {tail}")),
            ExprKind::Error => self.line(format_args!("{role}ErrorExpr {tail}")),
            ExprKind::Name { name, generics } => {
                self.line(format_args!("{role}Name {} {tail}", name.name));
                self.nested(|p| generics.iter().for_each(|g| p.expr(g, "generic ")));
            }
            ExprKind::Tuple(es) => {
                self.line(format_args!("{role}Tuple {tail}"));
                self.nested(|p| es.iter().for_each(|x| p.expr(x, "")));
            }
            ExprKind::Layout { shape, stride } => {
                self.line(format_args!("{role}Layout {tail}"));
                self.nested(|p| {
                    p.expr(shape, "shape ");
                    p.expr(stride, "stride ");
                });
            }
            ExprKind::Compose { outer, inner } => {
                self.line(format_args!("{role}Compose {tail}"));
                self.nested(|p| {
                    p.expr(outer, "outer ");
                    p.expr(inner, "inner ");
                });
            }
            ExprKind::Unary { op, operand } => {
                self.line(format_args!("{role}Unary {} {tail}", op.as_str()));
                self.nested(|p| p.expr(operand, ""));
            }
            ExprKind::Binary { op, lhs, rhs } => {
                self.line(format_args!("{role}Binary {} {tail}", op.as_str()));
                self.nested(|p| {
                    p.expr(lhs, "");
                    p.expr(rhs, "");
                });
            }
            ExprKind::Call { callee, args } => {
                self.line(format_args!("{role}Call {tail}"));
                self.nested(|p| {
                    p.expr(callee, "callee ");
                    p.args(args);
                });
            }
            ExprKind::MethodCall { receiver, method, generics, args } => {
                self.line(format_args!("{role}MethodCall {} {tail}", method.name));
                self.nested(|p| {
                    p.expr(receiver, "receiver ");
                    generics.iter().for_each(|g| p.expr(g, "generic "));
                    p.args(args);
                });
            }
            ExprKind::Field { base, field } => {
                self.line(format_args!("{role}Field {} {tail}", field.name));
                self.nested(|p| p.expr(base, ""));
            }
            ExprKind::Index { base, indices } => {
                self.line(format_args!("{role}Index {tail}"));
                self.nested(|p| {
                    p.expr(base, "base ");
                    indices.iter().for_each(|i| p.expr(i, ""));
                });
            }
            ExprKind::Cast { value, ty } => {
                self.line(format_args!("{role}Cast as {} {tail}", type_text(ty)));
                self.nested(|p| p.expr(value, ""));
            }
        }
    }
}

/// A type in source form: `Tensor<f32, (M, N):(N, 1), gmem>`, `(int, int)`.
pub fn type_text(t: &TypeExpr) -> String {
    let mut s = String::new();
    write_type(&mut s, t);
    s
}

fn write_type(s: &mut String, t: &TypeExpr) {
    match &t.kind {
        TypeExprKind::Named { name, args } => {
            s.push_str(&name.name);
            write_generics(s, args);
        }
        TypeExprKind::Tuple(ts) => {
            s.push('(');
            for (i, t) in ts.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write_type(s, t);
            }
            if ts.len() == 1 {
                s.push(',');
            }
            s.push(')');
        }
        TypeExprKind::Error => s.push_str("{error}"),
    }
}

fn write_generics(s: &mut String, args: &[Expr]) {
    if args.is_empty() {
        return;
    }
    s.push('<');
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        write_expr(s, a, 0);
    }
    s.push('>');
}

/// Binding strength for the inline printer: higher binds tighter.
fn precedence(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::Compose { .. } => 0,
        ExprKind::Layout { .. } => 1,
        ExprKind::Binary { op, .. } => match op {
            BinaryOp::Or => 2,
            BinaryOp::And => 3,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => 4,
            BinaryOp::BitOr => 5,
            BinaryOp::BitXor => 6,
            BinaryOp::BitAnd => 7,
            BinaryOp::Shl | BinaryOp::Shr => 8,
            BinaryOp::Add | BinaryOp::Sub => 9,
            BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => 10,
        },
        ExprKind::Cast { .. } => 11,
        ExprKind::Unary { .. } => 12,
        _ => 13,
    }
}

/// Writes `e` in source form, parenthesised if it binds looser than `min`.
fn write_expr(s: &mut String, e: &Expr, min: u8) {
    let prec = precedence(e);
    let parens = prec < min;
    if parens {
        s.push('(');
    }
    match &e.kind {
        ExprKind::Int(v) => {
            let _ = write!(s, "{v}");
        }
        ExprKind::Float(v) => {
            let _ = write!(s, "{v:?}");
        }
        ExprKind::Bool(v) => {
            let _ = write!(s, "{v}");
        }
        ExprKind::Str(v) => {
            let _ = write!(s, "{v:?}");
        }
        ExprKind::Wildcard => s.push('_'),
        ExprKind::Error => s.push_str("{error}"),
        ExprKind::Name { name, generics } => {
            s.push_str(&name.name);
            write_generics(s, generics);
        }
        ExprKind::Tuple(es) => {
            s.push('(');
            write_list(s, es);
            if es.len() == 1 {
                s.push(',');
            }
            s.push(')');
        }
        ExprKind::Layout { shape, stride } => {
            write_expr(s, shape, 2);
            s.push(':');
            write_expr(s, stride, 2);
        }
        ExprKind::Compose { outer, inner } => {
            // Right-associative: the outer side needs parentheses when it is itself a composition.
            write_expr(s, outer, 1);
            s.push_str(" o ");
            write_expr(s, inner, 0);
        }
        ExprKind::Unary { op, operand } => {
            s.push_str(op.as_str());
            write_expr(s, operand, 12);
        }
        ExprKind::Binary { op, lhs, rhs } => {
            // Left-associative: the right operand needs parentheses at equal precedence.
            write_expr(s, lhs, prec);
            let _ = write!(s, " {} ", op.as_str());
            write_expr(s, rhs, prec + 1);
        }
        ExprKind::Call { callee, args } => {
            write_expr(s, callee, 13);
            write_args(s, args);
        }
        ExprKind::MethodCall { receiver, method, generics, args } => {
            write_expr(s, receiver, 13);
            s.push('.');
            s.push_str(&method.name);
            write_generics(s, generics);
            write_args(s, args);
        }
        ExprKind::Field { base, field } => {
            write_expr(s, base, 13);
            s.push('.');
            s.push_str(&field.name);
        }
        ExprKind::Index { base, indices } => {
            write_expr(s, base, 13);
            s.push('[');
            write_list(s, indices);
            s.push(']');
        }
        ExprKind::Cast { value, ty } => {
            write_expr(s, value, 11);
            s.push_str(" as ");
            write_type(s, ty);
        }
    }
    if parens {
        s.push(')');
    }
}

fn write_list(s: &mut String, es: &[Expr]) {
    for (i, e) in es.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        write_expr(s, e, 0);
    }
}

fn write_args(s: &mut String, args: &[Arg]) {
    s.push('(');
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        if let Some(name) = &a.name {
            let _ = write!(s, "{} = ", name.name);
        }
        write_expr(s, &a.value, 0);
    }
    s.push(')');
}
