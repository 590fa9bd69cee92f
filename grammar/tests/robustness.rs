//! Parsing never panics, keeps its invariants on any input, and bounds the depth of the trees it builds.

use crate::common::cute_files;
use cutec_grammar::ast::*;
use cutec_grammar::{SyntaxErrorKind, parse, print_ast, print_tokens};
use std::collections::HashSet;

/// Checks the tree invariants: ids unique and below `node_count`, spans inside the text on char boundaries.
fn check_invariants(src: &str, module: &Module) {
    let mut ids = HashSet::new();
    let mut spans = Vec::new();
    for item in &module.items {
        walk_item(item, &mut ids, &mut spans);
    }
    for id in &ids {
        assert!(id.0 < module.node_count, "id {id:?} >= node_count {}", module.node_count);
    }
    for s in spans {
        assert!(s.start <= s.end && s.end as usize <= src.len(), "span {s:?} outside 0..{}", src.len());
        assert!(src.is_char_boundary(s.start as usize) && src.is_char_boundary(s.end as usize), "span {s:?}");
    }
}

fn id(ids: &mut HashSet<NodeId>, id: NodeId) {
    assert!(ids.insert(id), "duplicate {id:?}");
}

fn walk_item(item: &Item, ids: &mut HashSet<NodeId>, spans: &mut Vec<Span>) {
    spans.push(item.span);
    match &item.kind {
        ItemKind::Const(c) => {
            id(ids, c.id);
            walk_expr(&c.value, ids, spans);
        }
        ItemKind::Kernel(f) | ItemKind::Fn(f) => {
            spans.push(f.sig_span);
            for g in &f.generics {
                id(ids, g.id);
                g.default.iter().for_each(|e| walk_expr(e, ids, spans));
            }
            for p in &f.params {
                id(ids, p.id);
                spans.push(p.span);
                walk_type(&p.ty, ids, spans);
            }
            for a in f.launch.iter().flat_map(|l| &l.args) {
                walk_expr(&a.value, ids, spans);
            }
            walk_block(&f.body, ids, spans);
        }
        ItemKind::Use(_) | ItemKind::Error => {}
    }
}

fn walk_type(t: &TypeExpr, ids: &mut HashSet<NodeId>, spans: &mut Vec<Span>) {
    spans.push(t.span);
    match &t.kind {
        TypeExprKind::Named { args, .. } => args.iter().for_each(|a| walk_expr(a, ids, spans)),
        TypeExprKind::Tuple(ts) => ts.iter().for_each(|t| walk_type(t, ids, spans)),
        TypeExprKind::Error => {}
    }
}

fn walk_block(b: &Block, ids: &mut HashSet<NodeId>, spans: &mut Vec<Span>) {
    spans.push(b.span);
    for s in &b.stmts {
        spans.push(s.span);
        match &s.kind {
            StmtKind::Let { id: i, ty, value, .. } => {
                id(ids, *i);
                ty.iter().for_each(|t| walk_type(t, ids, spans));
                walk_expr(value, ids, spans);
            }
            StmtKind::Assign { target, value, .. } => {
                walk_expr(target, ids, spans);
                walk_expr(value, ids, spans);
            }
            StmtKind::Expr(e) | StmtKind::Return(Some(e)) => walk_expr(e, ids, spans),
            StmtKind::For { id: i, start, end, body, .. } => {
                id(ids, *i);
                walk_expr(start, ids, spans);
                walk_expr(end, ids, spans);
                walk_block(body, ids, spans);
            }
            StmtKind::While { cond, body } => {
                walk_expr(cond, ids, spans);
                walk_block(body, ids, spans);
            }
            StmtKind::Role { id: i, args, body, .. } => {
                id(ids, *i);
                args.iter().for_each(|a| walk_expr(&a.value, ids, spans));
                walk_block(body, ids, spans);
            }
            StmtKind::If { cond, then_block, else_block } => {
                walk_expr(cond, ids, spans);
                walk_block(then_block, ids, spans);
                else_block.iter().for_each(|b| walk_block(b, ids, spans));
            }
            StmtKind::Block(b) => walk_block(b, ids, spans),
            StmtKind::Return(None) | StmtKind::Break | StmtKind::Continue | StmtKind::Error => {}
        }
    }
}

