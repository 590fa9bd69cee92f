//! CuTe's `print_layout`: a rank-2 layout as a text grid with `+---+` borders.

use std::fmt::Write as _;

use crate::error::{Result, invalid};
use crate::eval::LayoutOp;
use crate::layout::Layout;
use crate::swizzle::ComposedLayout;

/// The most cells a picture draws.
pub const MAX_PICTURE_CELLS: i64 = 1 << 16;

/// A function from a rank-2 grid of coordinates to indices that can be drawn: a layout or a swizzled layout.
pub trait Drawable {
    /// The layout that gives the domain (the shape) and the inner indices.
    fn domain(&self) -> &Layout;
    /// The final index of an inner index: the identity, or `Sw(offset + i)`.
    fn finish(&self, inner: i64) -> Result<i64>;
    /// The cosize CuTe uses for the cell width.
    fn cosize(&self) -> Result<i64>;
    /// The header line: the layout as CuTe prints it.
    fn header(&self) -> String;
}

impl Drawable for Layout {
    fn domain(&self) -> &Layout {
        self
    }
    fn finish(&self, inner: i64) -> Result<i64> {
        Ok(inner)
    }
    fn cosize(&self) -> Result<i64> {
        Layout::cosize(self)?.need(LayoutOp::PrintLayout)
    }
    fn header(&self) -> String {
        self.to_string()
    }
}

impl Drawable for ComposedLayout {
    fn domain(&self) -> &Layout {
        &self.layout
    }
    fn finish(&self, inner: i64) -> Result<i64> {
        let off = self.offset.need(LayoutOp::PrintLayout)?;
        Ok(self.swizzle.apply(off.checked_add(inner).unwrap_or(inner)))
    }
    fn cosize(&self) -> Result<i64> {
        self.layout.cosize()?.need(LayoutOp::PrintLayout)
    }
    fn header(&self) -> String {
        self.to_string()
    }
}

/// The grid of a drawable: `grid[m][n]` is the index of coordinate `(m, n)`. A rank-1 layout is one column
/// (CuTe appends a `1:0` mode); modes beyond the second are grouped into the column mode.
pub fn grid(l: &impl Drawable) -> Result<Vec<Vec<i64>>> {
    let d = l.domain();
    let modes = d.modes();
    let (rows, cols) = match modes.len() {
        0 => (Layout::trivial(), Layout::trivial()),
        1 => (modes[0].clone(), Layout::trivial()),
        _ => (
            modes[0].clone(),
            if modes.len() == 2 { modes[1].clone() } else { Layout::from_modes(modes[1..].to_vec()) },
        ),
    };
    let (m, n) = (rows.size()?.need(LayoutOp::PrintLayout)?, cols.size()?.need(LayoutOp::PrintLayout)?);
    if m.saturating_mul(n) > MAX_PICTURE_CELLS {
        return Err(invalid(
            LayoutOp::PrintLayout,
            format!("{} has {m}x{n} cells, more than {MAX_PICTURE_CELLS}", l.header()),
        ));
    }
    let (ri, ci) = (rows.indices()?, cols.indices()?);
    ri.iter().map(|&r| ci.iter().map(|&c| l.finish(r.wrapping_add(c))).collect()).collect()
}

/// CuTe's `num_digits`.
fn num_digits(x: i64) -> usize {
    x.unsigned_abs().max(1).ilog10() as usize + 1
}

/// `print_layout(L)`, character for character as CuTe prints it (a trailing newline included):
/// ```text
/// (2,3):(3,1)
///        0    1    2
///     +----+----+----+
///  0  |  0 |  1 |  2 |
///     +----+----+----+
///  1  |  3 |  4 |  5 |
///     +----+----+----+
/// ```
pub fn print_layout(l: &impl Drawable) -> Result<String> {
    let cells = grid(l)?;
    let idx_width = num_digits(l.cosize()?) + 2;
    let delim: String = "+-----------------------".chars().take(idx_width + 1).collect();
    let cols = cells.first().map_or(0, Vec::len);
    let mut out = String::new();
    let _ = writeln!(out, "{}", l.header());
    out.push_str("    ");
    for n in 0..cols {
        let _ = write!(out, "  {:>w$} ", n, w = idx_width - 2);
    }
    out.push('\n');
    let rule = |out: &mut String| {
        out.push_str("    ");
        for _ in 0..cols {
            out.push_str(&delim);
        }
        out.push_str("+\n");
    };
    for (m, row) in cells.iter().enumerate() {
        rule(&mut out);
        let _ = write!(out, "{m:>2}  ");
        for v in row {
            let _ = write!(out, "| {:>w$} ", v, w = idx_width - 2);
        }
        out.push_str("|\n");
    }
    rule(&mut out);
    Ok(out)
}
