//! Per-thread forward analyses over the structured body: one walk that knows how control flows (branches join,
//! loops run to their fixed point, `break` and `continue` carry their state to the loop's exit and head, `return`
//! and the end of a path carry nothing on, the threads of no role region skip the chain) for analyses that say only
//! what a statement does to their state and how two states join ([`super::proxy`], [`super::landing`]).

use crate::arena::Loc;
use crate::stmt::{Block, Stmt};

/// A forward analysis: its state at a point of one thread's path, what a statement does to it, how states join.
pub trait Forward {
    /// Joins only grow it (finitely), so a loop's fixed point is reached.
    type State: Clone + PartialEq;
    type Error;
    /// What the statement `s` itself (not its blocks) does to `state` at `at`; an error stops the walk.
    fn transfer(&mut self, s: &Stmt, state: &mut Self::State, at: Loc) -> Result<(), Self::Error>;
    /// `into` joined with `other`, where two paths meet.
    fn join(into: &mut Self::State, other: &Self::State);
}

/// The state after `body` entered with `entry` (`None`: no path falls through its end), or the first error.
pub fn run<F: Forward>(f: &mut F, body: &Block, entry: F::State) -> Result<Option<F::State>, F::Error> {
    Walk { f, loops: Vec::new() }.block(body, entry, Loc::NONE)
}

/// The states `break` and `continue` carry out of the innermost loop.
struct Exits<S> {
    breaks: Option<S>,
    continues: Option<S>,
}

struct Walk<'f, F: Forward> {
    f: &'f mut F,
    loops: Vec<Exits<F::State>>,
}

fn join_opt<F: Forward>(into: &mut Option<F::State>, other: F::State) {
    match into {
        Some(x) => F::join(x, &other),
        None => *into = Some(other),
    }
}

impl<F: Forward> Walk<'_, F> {
    fn block(&mut self, block: &Block, mut state: F::State, outer: Loc) -> Result<Option<F::State>, F::Error> {
        for (s, at) in block.iter() {
            let at = if at == Loc::NONE { outer } else { at };
            match self.stmt(s, state, at)? {
                Some(next) => state = next,
                None => return Ok(None),
            }
        }
        Ok(Some(state))
    }

    fn stmt(&mut self, s: &Stmt, mut state: F::State, at: Loc) -> Result<Option<F::State>, F::Error> {
        match s {
            Stmt::If { accept, reject, .. } => {
                let a = self.block(accept, state.clone(), at)?;
                let b = self.block(reject, state, at)?;
                Ok(match (a, b) {
                    (Some(mut a), Some(b)) => {
                        F::join(&mut a, &b);
                        Some(a)
                    }
                    (a, b) => a.or(b),
                })
            }
            Stmt::For { body, .. } => self.looped(&[body], state, at),
            Stmt::While { header, body, .. } => self.looped(&[header, body], state, at),
            Stmt::Roles(regions) => {
                let mut out = Some(state.clone());
                for r in regions {
                    if let Some(after) = self.block(&r.body, state.clone(), at)? {
                        join_opt::<F>(&mut out, after);
                    }
                }
                Ok(out)
            }
            Stmt::Break | Stmt::Continue => {
                if let Some(l) = self.loops.last_mut() {
                    let slot = if matches!(s, Stmt::Break) { &mut l.breaks } else { &mut l.continues };
                    join_opt::<F>(slot, state);
                }
                Ok(None)
            }
            Stmt::Return => Ok(None),
            Stmt::Emit(_) | Stmt::Op { .. } | Stmt::WriteVar { .. } | Stmt::Store { .. } | Stmt::Barrier(_) => {
                self.f.transfer(s, &mut state, at)?;
                Ok(Some(state))
            }
        }
    }

    /// A loop whose iteration runs `parts` in order (a `while`'s header, then its body), entered with `entry`: the
    /// head's state is the fixed point of the entry joined with every iteration's end; the loop may exit at its
    /// head (a trip count of 0, the `while`'s test) or through a `break`.
    fn looped(&mut self, parts: &[&Block], entry: F::State, at: Loc) -> Result<Option<F::State>, F::Error> {
        let mut head = entry;
        loop {
            self.loops.push(Exits { breaks: None, continues: None });
            let mut state = Some(head.clone());
            for part in parts {
                state = match state {
                    Some(s) => self.block(part, s, at)?,
                    None => None,
                };
            }
            let exits = self.loops.pop().unwrap_or(Exits { breaks: None, continues: None });
            let mut next = head.clone();
            for end in [state, exits.continues].into_iter().flatten() {
                F::join(&mut next, &end);
            }
            if next == head {
                let mut out = head;
                if let Some(b) = exits.breaks {
                    F::join(&mut out, &b);
                }
                return Ok(Some(out));
            }
            head = next;
        }
    }
}
