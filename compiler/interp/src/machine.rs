//! The scheduler: the CTAs of one cluster at a time, each thread run until it blocks, then what can go on
//! released (collectives executed, barriers and waits satisfied), until every thread has exited or none can
//! go on (a deadlock).

use crate::error::{InterpError, ThreadRef, Wait};
use crate::thread::{Blocked, State, Thread};
use crate::{Arg, Launch, Options, TensorMap};
use cutec_ir::{Kernel, KernelInfo, Loc, Module};
use std::collections::HashMap;

/// What a run did.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Outcome {
    /// Statements executed by all threads.
    pub steps: u64,
    pub ctas: u64,
}

/// The state of one mbarrier (PTX "mbarrier"): its phase, the arrivals still pending in it, the count it
/// reloads, and the transaction bytes still expected (negative when bytes landed before their `expect_tx`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mbarrier {
    pub phase: u64,
    pub pending: i64,
    pub expected: i64,
    pub tx: i64,
}

/// One CTA of the running cluster.
pub(crate) struct Cta {
    pub block: [u32; 3],
    pub shared: Vec<u8>,
    /// The mbarriers, by byte offset in shared memory.
    pub mbarriers: HashMap<i64, Mbarrier>,
}

/// Everything the threads share: the kernel, the arguments, global memory and the running cluster's CTAs.
pub(crate) struct World<'k> {
    pub kernel: &'k Kernel,
    pub info: &'k KernelInfo,
    pub args: Vec<Arg>,
    pub maps: Vec<Option<TensorMap>>,
    pub shared_offsets: Vec<Option<u64>>,
    /// Each allocation's byte range in a CTA's shared memory (empty for register arrays).
    pub alloc_bounds: Vec<(u64, u64)>,
    pub launch: Launch,
    pub ctas: Vec<Cta>,
    pub steps: u64,
    pub max_steps: u64,
    /// The accumulator layout of each wgmma width N, from thread and register to `m + 64 n` (computed once).
    pub acc_layouts: HashMap<u32, Vec<i64>>,
    /// The race checker of the running cluster, when races are checked.
    pub races: Option<crate::race::Races>,
    pub check_races: bool,
    pub schedule: crate::Schedule,
    /// TMA loads issued and not landed, oldest first.
    pub pending: std::collections::VecDeque<crate::tma::PendingLoad>,
    /// The state of the seeded schedule's generator (xorshift64*).
    pub rng: u64,
    /// Races on global memory between clusters (when races are checked), and the running cluster's index.
    pub global_races: Option<crate::global_race::GlobalRaces>,
    pub cluster_index: u32,
}

impl World<'_> {
    pub fn threads_per_cta(&self) -> u32 {
        let [x, y, z] = self.launch.block;
        x * y * z
    }
}

/// Runs kernel `name` of `module` (after the pass pipeline) over `args`, which it updates in place (the
/// buffers of pointer parameters hold the outputs).
pub fn run(
    module: &Module,
    name: &str,
    launch: Launch,
    args: &mut Vec<Arg>,
    mut options: Options<'_>,
) -> Result<Outcome, InterpError> {
    let info = cutec_ir::validate(module).map_err(|e| InterpError::Invalid { message: e.to_string() })?;
    let Some((index, kernel)) = module.kernels.iter().enumerate().find(|(_, k)| k.name == name) else {
        return Err(InterpError::Arguments { message: format!("the module has no kernel `{name}`") });
    };
    let Some(kinfo) = info.kernels.get(index) else {
        return Err(InterpError::Invalid { message: "no analysis for the kernel".into() });
    };
    check_launch(kernel, &launch, args)?;
    let maps = args.iter().map(|a| if let Arg::TensorMap(m) = a { Some(m.clone()) } else { None }).collect();
    let (shared_offsets, _) = kernel.shared_offsets();
    let alloc_bounds = kernel
        .allocs
        .iter()
        .zip(&shared_offsets)
        .map(|((_, a), off)| off.map_or((0, 0), |o| (o, o + a.size_bytes())))
        .collect();
    let mut world = World {
        kernel,
        info: kinfo,
        args: std::mem::take(args),
        maps,
        shared_offsets,
        alloc_bounds,
        launch,
        ctas: Vec::new(),
        steps: 0,
        max_steps: options.max_steps,
        acc_layouts: HashMap::new(),
        races: None,
        check_races: options.races,
        schedule: options.schedule,
        pending: std::collections::VecDeque::new(),
        global_races: options.races.then(Default::default),
        cluster_index: 0,
        rng: match options.schedule {
            crate::Schedule::Seeded(seed) => seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            _ => 1,
        },
    };
    let [gx, gy, gz] = launch.grid;
    let [cx, cy, cz] = launch.cluster;
    let clusters = [gx / cx, gy / cy, gz / cz];
    let total = u64::from(clusters[0]) * u64::from(clusters[1]) * u64::from(clusters[2]);
    let mut done = 0u64;
    let result = (|| {
        for kz in 0..clusters[2] {
            for ky in 0..clusters[1] {
                for kx in 0..clusters[0] {
                    run_cluster(&mut world, [kx * cx, ky * cy, kz * cz])?;
                    done += 1;
                    world.cluster_index = done as u32;
                    if let Some(p) = options.progress.as_mut() {
                        p(done, total);
                    }
                }
            }
        }
        Ok(())
    })();
    *args = std::mem::take(&mut world.args);
    result.map(|()| Outcome { steps: world.steps, ctas: done * u64::from(cx * cy * cz) })
}