fn walk_expr(e: &Expr, ids: &mut HashSet<NodeId>, spans: &mut Vec<Span>) {
    id(ids, e.id);
    spans.push(e.span);
    let mut sub = |x: &Expr| walk_expr(x, ids, spans);
    match &e.kind {
        ExprKind::Name { generics, .. } => generics.iter().for_each(sub),
        ExprKind::Tuple(es) => es.iter().for_each(sub),
        ExprKind::Layout { shape, stride } => {
            sub(shape);
            sub(stride);
        }
        ExprKind::Compose { outer, inner } => {
            sub(outer);
            sub(inner);
        }
        ExprKind::Unary { operand, .. } => sub(operand),
        ExprKind::Binary { lhs, rhs, .. } => {
            sub(lhs);
            sub(rhs);
        }
        ExprKind::Call { callee, args } => {
            sub(callee);
            args.iter().for_each(|a| sub(&a.value));
        }
        ExprKind::MethodCall { receiver, generics, args, .. } => {
            sub(receiver);
            generics.iter().for_each(&mut sub);
            args.iter().for_each(|a| sub(&a.value));
        }
        ExprKind::Field { base, .. } => sub(base),
        ExprKind::Index { base, indices } => {
            sub(base);
            indices.iter().for_each(sub);
        }
        ExprKind::Cast { value, ty } => {
            sub(value);
            walk_type(ty, ids, spans);
        }
        _ => {}
    }
}

/// Parses, checks the invariants and exercises the printers; returns whether nesting was reported.
fn parse_checked(src: &str) -> bool {
    let (module, errors) = parse(src);
    check_invariants(src, &module);
    let _ = print_ast(&module);
    let _ = print_tokens(src);
    for e in &errors {
        assert!(e.span.end as usize <= src.len() && src.is_char_boundary(e.span.start as usize), "{e:?}");
    }
    errors.iter().any(|e| matches!(e.kind, SyntaxErrorKind::NestingTooDeep | SyntaxErrorKind::OperatorChainTooLong))
}

#[test]
fn examples_keep_the_invariants() {
    for path in cute_files("examples").into_iter().chain(cute_files("stdlib")) {
        let src = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(!parse_checked(&src));
    }
}

#[test]
fn deep_nesting_is_rejected_not_overflowed() {
    let n = 20_000;
    let cases = [
        format!("const X = {}1{};", "(".repeat(n), ")".repeat(n)),
        format!("const X = {}1;", "-".repeat(n)),
        format!("const X = 1{};", " + 1".repeat(n)),
        format!("const X = x{};", ".f".repeat(n)),
        format!("const X = x{};", " as T".repeat(n)),
        format!("const X = {}1{};", "f(".repeat(n), ")".repeat(n)),
        format!("const X = {}1{};", "[".repeat(n), "]".repeat(n)),
        format!("fn f() {{ {} }}", "{".repeat(n) + &"}".repeat(n)),
        format!("fn f() {{ if a {{ }} {} }}", "else if a { } ".repeat(n)),
        format!("fn f(x: {}int{}) {{}}", "(".repeat(n), ")".repeat(n)),
    ];
    for (i, src) in cases.iter().enumerate() {
        assert!(parse_checked(src), "case {i} was not reported as too deep");
    }
    // Generic lists this deep exceed the generics rule's scan bound: they are comparisons (and errors), no panic.
    parse_checked(&format!("const X = {}1{};", "A<".repeat(n), ">".repeat(n)));
    // Just under the limit is fine.
    assert!(!parse_checked(&format!("const X = {}1{};", "(".repeat(200), ")".repeat(200))));
}

