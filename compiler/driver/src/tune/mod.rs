//! `cutec tune`: sweeps a kernel's const generic parameters for given shapes on the GPU and keeps the fastest
//! configuration per shape in a tuning file that `cutec build --tuning` and `cutec run --tuning` read.
//!
//! The steps, each in its module:
//! - `space`: `--space BN=128,256 --space STAGES=3,4` and `--shape M=4096,N=4096,K=4096` checked against the
//!   kernel (usage errors, located on the option, with the closest name), and the configurations: the cartesian
//!   product with the default first;
//! - `compile`: every configuration built in memory on worker threads, then assembled by ptxas if installed;
//!   those that do not compile are skipped with their diagnostic's code;
//! - `measure` (GPU) and `check`: per shape, each configuration's outputs compared with the default's within a
//!   tolerance of the output type, then interleaved timing rounds;
//! - `cpu` (`--compile-only --cpu`): the same check without a GPU, each configuration run by the interpreter;
//! - `report`: the table per shape;
//! - `file`: the tuning file, its merge and the selection by (source hash, kernel, device, shape).

pub mod check;
pub mod compile;
pub mod cpu;
pub mod file;
pub mod measure;
pub mod report;
pub mod space;

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A status line on stderr for the phases of a tuning: redrawn in place on a terminal (at most ten times a
/// second), silent otherwise (a log gets the summary lines on stdout instead). Stdout is never touched.
pub struct Status {
    terminal: bool,
    last: Mutex<Option<Instant>>,
}

impl Status {
    pub fn stderr() -> Status {
        Status { terminal: std::io::stderr().is_terminal(), last: Mutex::new(None) }
    }

    /// Shows `line` (if the last one was drawn over 100 ms ago, or `force`).
    pub fn show(&self, line: &str, force: bool) {
        if !self.terminal {
            return;
        }
        let Ok(mut last) = self.last.lock() else { return };
        let now = Instant::now();
        if !force && last.is_some_and(|t| now - t < Duration::from_millis(100)) {
            return;
        }
        *last = Some(now);
        let mut err = std::io::stderr().lock();
        // A courtesy: a failed write to stderr does not stop the tuning.
        let _ = write!(err, "\r{line}\x1b[K");
        let _ = err.flush();
    }

    /// Erases the status line before other output.
    pub fn clear(&self) {
        if self.terminal {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[K");
        }
    }
}