/// Refuses a launch the IR cannot run: arguments that do not fit the parameters, a block other than the
/// kernel's, a grid that is not whole clusters.
fn check_launch(kernel: &Kernel, launch: &Launch, args: &[Arg]) -> Result<(), InterpError> {
    let bad = |message: String| Err(InterpError::Arguments { message });
    if args.len() != kernel.params.len() {
        return bad(format!("kernel `{}` takes {} arguments, got {}", kernel.name, kernel.params.len(), args.len()));
    }
    for (p, a) in kernel.params.iter().zip(args) {
        let fits = matches!(
            (p.ty, a),
            (cutec_ir::Type::Ptr(cutec_ir::AddrSpace::Param), Arg::TensorMap(_))
                | (cutec_ir::Type::Ptr(_), Arg::Buffer(_))
                | (cutec_ir::Type::Scalar(_), Arg::Scalar(_))
        );
        if !fits {
            return bad(format!("parameter `{}` of type {} cannot take {a:?}", p.name, p.ty));
        }
        if let Arg::TensorMap(m) = a
            && !matches!(args.get(m.tensor as usize), Some(Arg::Buffer(_)))
        {
            return bad(format!("tensor map `{}` describes parameter {}, which is no buffer", p.name, m.tensor));
        }
    }
    if let Some(b) = kernel.block_size
        && b != launch.block
    {
        return bad(format!(
            "kernel `{}` is compiled for blocks of {b:?} threads, not {:?}",
            kernel.name, launch.block
        ));
    }
    let cluster = kernel.cluster.unwrap_or([1, 1, 1]);
    if cluster != launch.cluster {
        return bad(format!("kernel `{}` runs in clusters of {cluster:?}, not {:?}", kernel.name, launch.cluster));
    }
    let threads = launch.block.iter().try_fold(1u32, |a, &b| a.checked_mul(b));
    if threads.is_none_or(|t| t == 0 || t > 1024) {
        return bad(format!("a block of {:?} threads", launch.block));
    }
    for d in 0..3 {
        if launch.cluster[d] == 0 || !launch.grid[d].is_multiple_of(launch.cluster[d]) {
            return bad(format!("the grid {:?} is not whole clusters of {:?}", launch.grid, launch.cluster));
        }
    }
    Ok(())
}

