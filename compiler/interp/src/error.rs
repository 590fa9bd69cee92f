//! What goes wrong in a run, as data: each variant holds the values and the source locations involved, and
//! `diag.rs` renders it, in one place, as a coded diagnostic.

use cutec_ir::Loc;
use std::fmt;

/// A thread of the grid: its block and its index in the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadRef {
    pub block: [u32; 3],
    pub thread: [u32; 3],
}

impl fmt::Display for ThreadRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.thread;
        let [bx, by, bz] = self.block;
        write!(f, "thread ({x}, {y}, {z}) of block ({bx}, {by}, {bz})")
    }
}

/// A load or a store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Access::Read => "read",
            Access::Write => "write",
        })
    }
}

/// One group of threads that wait and can never go on, for a deadlock's report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wait {
    pub loc: Loc,
    /// What they wait for, with its state (`mbarrier at byte 64 of shared memory, in phase 3 (pending 1, tx 0),
    /// for parity 1`).
    pub what: String,
    /// The threads, as ranges (`threads 0..127 of block (0, 0, 0)`).
    pub threads: String,
}

/// Which rule a race breaks (see `race.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaceKind {
    /// A read of a byte another thread wrote, with no synchronisation between.
    WriteRead,
    /// Two writes by different threads with no synchronisation between.
    WriteWrite,
    /// A write (generic, or a TMA load) over a byte another thread read, with no synchronisation between.
    ReadWrite,
    /// A read of a byte a TMA load writes, before a wait on its mbarrier.
    UnfinishedAsyncWrite,
    /// A write to a byte an in-flight wgmma group or TMA store still reads.
    InFlightRead,
    /// An asynchronous read (TMA store, wgmma) of a generic write no `fence.proxy.async` covers.
    MissingProxyFence,
    /// An access to an accumulator or A register of a wgmma group before the `wgmma.wait_group` that retires it
    /// (undefined: the tensor cores may still read or write it).
    InFlightRegister,
}

impl fmt::Display for RaceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RaceKind::WriteRead => "a read of shared memory another thread wrote, with no barrier between",
            RaceKind::WriteWrite => "two threads write shared memory with no barrier between",
            RaceKind::ReadWrite => "a write over shared memory another thread read, with no barrier between",
            RaceKind::UnfinishedAsyncWrite => "a read of shared memory a TMA load writes, before waiting for it",
            RaceKind::InFlightRead => "a write to shared memory an in-flight wgmma group or TMA store still reads",
            RaceKind::InFlightRegister => {
                "an access to a register a wgmma group still uses, before the wgmma.wait_group that retires it"
            }
            RaceKind::MissingProxyFence => {
                "the asynchronous proxy (TMA, wgmma) reads a generic write with no fence.proxy.async between"
            }
        })
    }
}

/// Why a run failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InterpError {
    #[error("out-of-bounds {access} of {bytes} bytes at byte offset {offset} of {memory} ({size} bytes) by {thread}")]
    OutOfBounds { loc: Loc, access: Access, memory: String, offset: i64, bytes: u64, size: u64, thread: ThreadRef },
    #[error("race: {kind}, at byte {offset} of the shared memory of CTA rank {cta} ({thread})")]
    Race { kind: RaceKind, first: Loc, second: Loc, cta: u32, offset: i64, thread: ThreadRef },
    #[error(
        "race: blocks of different clusters access byte {offset} of {memory}, one writing, and nothing orders \
         them ({thread})"
    )]
    GlobalRace { first: Loc, second: Loc, memory: String, offset: i64, thread: ThreadRef },
    #[error("deadlock: every thread that has not exited waits for something that can never happen")]
    Deadlock { waits: Vec<Wait> },
    #[error("integer division by zero in {thread}")]
    DivisionByZero { loc: Loc, thread: ThreadRef },
    #[error("{message} ({thread})")]
    Mbarrier { loc: Loc, thread: ThreadRef, message: String },
    #[error("{message} ({thread})")]
    Collective { loc: Loc, thread: ThreadRef, message: String },
    #[error("{message}")]
    TensorMap { loc: Loc, message: String },
    #[error("the interpreter does not run {what} yet")]
    Unsupported { loc: Loc, what: String },
    #[error("IR the validator should have refused: {message}")]
    Internal { loc: Loc, message: String },
    #[error("the run took more than {limit} statements (an endless loop?)")]
    StepLimit { limit: u64 },
    #[error("{message}")]
    Arguments { message: String },
    #[error("the IR does not validate: {message}")]
    Invalid { message: String },
}

impl InterpError {
    /// The statement the error is about, when it has one.
    pub fn loc(&self) -> Option<Loc> {
        match self {
            InterpError::OutOfBounds { loc, .. }
            | InterpError::DivisionByZero { loc, .. }
            | InterpError::Mbarrier { loc, .. }
            | InterpError::Collective { loc, .. }
            | InterpError::TensorMap { loc, .. }
            | InterpError::Unsupported { loc, .. }
            | InterpError::Internal { loc, .. } => Some(*loc),
            InterpError::Deadlock { waits } => waits.first().map(|w| w.loc),
            InterpError::Race { second, .. } | InterpError::GlobalRace { second, .. } => Some(*second),
            InterpError::StepLimit { .. } | InterpError::Arguments { .. } | InterpError::Invalid { .. } => None,
        }
    }
}
