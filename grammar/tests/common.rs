//! Helpers shared by the test modules.

use cutec_grammar::ast::*;
use cutec_grammar::{SyntaxError, parse};
use std::path::{Path, PathBuf};

/// The repository root (the grammar crate lives one level below it).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// Every `.cute` file in `dir` (relative to the repository root), sorted.
pub fn cute_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo_root().join(dir))
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "cute")).collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Error messages with their spans, for readable assertion failures.
pub fn describe(errors: &[SyntaxError]) -> Vec<String> {
    errors.iter().map(|e| format!("{}..{} {} {}", e.span.start, e.span.end, e.code(), e.message())).collect()
}

/// Parses `src` and returns the errors as text.
pub fn errors_of(src: &str) -> Vec<String> {
    describe(&parse(src).1)
}

/// An expression as a fully parenthesised S-expression: `(+ a (* b c))`, `(: (tuple 4 8) (tuple 8 1))`,
/// `(call f a (= stages 4))`, `(. x y)`, `(index t i _)`, `(as x f32)`, `Swizzle<3 4 3>`.
pub fn sexpr(e: &Expr) -> String {
    let list = |es: &[Expr]| es.iter().map(sexpr).collect::<Vec<_>>().join(" ");
    let args = |args: &[Arg]| {
        args.iter()
            .map(|a| match &a.name {
                Some(n) => format!(" (= {} {})", n.name, sexpr(&a.value)),
                None => format!(" {}", sexpr(&a.value)),
            })
            .collect::<String>()
    };
    match &e.kind {
        ExprKind::Int(v) => v.to_string(),
        ExprKind::Float(v) => format!("{v:?}"),
        ExprKind::Bool(v) => v.to_string(),
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::Wildcard => "_".into(),
        ExprKind::Error => "ERROR".into(),
        ExprKind::Name { name, generics } if generics.is_empty() => name.name.clone(),
        ExprKind::Name { name, generics } => format!("{}<{}>", name.name, list(generics)),
        ExprKind::Tuple(es) => format!("(tuple {})", list(es)),
        ExprKind::Layout { shape, stride } => format!("(: {} {})", sexpr(shape), sexpr(stride)),
        ExprKind::Compose { outer, inner } => format!("(o {} {})", sexpr(outer), sexpr(inner)),
        ExprKind::Unary { op, operand } => format!("({} {})", op.as_str(), sexpr(operand)),
        ExprKind::Binary { op, lhs, rhs } => format!("({} {} {})", op.as_str(), sexpr(lhs), sexpr(rhs)),
        ExprKind::Call { callee, args: a } => format!("(call {}{})", sexpr(callee), args(a)),
        ExprKind::MethodCall { receiver, method, generics, args: a } if generics.is_empty() => {
            format!("(method {} {}{})", sexpr(receiver), method.name, args(a))
        }
        ExprKind::MethodCall { receiver, method, generics, args: a } => {
            format!("(method {} {}<{}>{})", sexpr(receiver), method.name, list(generics), args(a))
        }
        ExprKind::Field { base, field } => format!("(. {} {})", sexpr(base), field.name),
        ExprKind::Index { base, indices } => format!("(index {} {})", sexpr(base), list(indices)),
        ExprKind::Cast { value, ty } => format!("(as {} {})", sexpr(value), type_sexpr(ty)),
    }
}

pub fn type_sexpr(t: &TypeExpr) -> String {
    match &t.kind {
        TypeExprKind::Named { name, args } if args.is_empty() => name.name.clone(),
        TypeExprKind::Named { name, args } => {
            format!("{}<{}>", name.name, args.iter().map(sexpr).collect::<Vec<_>>().join(" "))
        }
        TypeExprKind::Tuple(ts) => format!("(tuple {})", ts.iter().map(type_sexpr).collect::<Vec<_>>().join(" ")),
        TypeExprKind::Error => "ERROR".into(),
    }
}

/// Parses `src` as the value of a `const` item and returns it as an S-expression, asserting no errors.
pub fn expr(src: &str) -> String {
    let text = format!("const X = {src};");
    let (module, errors) = parse(&text);
    assert!(errors.is_empty(), "{src}: {:#?}", describe(&errors));
    match module.items.first().map(|i| &i.kind) {
        Some(ItemKind::Const(c)) => sexpr(&c.value),
        other => panic!("{src}: not a const item: {other:?}"),
    }
}

/// The statements of the body of the first function in `src`.
pub fn body(src: &str) -> (Vec<Stmt>, Vec<String>) {
    let (module, errors) = parse(src);
    let stmts = module
        .items
        .into_iter()
        .find_map(|i| match i.kind {
            ItemKind::Fn(f) | ItemKind::Kernel(f) => Some(f.body.stmts),
            _ => None,
        })
        .unwrap_or_default();
    (stmts, describe(&errors))
}
