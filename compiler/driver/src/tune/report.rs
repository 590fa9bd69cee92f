//! The table `cutec tune` prints for each shape: configurations by time, fastest first, then those that were
//! wrong or refused, each with why.

use super::measure::Measured;

/// One configuration's line: its label, whether it is the default, and what became of it.
pub struct Row<'a> {
    pub label: &'a str,
    pub is_default: bool,
    pub result: &'a Measured,
}

fn median_of(m: &Measured) -> Option<f64> {
    match m {
        Measured::Timed { timing, .. } if timing.median_us.is_finite() => Some(timing.median_us),
        _ => None,
    }
}

/// The index of the fastest timed row; the default wins ties (a change should earn its place).
pub fn best(rows: &[Row<'_>]) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (k, r) in rows.iter().enumerate() {
        let Some(t) = median_of(r.result) else { continue };
        let better = match best {
            None => true,
            Some((b, bt)) => t < bt || (t == bt && r.is_default && !rows[b].is_default),
        };
        if better {
            best = Some((k, t));
        }
    }
    best.map(|(k, _)| k)
}

/// The table; `flops` is the work of one launch when known (`--flops`).
pub fn table(rows: &[Row<'_>], flops: Option<f64>) -> String {
    let default_us = rows.iter().find(|r| r.is_default).and_then(|r| median_of(r.result));
    let mut order: Vec<usize> = (0..rows.len()).collect();
    let rank = |m: &Measured| match m {
        Measured::Timed { .. } => 0,
        Measured::Wrong { .. } => 1,
        Measured::Refused(_) => 2,
    };
    order.sort_by(|&a, &b| {
        let (ra, rb) = (rows[a].result, rows[b].result);
        rank(ra)
            .cmp(&rank(rb))
            .then(median_of(ra).unwrap_or(f64::INFINITY).total_cmp(&median_of(rb).unwrap_or(f64::INFINITY)))
    });
    let width = rows.iter().map(|r| r.label.len() + if r.is_default { 2 } else { 0 }).max().unwrap_or(6).max(6);
    let mut out = format!(
        "  {:<width$}  {:>10}  {:>19}  {:>8}  {:>10}  status\n",
        "config", "median us", "min..max us", "TFLOP/s", "vs default"
    );
    for k in order {
        let r = &rows[k];
        let label = if r.is_default { format!("{} *", r.label) } else { r.label.to_owned() };
        let line = match r.result {
            Measured::Timed { timing, max_error } => {
                let tflops =
                    flops.map_or_else(|| "-".into(), |f| format!("{:.1}", f / (timing.median_us * 1e-6) / 1e12));
                let ratio = default_us.map_or_else(|| "-".into(), |d| format!("{:.3}x", d / timing.median_us));
                let spread = format!("{:.1}..{:.1}", timing.min_us, timing.max_us);
                format!(
                    "{:>10.1}  {spread:>19}  {tflops:>8}  {ratio:>10}  ok (max error {max_error:.3e})",
                    timing.median_us
                )
            }
            Measured::Wrong { param, mismatch, at } => {
                let at: Vec<String> = at.iter().map(ToString::to_string).collect();
                format!(
                    "{:>10}  {:>19}  {:>8}  {:>10}  wrong: {param}[{}] = {}, expected {} ({} of {} elements outside \
                     the tolerance)",
                    "-",
                    "-",
                    "-",
                    "-",
                    at.join(","),
                    mismatch.got,
                    mismatch.want,
                    mismatch.count,
                    mismatch.total
                )
            }
            Measured::Refused(why) => {
                format!("{:>10}  {:>19}  {:>8}  {:>10}  refused at this shape: {why}", "-", "-", "-", "-")
            }
        };
        out.push_str(&format!("  {label:<width$}  {line}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::check::Mismatch;
    use crate::tune::measure::Timing;

    fn timed(us: f64) -> Measured {
        Measured::Timed { timing: Timing { median_us: us, min_us: us - 1.0, max_us: us + 1.0 }, max_error: 0.0 }
    }

    #[test]
    fn fastest_first_then_wrong_then_refused() {
        let results = [
            timed(100.0),
            Measured::Refused("M = 100 is not a multiple of 128".into()),
            timed(80.0),
            Measured::Wrong {
                param: "c".into(),
                mismatch: Mismatch { count: 3, total: 64, index: 9, got: f64::NAN, want: 2.0 },
                at: vec![1, 1],
            },
            timed(100.0),
        ];
        let labels = ["BN=256", "BN=64", "BN=128", "BN=32", "BN=192"];
        let rows: Vec<Row<'_>> = labels
            .iter()
            .zip(&results)
            .enumerate()
            .map(|(k, (label, result))| Row { label, is_default: k == 0, result })
            .collect();
        assert_eq!(best(&rows), Some(2));
        let t = table(&rows, Some(2e9));
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].contains("median us") && lines[0].contains("vs default"), "{t}");
        assert!(lines[1].trim_start().starts_with("BN=128 ") && lines[1].contains("1.250x"), "{t}");
        assert!(lines[1].contains("25.0"), "2e9 flops in 80 us are 25 TFLOP/s: {t}");
        assert!(lines[2].contains("BN=256 *") && lines[2].contains("1.000x"), "{t}");
        assert!(lines[4].contains("wrong: c[1,1] = NaN, expected 2 (3 of 64 elements"), "{t}");
        assert!(lines[5].contains("refused at this shape: M = 100"), "{t}");
        // A tie goes to the default.
        let tie = [timed(100.0), timed(100.0)];
        let rows = [
            Row { label: "A", is_default: false, result: &tie[0] },
            Row { label: "B", is_default: true, result: &tie[1] },
        ];
        assert_eq!(best(&rows), Some(1));
    }
}