/// Runs the CTAs of the cluster whose first block is `origin` to completion.
fn run_cluster(world: &mut World<'_>, origin: [u32; 3]) -> Result<(), InterpError> {
    let [cx, cy, cz] = world.launch.cluster;
    let [bx, by, bz] = world.launch.block;
    let shared_bytes = world.kernel.shared_bytes() as usize;
    world.ctas.clear();
    let mut threads: Vec<Thread<'_>> = Vec::new();
    // Ranks in the cluster are x-fastest, as %cluster_ctarank counts them.
    for z in 0..cz {
        for y in 0..cy {
            for x in 0..cx {
                let cta = world.ctas.len();
                let block = [origin[0] + x, origin[1] + y, origin[2] + z];
                world.ctas.push(Cta { block, shared: vec![0; shared_bytes], mbarriers: HashMap::new() });
                for tz in 0..bz {
                    for ty in 0..by {
                        for tx in 0..bx {
                            threads.push(Thread::new(world.kernel, cta, [tx, ty, tz], world.launch.block));
                        }
                    }
                }
            }
        }
    }
    let per_cta = world.threads_per_cta() as usize;
    world.races =
        world.check_races.then(|| crate::race::Races::new(world.ctas.len(), shared_bytes, threads.len() as u32));
    let mut arrival = 0u64;
    loop {
        let mut progressed = false;
        for t in threads.iter_mut() {
            if t.state == State::Ready {
                t.run(world)?;
                if let State::Blocked(b) = &mut t.state {
                    arrival += 1;
                    b.arrival = arrival;
                }
                progressed = true;
            }
        }
        if threads.iter().all(|t| t.state == State::Done) {
            // Copies still in flight land in a CTA that has exited: nothing reads them.
            while let Some(copy) = world.pending.pop_front() {
                crate::tma::land(world, copy)?;
            }
            return Ok(());
        }
        if let crate::Schedule::Seeded(_) = world.schedule {
            progressed |= land_some(world)?;
        }
        progressed |= crate::collective::release_collectives(world, &mut threads, per_cta)?;
        progressed |= release_barriers(world, &mut threads, per_cta);
        progressed |= release_waits(world, &mut threads);
        if !progressed && let Some(copy) = world.pending.pop_front() {
            crate::tma::land(world, copy)?;
            progressed = true;
        }
        if !progressed {
            return Err(deadlock(world, &threads));
        }
    }
}

/// The seeded schedule's step: each copy in flight lands with probability 1/2, in issue order.
fn land_some(world: &mut World<'_>) -> Result<bool, InterpError> {
    let mut landed = false;
    let mut kept = std::collections::VecDeque::new();
    while let Some(copy) = world.pending.pop_front() {
        // xorshift64*: the same sequence on every machine for a seed.
        world.rng ^= world.rng >> 12;
        world.rng ^= world.rng << 25;
        world.rng ^= world.rng >> 27;
        if world.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 63 == 1 {
            crate::tma::land(world, copy)?;
            landed = true;
        } else {
            kept.push_back(copy);
        }
    }
    world.pending = kept;
    Ok(landed)
}

/// Releases the threads of every CTA barrier (`bar.sync 0`, named barriers) whose count has arrived; the
/// count of a barrier without one is the CTA's threads that have not exited.
fn release_barriers(world: &World<'_>, threads: &mut [Thread<'_>], per_cta: usize) -> bool {
    let mut progressed = false;
    for cta_threads in threads.chunks_mut(per_cta) {
        let live = cta_threads.iter().filter(|t| t.state != State::Done).count();
        for id in 0..16u32 {
            let mut waiting: Vec<(u64, usize, Option<u32>)> = cta_threads
                .iter()
                .enumerate()
                .filter_map(|(i, t)| match &t.state {
                    State::Blocked(b) => match b.what {
                        Blocked::Bar { id: bid, count, .. } if bid == id => Some((b.arrival, i, count)),
                        _ => None,
                    },
                    _ => None,
                })
                .collect();
            let Some(&(_, _, count)) = waiting.first() else { continue };
            let needed = count.map_or(live, |n| n as usize);
            if waiting.len() >= needed && needed > 0 {
                waiting.sort_unstable();
                let released: Vec<usize> = waiting.iter().take(needed).map(|&(_, i, _)| i).collect();
                synchronise(world, cta_threads, &released);
                progressed = true;
            }
        }
    }
    // The cluster barrier: every thread of the cluster that has not exited.
    let live = threads.iter().filter(|t| t.state != State::Done).count();
    let at_cluster: Vec<usize> = (0..threads.len())
        .filter(|&i| matches!(&threads[i].state, State::Blocked(b) if matches!(b.what, Blocked::Cluster)))
        .collect();
    if !at_cluster.is_empty() && at_cluster.len() == live {
        synchronise(world, threads, &at_cluster);
        progressed = true;
    }
    progressed
}

