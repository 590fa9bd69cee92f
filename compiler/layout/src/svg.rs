//! SVG pictures of layouts, after CuTe's `print_svg` / `print_latex`: a grid of cells, each labelled with its
//! index and coloured by it (CuTe's eight greys), and thread-value pictures with each cell labelled `T#`/`V#`
//! and coloured by thread (CuTe's eight TV colours). The output is deterministic.

use std::fmt::Write as _;

use crate::error::{Result, invalid};
use crate::eval::LayoutOp;
use crate::layout::Layout;
use crate::picture::{Drawable, MAX_PICTURE_CELLS, grid};

/// CuTe's `TSVGColor_BWx8`, by index modulo 8.
const GREYS: [&str; 8] = [
    "255,255,255",
    "230,230,230",
    "205,205,205",
    "180,180,180",
    "155,155,155",
    "130,130,130",
    "105,105,105",
    "80,80,80",
];

/// CuTe's `SVGColor_TV`, by thread modulo 8.
const TV_COLORS: [&str; 8] = [
    "175,175,255",
    "175,255,175",
    "255,255,175",
    "255,175,175",
    "210,210,255",
    "210,255,210",
    "255,255,210",
    "255,210,210",
];

const CELL: usize = 28;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn header(out: &mut String, rows: usize, cols: usize, title: &str) {
    let (w, h) = ((cols + 1) * CELL, (rows + 1) * CELL);
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"monospace\">"
    );
    let _ = writeln!(out, "<title>{}</title>", escape(title));
    let _ = writeln!(out, "<rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"white\"/>");
}

fn labels(out: &mut String, rows: usize, cols: usize) {
    let half = CELL / 2;
    for m in 0..rows {
        let _ = writeln!(
            out,
            "<text x=\"{half}\" y=\"{}\" text-anchor=\"middle\" dominant-baseline=\"central\" font-size=\"11\">{m}</text>",
            (m + 1) * CELL + half
        );
    }
    for n in 0..cols {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{half}\" text-anchor=\"middle\" dominant-baseline=\"central\" font-size=\"11\">{n}</text>",
            (n + 1) * CELL + half
        );
    }
}

fn cell(out: &mut String, m: usize, n: usize, fill: &str) {
    let _ = writeln!(
        out,
        "<rect x=\"{}\" y=\"{}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"rgb({fill})\" stroke=\"black\"/>",
        (n + 1) * CELL,
        (m + 1) * CELL
    );
}

/// The picture of a rank-2 layout (or a swizzled layout): cell `(m, n)` shows `L(m, n)`, coloured by
/// `L(m, n) mod 8`. A rank-1 layout is one column.
pub fn svg_layout(l: &impl Drawable) -> Result<String> {
    let cells = grid(l)?;
    let (rows, cols) = (cells.len(), cells.first().map_or(0, Vec::len));
    let mut out = String::new();
    header(&mut out, rows, cols, &l.header());
    for (m, row) in cells.iter().enumerate() {
        for (n, &v) in row.iter().enumerate() {
            cell(&mut out, m, n, GREYS[v.rem_euclid(8) as usize]);
            let color = if v.rem_euclid(8) >= 6 { "white" } else { "black" };
            let _ = writeln!(
                out,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" dominant-baseline=\"central\" font-size=\"10\" fill=\"{color}\">{v}</text>",
                (n + 1) * CELL + CELL / 2,
                (m + 1) * CELL + CELL / 2
            );
        }
    }
    labels(&mut out, rows, cols);
    out.push_str("</svg>\n");
    Ok(out)
}

/// The picture of a thread-value layout `tv: (thread, value) -> index` over an `m x n` tile: the index is
/// read column-major in the tile (`(index % m, index / m)`), each cell is labelled with the first `T#`/`V#`
/// that reaches it and coloured by thread, as CuTe's `print_latex_tv` / `print_svg` draw them.
/// @pre rank(tv) == 2.
pub fn svg_tv(tv: &Layout, m: i64, n: i64) -> Result<String> {
    const OP: LayoutOp = LayoutOp::MakeLayoutTv;
    if tv.rank() != 2 {
        return Err(invalid(OP, format!("{tv} is not a (thread, value) layout of rank 2")));
    }
    if m < 1 || n < 1 || m.saturating_mul(n) > MAX_PICTURE_CELLS {
        return Err(invalid(OP, format!("tile {m}x{n} is empty or larger than {MAX_PICTURE_CELLS} cells")));
    }
    let (threads, values) = (tv.mode(0)?.indices()?, tv.mode(1)?.indices()?);
    let (rows, cols) = (m as usize, n as usize);
    let mut owner: Vec<Option<(usize, usize)>> = vec![None; rows * cols];
    for (t, &ti) in threads.iter().enumerate() {
        for (v, &vi) in values.iter().enumerate() {
            let idx = ti.wrapping_add(vi);
            if (0..m * n).contains(&idx) {
                let slot = &mut owner[idx as usize];
                if slot.is_none() {
                    *slot = Some((t, v));
                }
            }
        }
    }
    let mut out = String::new();
    header(&mut out, rows, cols, &format!("{tv} over ({m},{n})"));
    for (idx, who) in owner.iter().enumerate() {
        let (r, c) = (idx % rows, idx / rows);
        match who {
            Some((t, v)) => {
                cell(&mut out, r, c, TV_COLORS[t % 8]);
                let (x, y) = ((c + 1) * CELL + CELL / 2, (r + 1) * CELL);
                let _ = writeln!(
                    out,
                    "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\" dominant-baseline=\"central\" font-size=\"9\">T{t}</text>",
                    y + CELL / 4 + 1
                );
                let _ = writeln!(
                    out,
                    "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\" dominant-baseline=\"central\" font-size=\"9\">V{v}</text>",
                    y + 3 * CELL / 4 - 1
                );
            }
            None => cell(&mut out, r, c, "255,255,255"),
        }
    }
    labels(&mut out, rows, cols);
    out.push_str("</svg>\n");
    Ok(out)
}
