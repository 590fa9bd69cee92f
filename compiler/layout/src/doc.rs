//! The book's worked examples and pictures: `cute-layout` doctest blocks and the list of SVG pictures.

use crate::error::{Result, invalid};
use crate::eval::LayoutOp;
use crate::eval::{Value, eval};
use crate::int_tuple::Shape;
use crate::layout::Layout;
use crate::svg::{svg_layout, svg_tv};

/// Check a `cute-layout` block: each line `>>> EXPR` is evaluated and its answer (the value, or
/// `error: <message>`) must equal the lines that follow, up to the next `>>>` (trailing spaces and blank
/// lines ignored). Lines before the first `>>>` and lines starting with `#` are comments.
pub fn check_doc_block(block: &str) -> std::result::Result<(), String> {
    let mut failures = Vec::new();
    let mut current: Option<(String, Vec<String>)> = None;
    let finish = |case: Option<(String, Vec<String>)>, failures: &mut Vec<String>| {
        if let Some((expr, expected)) = case {
            let actual = match eval(&expr) {
                Ok(v) => v.to_string(),
                Err(e) => format!("error: {e}"),
            };
            let actual: Vec<&str> = actual.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect();
            if actual != expected {
                failures.push(format!(
                    ">>> {expr}\nexpected:\n{}\nactual:\n{}",
                    expected.join("\n"),
                    actual.join("\n")
                ));
            }
        }
    };
    for line in block.lines() {
        if let Some(expr) = line.trim_start().strip_prefix(">>>") {
            finish(current.take(), &mut failures);
            current = Some((expr.trim().to_string(), Vec::new()));
        } else if let Some((_, expected)) = current.as_mut() {
            let l = line.trim_end();
            if !l.trim().is_empty() && !l.trim_start().starts_with('#') {
                expected.push(l.to_string());
            }
        }
    }
    finish(current.take(), &mut failures);
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n\n")) }
}

/// The fenced blocks with info string `cute-layout` of a Markdown text, with the line number (1-based) of
/// their opening fence.
pub fn doc_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (k, line) in markdown.lines().enumerate() {
        let t = line.trim();
        match open.as_mut() {
            None if t.starts_with("```") && t[3..].trim() == "cute-layout" => open = Some((k + 1, String::new())),
            None => {}
            Some(_) if t.starts_with("```") => out.extend(open.take()),
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    out
}

/// How a book picture is drawn.
#[derive(Clone, Copy, Debug)]
pub enum PictureKind {
    /// `svg_layout` of the value of the expression.
    Layout,
    /// `svg_tv` of the `(tile shape, tv layout)` pair that `make_layout_tv` returns.
    ThreadValue,
}

/// The pictures of the book: file name under `book/src/img/`, kind, and the expression drawn.
pub const BOOK_PICTURES: &[(&str, PictureKind, &str)] = &[
    ("layout-col-major.svg", PictureKind::Layout, "(4,8):(1,4)"),
    ("layout-row-major.svg", PictureKind::Layout, "(4,8):(8,1)"),
    ("layout-hierarchical.svg", PictureKind::Layout, "((2,2),(2,4)):((1,4),(2,8))"),
    ("layout-composition.svg", PictureKind::Layout, "composition((6,2):(8,2), (4,3):(3,1))"),
    ("layout-complement.svg", PictureKind::Layout, "make_layout((2,2):(1,6), complement((2,2):(1,6), 24))"),
    ("layout-logical-divide.svg", PictureKind::Layout, "logical_divide((4,2,3):(2,1,8), 4:2)"),
    ("layout-zipped-divide.svg", PictureKind::Layout, "zipped_divide((9,(4,8)):(59,(13,1)), (3:3, (2,4):(1,8)))"),
    ("layout-blocked-product.svg", PictureKind::Layout, "blocked_product((2,5):(5,1), (3,4):(1,3))"),
    ("layout-raked-product.svg", PictureKind::Layout, "raked_product((2,5):(5,1), (3,4):(1,3))"),
    ("layout-swizzle.svg", PictureKind::Layout, "Sw<3,0,3> o (8,8):(8,1)"),
    ("layout-tv.svg", PictureKind::ThreadValue, "make_layout_tv((4,8):(8,1), (2,2):(2,1))"),
];

/// Draw one picture of [`BOOK_PICTURES`].
pub fn draw_picture(kind: PictureKind, expr: &str) -> Result<String> {
    let value = eval(expr).map_err(|e| invalid(LayoutOp::PrintLayout, format!("{expr}: {e}")))?;
    match (kind, value) {
        (PictureKind::Layout, Value::Layout(l)) => svg_layout(&l),
        (PictureKind::Layout, Value::Composed(c)) => svg_layout(&c),
        (PictureKind::ThreadValue, Value::Tuple(pair)) => match &pair[..] {
            [tile, Value::Layout(tv)] => {
                let shape = tile.int_tuple(LayoutOp::PrintLayout)?;
                let mn: Vec<i64> = shape.values().unwrap_or_default();
                match mn[..] {
                    [m, n] => svg_tv(tv, m, n),
                    _ => Err(invalid(LayoutOp::PrintLayout, format!("{expr}: tile {shape} is not rank 2"))),
                }
            }
            _ => Err(invalid(LayoutOp::PrintLayout, format!("{expr} is not a (tile, tv) pair"))),
        },
        (_, v) => Err(invalid(LayoutOp::PrintLayout, format!("{expr} gives {} {v}", v.kind()))),
    }
}

/// Every book picture, as `(file name, SVG text)`.
pub fn book_pictures() -> Result<Vec<(String, String)>> {
    BOOK_PICTURES.iter().map(|&(file, kind, expr)| Ok((file.to_string(), draw_picture(kind, expr)?))).collect()
}

/// A layout drawn as text (`print_layout`), for convenience.
pub fn picture_text(l: &Layout) -> Result<String> {
    crate::picture::print_layout(l)
}
