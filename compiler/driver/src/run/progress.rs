//! A progress line on stderr for transfers that take more than a second: `.npy` reads and writes and copies
//! between host and device.
//!
//! What a user watching a 49 GB transfer wants differs from what a log wants, so:
//! - stderr is a terminal: once a transfer has run for a second, one line redrawn in place (at most ten times a
//!   second) with bytes done, percentage and rate; when it ends, the line is finished with the total time and left
//!   on screen.
//! - stderr is not a terminal (a CI log, a pipe, a file): no redraws (carriage returns garble logs), but one final
//!   line per transfer that took over a second, so that whoever reads the log sees where the time went.
//!
//! Transfers under a second print nothing in either case; stdout (which scripts parse) is never touched.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use cutec_runtime::format_bytes;

/// Transfers shorter than this print nothing.
const QUIET_FOR: Duration = Duration::from_secs(1);
/// The least time between two redraws on a terminal.
const REDRAW_EVERY: Duration = Duration::from_millis(100);

pub(super) struct Progress<'a> {
    what: String,
    total: u64,
    start: Instant,
    last_draw: Option<Instant>,
    terminal: bool,
    sink: Box<dyn Write + 'a>,
}

impl Progress<'static> {
    /// A transfer of `total` bytes, described by `what` (`reading x.npy`), reported on stderr.
    pub(super) fn stderr(what: impl Into<String>, total: u64) -> Progress<'static> {
        let terminal = std::io::stderr().is_terminal();
        Progress::new(what, total, terminal, Box::new(std::io::stderr()), Instant::now())
    }
}

impl<'a> Progress<'a> {
    pub(super) fn new(
        what: impl Into<String>,
        total: u64,
        terminal: bool,
        sink: Box<dyn Write + 'a>,
        start: Instant,
    ) -> Progress<'a> {
        Progress { what: what.into(), total, start, last_draw: None, terminal, sink }
    }

    /// `done` bytes of the total are through.
    pub(super) fn update(&mut self, done: u64) {
        self.update_at(done, Instant::now());
    }

    pub(super) fn update_at(&mut self, done: u64, now: Instant) {
        let elapsed = now.saturating_duration_since(self.start);
        if !self.terminal || elapsed < QUIET_FOR || self.last_draw.is_some_and(|t| now - t < REDRAW_EVERY) {
            return;
        }
        self.last_draw = Some(now);
        let percent = done.saturating_mul(100).checked_div(self.total).unwrap_or(100);
        // Progress is a courtesy: a failed write to stderr does not stop the transfer.
        let _ = write!(
            self.sink,
            "\r{}: {} of {} ({percent}%), {}/s\x1b[K",
            self.what,
            format_bytes(done),
            format_bytes(self.total),
            format_bytes(rate(done, elapsed))
        );
        let _ = self.sink.flush();
    }

    /// The transfer is complete.
    pub(super) fn finish(self) {
        let now = Instant::now();
        self.finish_at(now);
    }

    pub(super) fn finish_at(mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.start);
        if elapsed < QUIET_FOR {
            return;
        }
        let line = format!(
            "{}: {} in {:.1} s ({}/s)",
            self.what,
            format_bytes(self.total),
            elapsed.as_secs_f64(),
            format_bytes(rate(self.total, elapsed))
        );
        let _ = if self.terminal { writeln!(self.sink, "\r{line}\x1b[K") } else { writeln!(self.sink, "{line}") };
        let _ = self.sink.flush();
    }
}

fn rate(bytes: u64, elapsed: Duration) -> u64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 { (bytes as f64 / secs) as u64 } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn run(terminal: bool, steps: &[(u64, u64)], end_ms: u64) -> String {
        let mut out = Vec::new();
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        {
            let mut p = Progress::new("reading x.npy", 4 * GIB, terminal, Box::new(&mut out), start);
            for &(ms, done) in steps {
                p.update_at(done, at(ms));
            }
            p.finish_at(at(end_ms));
        }
        String::from_utf8(out).expect("text")
    }

    #[test]
    fn fast_transfers_print_nothing() {
        assert_eq!(run(true, &[(100, GIB), (900, 4 * GIB)], 950), "");
        assert_eq!(run(false, &[(100, GIB), (900, 4 * GIB)], 950), "");
    }

    #[test]
    fn a_terminal_sees_the_line_redrawn_then_kept() {
        let out = run(true, &[(500, GIB), (1000, 2 * GIB), (1050, 2 * GIB), (1500, 3 * GIB)], 2000);
        assert_eq!(
            out,
            "\rreading x.npy: 2.0 GiB of 4.0 GiB (50%), 2.0 GiB/s\x1b[K\
             \rreading x.npy: 3.0 GiB of 4.0 GiB (75%), 2.0 GiB/s\x1b[K\
             \rreading x.npy: 4.0 GiB in 2.0 s (2.0 GiB/s)\x1b[K\n"
        );
    }

    #[test]
    fn a_log_gets_one_final_line() {
        let out = run(false, &[(500, GIB), (1000, 2 * GIB), (1500, 3 * GIB)], 4000);
        assert_eq!(out, "reading x.npy: 4.0 GiB in 4.0 s (1.0 GiB/s)\n");
    }
}