#[test]
fn a_long_flat_chain_is_said_to_be_a_chain_and_real_nesting_to_be_nesting() {
    // A flat sum has no brackets: it is reported as a chain of too many operators, once, with the limit.
    for n in [300, 100_000] {
        let src = format!("const X = 1{};", " + 1".repeat(n));
        let (_, errors) = parse(&src);
        let kinds: Vec<_> = errors.iter().map(|e| (e.code(), e.kind.clone())).collect();
        assert_eq!(kinds, [("E0025", SyntaxErrorKind::OperatorChainTooLong)], "{n} terms");
        assert_eq!(errors[0].message(), "an expression with a chain of more than 256 binary operators");
    }
    // Real nesting keeps its message, including an operator nested on the right, which no chain is.
    for src in [
        format!("const X = {}1{};", "(".repeat(300), ")".repeat(300)),
        format!("const X = {}1{};", "1 + (".repeat(300), ")".repeat(300)),
    ] {
        let (_, errors) = parse(&src);
        let deep = errors.iter().find(|e| e.kind == SyntaxErrorKind::NestingTooDeep).expect("nesting reported");
        assert_eq!(deep.message(), "nesting is deeper than 256 levels");
        assert!(!errors.iter().any(|e| e.kind == SyntaxErrorKind::OperatorChainTooLong), "{errors:?}");
    }
    // 256 terms (255 operators) are fine.
    assert!(!parse_checked(&format!("const X = 1{};", " + 1".repeat(255))));
}

#[test]
fn a_file_over_the_size_limit_is_one_error_and_no_tokens() {
    let src = format!("const X = 1;\n// {}", "ü".repeat(cutec_grammar::MAX_SOURCE_BYTES / 2));
    let (module, errors) = parse(&src);
    assert!(module.items.is_empty() && cutec_grammar::lex(&src).0.is_empty());
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(matches!(errors[0].kind, SyntaxErrorKind::FileTooLarge { bytes } if bytes == src.len()));
    // Located at the character that crosses the limit, on a character boundary.
    let at = errors[0].span.start as usize;
    assert!(
        src.is_char_boundary(at) && at <= cutec_grammar::MAX_SOURCE_BYTES && at + 2 > cutec_grammar::MAX_SOURCE_BYTES
    );
    // At the limit, the file is read.
    let src = " ".repeat(cutec_grammar::MAX_SOURCE_BYTES);
    assert!(parse(&src).1.is_empty());
}

#[test]
fn every_stray_delimiter_is_reported_once() {
    let n = 100_000;
    for (src, code) in [("}".repeat(n), "E0023"), ("(".repeat(n), "E0022"), (")]".repeat(n / 2), "E0023")] {
        let errors = parse(&format!("fn f() {{}}\n{src}")).1;
        assert_eq!(errors.iter().filter(|e| e.code() == code).count(), n, "{code}");
    }
}

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn mutations_never_panic() {
    const PIECES: &[&str] = &[
        "(", ")", "[", "]", "{", "}", "<", ">", ">>", ",", ";", ":", "::", ".", "..", "=", "\"", "/*", "*/", "//", "_",
        "let", "for", "in", "if", "else", "kernel", "fn", "const", "as", "launch", "0x", "1e", "é", "\\", "@", "<<=",
    ];
    let sources: Vec<String> = cute_files("examples")
        .into_iter()
        .chain(cute_files("stdlib"))
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    assert!(!sources.is_empty());
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..3000 {
        let mut chars: Vec<char> = sources[round % sources.len()].chars().collect();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(chars.len() + 1);
            match rng.below(4) {
                0 if at < chars.len() => {
                    chars.remove(at);
                }
                1 => {
                    let piece = PIECES[rng.below(PIECES.len())];
                    for (k, c) in piece.chars().enumerate() {
                        chars.insert(at + k, c);
                    }
                }
                2 if at < chars.len() => {
                    let len = rng.below(40).min(chars.len() - at);
                    chars.drain(at..at + len);
                }
                _ => {
                    let c = char::from_u32(rng.below(0x250) as u32).unwrap_or('?');
                    chars.insert(at, c);
                }
            }
        }
        let src: String = chars.into_iter().collect();
        parse_checked(&src);
    }
}