/// Releases `threads[released]` from a barrier: each acquires what all of them released (their clocks
/// joined), and starts a new epoch.
fn synchronise(world: &World<'_>, threads: &mut [Thread<'_>], released: &[usize]) {
    if world.races.is_some() {
        let mut vc = crate::race::Clock::new();
        let mut fenced = crate::race::Clock::new();
        for &i in released {
            crate::race::join(&mut vc, &threads[i].vc);
            crate::race::join(&mut fenced, &threads[i].fenced);
        }
        for &i in released {
            let t = &mut threads[i];
            t.vc.clone_from(&vc);
            t.fenced.clone_from(&fenced);
            crate::race::tick(&mut t.vc, t.slot);
        }
    }
    for &i in released {
        threads[i].state = State::Ready;
    }
}

/// Releases the mbarrier waits whose phase has completed: a wait for parity `p` returns once the barrier's
/// current phase has the other parity (the phase of parity `p` before it has completed), and acquires the
/// clocks that phase released.
fn release_waits(world: &World<'_>, threads: &mut [Thread<'_>]) -> bool {
    let mut progressed = false;
    for t in threads.iter_mut() {
        if let State::Blocked(b) = &t.state
            && let Blocked::Mbarrier { cta, offset, parity } = b.what
            && let Some(m) = world.ctas[cta].mbarriers.get(&offset)
            && m.phase & 1 != u64::from(parity)
        {
            // The last completed phase of the parity waited for; none for a wait on the parity before phase 0
            // (which returns at once: the "preceding phase" counts as complete).
            let seen = (1..=2).map(|d| m.phase.checked_sub(d)).find(|p| p.is_none_or(|p| p & 1 == u64::from(parity)));
            if let (Some(Some(seen)), Some(r)) = (seen, world.races.as_ref()) {
                r.acquire(cta, offset, seen, &mut t.vc, &mut t.fenced);
            }
            t.state = State::Ready;
            progressed = true;
        }
    }
    progressed
}

/// The deadlock report: the blocked threads grouped by what they wait for and where.
fn deadlock(world: &World<'_>, threads: &[Thread<'_>]) -> InterpError {
    let mut groups: Vec<(Loc, String, usize, Vec<u32>)> = Vec::new();
    for t in threads {
        let State::Blocked(b) = &t.state else { continue };
        let what = match b.what {
            Blocked::Bar { id, count, .. } => match count {
                Some(n) => format!("named barrier {id} of {n} threads"),
                None => format!("barrier {id} of every thread of the block"),
            },
            Blocked::Cluster => "the cluster barrier".to_string(),
            Blocked::Mbarrier { cta, offset, parity } => match world.ctas[cta].mbarriers.get(&offset) {
                Some(m) => format!(
                    "the mbarrier at byte {offset} of shared memory, in phase {} (pending arrivals {}, transaction \
                     bytes {}), to complete the phase of parity {parity}",
                    m.phase, m.pending, m.tx
                ),
                None => format!("the mbarrier at byte {offset} of shared memory, never initialised"),
            },
            Blocked::Collective { .. } => {
                "the other lanes of its warp (warpgroup) at this collective operation".to_string()
            }
        };
        match groups.iter_mut().find(|g| g.0 == b.loc && g.1 == what && g.2 == t.cta) {
            Some(g) => g.3.push(t.linear),
            None => groups.push((b.loc, what, t.cta, vec![t.linear])),
        }
    }
    let waits = groups
        .into_iter()
        .map(|(loc, what, cta, ids)| {
            let block = world.ctas[cta].block;
            Wait { loc, what, threads: format!("threads {} of block {block:?}", ranges(&ids)) }
        })
        .collect();
    InterpError::Deadlock { waits }
}

/// `0..127, 256` for sorted ids.
fn ranges(ids: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        out.push(if i == j { ids[i].to_string() } else { format!("{}..{}", ids[i], ids[j]) });
        i = j + 1;
    }
    out.join(", ")
}

/// Thread `tid` of CTA `cta` (its index in the running cluster), as errors name it.
pub(crate) fn thread_ref(world: &World<'_>, cta: usize, tid: [u32; 3]) -> ThreadRef {
    ThreadRef { block: world.ctas.get(cta).map_or([0; 3], |c| c.block), thread: tid }
}

/// A value no expression may have before it is defined (the validator's SSA rules exclude reading one).
pub(crate) fn undef_error(loc: Loc, what: &str) -> InterpError {
    InterpError::Internal { loc, message: format!("{what} read before it is defined") }
}
