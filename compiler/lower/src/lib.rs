//! Lowering: from the checked program (`cutec-sema`) to the IR, one kernel at a time.
//!
//! Tensors and layouts exist only here. A tensor value is a `TensorView`: a base pointer in an address space, a
//! layout, an optional swizzle and an element **offset**: element `c` is element `swizzle(offset + L(c))` (CuTe's
//! `Sw o offset o L`). The lowering computes no layout itself: every operation of the algebra is
//! `cutec_layout::apply` (the checker's folding calls the same function), and coordinates become offsets through
//! the algebra's own `crd2idx` over symbolic integers (`cutec_symint::SymInt`: constants, dynamic dimensions, and
//! IR values as leaves), which `Lower::materialize` builds in IR where it is used. `copy` becomes one
//! load and one store per vector: the widest power of two of elements, at most 16 bytes, that is contiguous and
//! aligned in both tensors (the alignment of a kernel argument's base is then required in the manifest; known
//! divisors of symbolic offsets prove it).
//!
//! Device functions are inlined at each call; each inlined `make_tensor<_, smem>` is its own static shared
//! allocation. Loops with constant bounds whose body indexes a register tensor (or that say `unroll`) are
//! marked [`Unroll::Full`](cutec_ir::Unroll::Full) so that the `unroll` pass gives every register access a
//! constant offset.
//!
//! Invariants: lowering never panics; every construct it cannot compile yet gets a diagnostic with a code of
//! [`cutec_ir::codes`] and the construct's span, and the kernel is then not returned. It is run only on programs
//! the checker accepted (it trusts the checker's types and resolutions, and reports rather than panics where
//! they are missing).

mod bounds;
mod budget;
mod call;
pub mod codes;
mod copy;
mod epilogue;
mod epilogue_map;
pub mod error;
mod expr;
mod flops;
mod interface;
mod layout;
mod mma;
mod persistent;
mod prove;
mod role;
mod stmatrix;
mod stmt;
mod tma;
mod value;

use cutec_diagnostics::{Diagnostic, FileId, Span};
use cutec_grammar::ast::{self, NodeId};
use cutec_ir::KernelBuilder;
use cutec_ir::Loc;
use cutec_ir::Module;
use cutec_ir::{Expr, Handle};
use cutec_sema::{FunctionInfo, ModuleId, Program};
use error::{Located, LowerError};
use std::collections::HashMap;
use value::{Binding, Value};

/// What the lowering makes of a program: the IR, and for each of its kernels (in the same order) the manifest
/// entry the runtime launches it with. The two travel side by side: the IR knows nothing of the manifest (no pass
/// reads it), and code generation completes each entry with what only it knows (static shared memory).
#[derive(Clone, Debug, Default)]
pub struct Lowered {
    pub module: Module,
    pub interfaces: Vec<cutec_manifest::Kernel>,
}

/// Lowers the kernel `kernel` of the root module of `program` into a module of one kernel.
pub fn lower(program: &Program, kernel: &str) -> Result<Lowered, Vec<Diagnostic>> {
    let Some(info) = program.kernel(kernel) else {
        let file = program.modules.first().map_or(FileId(0), |m| m.file);
        let error = Located { file, span: Span::default(), error: LowerError::NoKernel { name: kernel.to_owned() } };
        return Err(vec![error.to_diagnostic()]);
    };
    if let Some(chosen) = chosen_persistent(program, info) {
        return Ok(chosen);
    }
    let mut cx = Lower::new(program, info);
    cx.kernel();
    if !cx.errors.is_empty() {
        return Err(cx.errors.iter().map(Located::to_diagnostic).collect());
    }
    match cx.finish() {
        Err(errors) => Err(errors.iter().map(Located::to_diagnostic).collect()),
        Ok((kernel, Some(interface))) => {
            Ok(Lowered { module: Module { kernels: vec![kernel] }, interfaces: vec![interface] })
        }
        // `interface` reports why it has no entry; this is only reached if it did not.
        Ok((_, None)) => {
            let file = program.module(info.module).map_or(FileId(0), |m| m.file);
            let what = format!("kernel `{kernel}` was lowered without a manifest entry");
            Err(vec![Located { file, span: Span::default(), error: LowerError::Internal { what } }.to_diagnostic()])
        }
    }
}

/// The kernel run persistent, as `persistent(raster = grouped(8))` would run it, where the compiler may choose
/// that for the program ([`persistent::chooses_persistent`]: a plain warp-specialized loop over a 2-D grid of
/// tiles), it lowers without a diagnostic, and the pass pipeline schedules it; `None` otherwise, and the kernel
/// is lowered as written (its CTAs in grouped order). One CTA per SM then runs the tiles in turn, its producer
/// fetching the next tile's k-tiles while its consumers store the last one: 0.84-0.89 of cuBLAS for a plain
/// 128 x 128 loop on an H100, against 0.81-0.86 in grouped order (docs/perf/hopper-gemm.md).
fn chosen_persistent(program: &Program, info: &cutec_sema::FunctionInfo) -> Option<Lowered> {
    if !persistent::chooses_persistent(info) {
        return None;
    }
    let mut chosen = info.clone();
    chosen.persistent = Some(cutec_sema::Persistent { group: Some(persistent::RASTER_GROUP as u32) });
    let mut cx = Lower::new(program, &chosen);
    cx.kernel();
    if !cx.errors.is_empty() {
        return None;
    }
    let (kernel, interface) = match cx.finish() {
        Ok((kernel, Some(interface))) => (kernel, interface),
        _ => return None,
    };
    let module = Module { kernels: vec![kernel] };
    let mut trial = module.clone();
    cutec_ir::run_pipeline(&mut trial, cutec_ir::PipelineOptions::default()).ok()?;
    Some(Lowered { module, interfaces: vec![interface] })
}

/// Lowers every kernel of the root module (in source order) into one module.
pub fn lower_all(program: &Program) -> Result<Lowered, Vec<Diagnostic>> {
    let mut all = Lowered::default();
    let mut diagnostics = Vec::new();
    for k in program.kernels().filter(|k| k.module == ModuleId::ROOT) {
        match lower(program, &k.name) {
            Ok(one) => {
                all.module.kernels.extend(one.module.kernels);
                all.interfaces.extend(one.interfaces);
            }
            Err(d) => diagnostics.extend(d),
        }
    }
    if diagnostics.is_empty() { Ok(all) } else { Err(diagnostics) }
}

/// Whether the body reads and writes memory through each parameter: `(read, written)` by parameter index.
fn param_uses(k: &cutec_ir::Kernel) -> Vec<(bool, bool)> {
    // The parameter a pointer is derived from, through offsets (operands precede their users).
    let mut root: Vec<Option<u32>> = Vec::with_capacity(k.exprs.len());
    for (_, e) in k.exprs.iter() {
        root.push(match *e {
            Expr::Param(i) => Some(i),
            Expr::Offset { base, .. } => root.get(base.index()).copied().flatten(),
            _ => None,
        });
    }
    let mut uses = vec![(false, false); k.params.len()];
    let mut mark = |ptr: Handle<Expr>, write: bool| {
        if let Some(Some(i)) = root.get(ptr.index())
            && let Some(u) = uses.get_mut(*i as usize)
        {
            if write { u.1 = true } else { u.0 = true }
        }
    };
    k.body.visit(&mut |stmt| match stmt {
        cutec_ir::Stmt::Op { op: cutec_ir::Op::Load { ptr, .. }, .. } => mark(*ptr, false),
        cutec_ir::Stmt::Store { ptr, .. } => mark(*ptr, true),
        // The lowering makes no other access to parameter memory (TMA reads through a tensor map, not a
        // pointer parameter).
        cutec_ir::Stmt::Op { .. }
        | cutec_ir::Stmt::Emit(_)
        | cutec_ir::Stmt::WriteVar { .. }
        | cutec_ir::Stmt::If { .. }
        | cutec_ir::Stmt::For { .. }
        | cutec_ir::Stmt::While { .. }
        | cutec_ir::Stmt::Break
        | cutec_ir::Stmt::Continue
        | cutec_ir::Stmt::Return
        | cutec_ir::Stmt::Barrier(_)
        | cutec_ir::Stmt::Roles(_) => {}
    });
    uses
}

/// The largest base alignment the lowering assumes of a tensor argument (then required by the manifest):
/// enough for 16-byte vector accesses.
const MAX_PARAM_ALIGN: u32 = 16;

/// An error was recorded (in [`Lower::errors`]); the construct that failed produces nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reported;

pub(crate) type LResult<T> = Result<T, Reported>;

/// One function body being lowered: the kernel itself, or an inlined device function.
pub(crate) struct Frame<'p> {
    pub module: ModuleId,
    pub file: FileId,
    pub info: &'p FunctionInfo,
    /// The values of the parameters.
    pub args: Vec<Value>,
    /// `let` and `for` bindings, by binding id.
    pub bindings: HashMap<NodeId, Binding>,
}

/// The lowering state of one kernel.
pub(crate) struct Lower<'p> {
    pub program: &'p Program,
    pub kernel_info: &'p FunctionInfo,
    pub b: KernelBuilder,
    pub frames: Vec<Frame<'p>>,
    /// The kernel parameter that carries each dynamic dimension of the kernel, by [`cutec_sema::DimId`].
    pub dims: Vec<Handle<Expr>>,
    /// Per declared kernel parameter: the base alignment the generated code relies on (bytes).
    pub param_align: Vec<u32>,
    /// The errors found so far, rendered by [`lower`] at the end.
    pub errors: Vec<Located>,
    /// The name of the `let` being lowered: allocations made by its initializer take it.
    pub name_hint: Option<String>,
    /// A known divisor of each IR value the lowering wrapped as a symbolic integer ([`Lower::sym_value`]), by
    /// its leaf's id: what proves vector accesses aligned.
    pub divisors: HashMap<cutec_symint::ValueId, i64>,
    /// Dynamic dimensions read from a shape (not negative).
    pub shape_dims: std::collections::HashSet<String>,
    /// Each `for` variable's start and end, while its body is lowered: what bounds its reads.
    pub loop_ranges: HashMap<Handle<cutec_ir::Var>, (Handle<Expr>, Handle<Expr>)>,
    /// Comparisons known to hold where the lowering is (the conditions of the enclosing `if`s): `(a, b, strict)`
    /// is `a < b` or `a <= b`.
    pub facts: Vec<(Handle<Expr>, Handle<Expr>, bool)>,
    /// Advanced by every write of a variable and at the entry and exit of every loop: two reads of a variable in
    /// the same epoch give the same value.
    pub epoch: u32,
    /// The epoch of each read of a variable, by expression index.
    pub read_epochs: HashMap<u32, u32>,
    /// How deeply the blocks being lowered nest, inlined functions' included (see [`MAX_BLOCK_DEPTH`]).
    pub block_depth: u32,
    /// The kernel's manifest entry, once its parameters and launch clause are lowered.
    pub interface: Option<cutec_manifest::Kernel>,
    /// The TMA tensor maps the body uses, each with its kernel parameter (after the dynamic dimensions).
    pub tensor_maps: Vec<(cutec_manifest::TensorMapParam, Handle<Expr>)>,
    /// The kernel parameters TMA copies read (`false`) or write (`true`) through a tensor map.
    pub tma_uses: Vec<(usize, bool)>,
    /// The enclosing conditions (and loop bounds) that may differ between the threads of a warpgroup, innermost
    /// last, with what a diagnostic says of each.
    pub divergent: Vec<(Span, &'static str)>,
    /// A `return` under such a condition, lowered earlier: the code after it runs without the threads that took it.
    pub left_early: Option<Span>,
    /// Per enclosing loop: a `break` or `continue` under such a condition in its body so far (the rest of the
    /// body runs without the threads that took it).
    pub loop_exits: Vec<Option<Span>>,
    /// The views `mma.partition_c` made, by their offset's IR value ([`stmatrix::WarpFragment`]).
    pub warp_fragments: HashMap<cutec_symint::ValueId, stmatrix::WarpFragment>,
    /// Whether a `cluster_sync()` at the kernel body's top level came before, in program order: `map_shared`
    /// needs one.
    pub cluster_synced: bool,
    /// The register arrays laid out as a wgmma's (thread, value) map of a 64 x `cols` tile (`fragment_c`,
    /// `fragment_a`, and `make_fragment_like` of a whole one), by allocation: what `gemm` accepts as A in
    /// registers.
    pub wgmma_fragments: HashMap<Handle<Expr>, u32>,
    /// Where each top-level `role` of the kernel runs, by its statement's id (see [`Lower::plan_roles`]).
    pub roles: HashMap<NodeId, role::RoleSlot>,
    /// The role whose body is being lowered, if any.
    pub current_role: Option<role::RoleSlot>,
    /// The accumulators `fragment_c` made for a tiled MMA over several warpgroups, by allocation: each thread
    /// holds its warpgroup's part, so `store(acc, tile)` partitions `tile` as `partition_c` would.
    pub(crate) mma_accumulators: HashMap<Handle<Expr>, mma::MmaTiling>,
    /// The statement budget's state (see `budget`).
    pub budget: budget::Budget,
    /// In the body of a `persistent` kernel: the tile it runs (see `persistent`).
    pub tile: Option<persistent::Tile>,
    /// A TMA-store epilogue in that body left its last stores' reads to be waited for after the loop.
    pub tile_store_wait: bool,
    /// In a kernel whose CTAs the compiler rasterizes (see `persistent::rasterizes`): what `block_idx.x` and
    /// `block_idx.y` read.
    pub raster: Option<[Handle<Expr>; 2]>,
    /// The arguments (declared parameter index) that `store(.., map = f, with = x)` has the spare warps read one
    /// tile later, with the `with`'s place: `finish` refuses a kernel that writes one (E0326).
    pub map_reads_beside: Vec<(usize, Span)>,
    /// Whether the lowering is in the body of a `pipelined` loop (at any depth).
    pub in_pipelined: bool,
    /// The shared memory the largest ring of the `pipelined` loops lowered so far adds, as `pipeline-loops`
    /// computes it (`cutec_ir::passes::schedule::ring_bytes`): what the TMA epilogue's staging must leave room for.
    pub ring: Option<u64>,
    /// Statements the kernel starts with, ahead of its body: what a construct deep in the body needs done once
    /// and published by a CTA barrier first (the mbarriers of `store(.., map = f)`'s spare warps).
    pub prologue: cutec_ir::Block,
    /// The tensor-core work counted so far (the manifest's `flops`).
    pub(crate) flops: flops::Count,
}

/// The deepest nesting of blocks in a kernel, counting the blocks of inlined device functions: the parser bounds
/// the nesting of each function, but a chain of calls from deep inside each adds them up, and the lowering, the
/// passes and codegen walk blocks recursively.
pub(crate) const MAX_BLOCK_DEPTH: u32 = 512;

impl<'p> Lower<'p> {
    fn new(program: &'p Program, info: &'p FunctionInfo) -> Lower<'p> {
        Lower {
            program,
            kernel_info: info,
            b: KernelBuilder::new(info.name.clone()),
            frames: Vec::new(),
            dims: Vec::new(),
            param_align: Vec::new(),
            errors: Vec::new(),
            name_hint: None,
            divisors: HashMap::new(),
            shape_dims: info
                .dyn_dims
                .iter()
                .filter(|d| d.source.component == cutec_sema::DimComponent::Shape)
                .map(|d| d.name.clone())
                .collect(),
            loop_ranges: HashMap::new(),
            facts: Vec::new(),
            epoch: 0,
            read_epochs: HashMap::new(),
            block_depth: 0,
            interface: None,
            tensor_maps: Vec::new(),
            tma_uses: Vec::new(),
            divergent: Vec::new(),
            left_early: None,
            loop_exits: Vec::new(),
            warp_fragments: HashMap::new(),
            cluster_synced: false,
            wgmma_fragments: HashMap::new(),
            roles: HashMap::new(),
            current_role: None,
            mma_accumulators: HashMap::new(),
            budget: budget::Budget::default(),
            tile: None,
            raster: None,
            tile_store_wait: false,
            map_reads_beside: Vec::new(),
            in_pipelined: false,
            ring: None,
            prologue: cutec_ir::Block::new(),
            flops: flops::Count::default(),
        }
    }

    /// The kernel and its manifest entry, with what only the whole body tells: the alignment and access of each
    /// argument; E0326 for an argument the spare warps read one tile later (a `map`'s operand) that the kernel
    /// writes.
    fn finish(self) -> Result<(cutec_ir::Kernel, Option<cutec_manifest::Kernel>), Vec<Located>> {
        let file = self.file();
        let mut kernel = self.b.finish();
        if !self.prologue.stmts().is_empty() {
            // After the special registers' reads, which the builder emits first (the prologue reads them too).
            let (stmts, locs) = std::mem::take(&mut kernel.body).into_parts();
            let specials = stmts
                .iter()
                .take_while(|s| {
                    matches!(s, cutec_ir::Stmt::Emit(h) if matches!(kernel.exprs.get(*h), Some(cutec_ir::Expr::Special(_))))
                })
                .count();
            let mut rest = stmts.into_iter().zip(locs);
            let mut whole = cutec_ir::Block::new();
            for (s, l) in rest.by_ref().take(specials) {
                whole.push(s, l);
            }
            whole.append(self.prologue);
            for (s, l) in rest {
                whole.push(s, l);
            }
            kernel.body = whole;
        }
        let mut uses = param_uses(&kernel);
        for &(p, store) in &self.tma_uses {
            if let Some(u) = uses.get_mut(p) {
                if store { u.1 = true } else { u.0 = true }
            }
        }
        for ((p, &align), &(_, written)) in kernel.params.iter_mut().zip(&self.param_align).zip(&uses) {
            p.align = p.align.max(align);
            p.readonly = matches!(p.ty, cutec_ir::Type::Ptr(_)) && !written;
        }
        let written: Vec<Located> = self
            .map_reads_beside
            .iter()
            .filter(|&&(p, _)| uses.get(p).is_some_and(|u| u.1))
            .map(|&(p, span)| {
                let param = kernel.params.get(p).map_or_else(String::new, |q| q.name.clone());
                Located { file, span, error: LowerError::MapOperandWritten { param } }
            })
            .collect();
        if !written.is_empty() {
            return Err(written);
        }
        let aligns: Vec<u32> = kernel.params.iter().map(|p| p.align).collect();
        let mut interface = self.interface;
        if let Some(iface) = interface.as_mut() {
            interface::set_alignments(iface, &aligns);
            interface::set_access(iface, &uses);
            iface.tensor_maps = self.tensor_maps.into_iter().map(|(m, _)| m).collect();
        }
        Ok((kernel, interface))
    }

    /// Lowers the kernel: its parameters (pointers, scalars, then dynamic dimensions: the manifest's PTX
    /// parameter order), its launch configuration and its body.
    fn kernel(&mut self) {
        let info = self.kernel_info;
        let Some(module) = self.program.module(info.module) else { return };
        let Some(f) = self.function_ast(info.module, info.item) else { return };
        let file = module.file;
        self.frames.push(Frame { module: info.module, file, info, args: Vec::new(), bindings: HashMap::new() });
        self.at(f.sig_span);
        self.b.kernel_mut().loc = Loc::new(file, f.sig_span);
        let mut args = Vec::new();
        for (i, p) in info.params.iter().enumerate() {
            self.at(p.span);
            match self.param(i, p) {
                Ok(v) => args.push(v),
                Err(Reported) => return,
            }
        }
        for d in &info.dyn_dims {
            let h = self.b.scalar_param(&d.name, cutec_ir::Scalar::I32);
            self.dims.push(h);
        }
        if let Some(frame) = self.frames.last_mut() {
            frame.args = args;
        }
        let block = info.launch.as_ref().map(|l| l.block.iter().map(cutec_sema::SymInt::as_const).collect::<Vec<_>>());
        if let Some(dims) = block
            && !dims.is_empty()
            && dims.len() <= 3
            && let Some(v) = dims.into_iter().collect::<Option<Vec<i64>>>()
            && v.iter().all(|&d| (1..=i64::from(cutec_target::MAX_BLOCK_THREADS)).contains(&d))
        {
            let mut size = [1u32; 3];
            v.iter().enumerate().for_each(|(i, &d)| size[i] = d as u32);
            self.b.kernel_mut().block_size = Some(size);
        }
        // The cluster shape and `#[warp_specialized]` go into the IR as the checker recorded them; a pass
        // implements them or rejects them (never dropped without a word).
        let cluster = info.launch.as_ref().and_then(|l| l.cluster.as_ref());
        if let Some(dims) =
            cluster.and_then(|c| c.iter().map(cutec_sema::SymInt::as_const).collect::<Option<Vec<i64>>>())
            && (1..=3).contains(&dims.len())
            && dims.iter().all(|&d| (1..=16).contains(&d))
        {
            let mut size = [1u32; 3];
            dims.iter().enumerate().for_each(|(i, &d)| size[i] = d as u32);
            self.b.kernel_mut().cluster = Some(size);
        }
        self.b.kernel_mut().warp_specialized = info.warp_specialized;
        self.b.kernel_mut().unchecked_protocol = info.unchecked_protocol;
        if let Ok(iface) = self.interface(info, f.sig_span) {
            self.interface = Some(iface);
        }
        // Roles that cannot be placed are reported here, and their bodies then skipped.
        let _ = self.plan_roles(f);
        let _ = match info.persistent {
            Some(p) => self.persistent_body(p, &f.body, f.sig_span),
            None => {
                if persistent::rasterizes(info) {
                    self.at(f.sig_span);
                    self.raster = Some(self.grouped_block_idx());
                }
                self.block(&f.body)
            }
        };
        // The launch's tensor-core work: the grid's CTAs (a persistent kernel's tiles) times each one's.
        if let Some(iface) = &mut self.interface {
            iface.flops = self.flops.of_launch(&iface.launch.grid);
        }
        self.frames.pop();
    }

    /// A kernel parameter: a tensor becomes its base pointer, a scalar its value.
    fn param(&mut self, index: usize, p: &cutec_sema::ParamInfo) -> LResult<Value> {
        match &p.ty {
            cutec_sema::Type::Tensor(t) if t.space == cutec_sema::Space::Gmem => {
                let Some(elem) = t.elem.scalar() else { return self.unsupported(p.span, "a tensor of tuples") };
                let ir_elem = self.ir_scalar(elem, p.span)?;
                let Some(l) = &t.layout.value else {
                    return self.fail(
                        p.span,
                        LowerError::Layout { problem: "a parameter's layout must be written out".into() },
                    );
                };
                let layout = self.sym_layout(l, p.span)?;
                let bytes = ir_elem.size_bytes();
                // Arguments may alias (an in-place softmax passes one buffer twice): no `noalias`.
                let param = cutec_ir::Param {
                    name: p.name.clone(),
                    ty: cutec_ir::Type::Ptr(cutec_ir::AddrSpace::Global),
                    align: bytes,
                    noalias: false,
                    readonly: false,
                };
                let base = self.b.param(param);
                self.param_align.push(bytes);
                Ok(Value::Tensor(value::TensorView {
                    base,
                    space: cutec_ir::AddrSpace::Global,
                    elem,
                    offset: cutec_sema::SymInt::Const(0),
                    swizzle: None,
                    base_align: MAX_PARAM_ALIGN,
                    param: Some(index),
                    bounds: bounds::Bounds::of_argument(&p.name, &layout, &|d| self.shape_dims.contains(d)),
                    layout,
                    identity: None,
                }))
            }
            cutec_sema::Type::Scalar(s) => {
                let t = self.ir_scalar(*s, p.span)?;
                self.param_align.push(1);
                Ok(Value::Scalar(self.b.scalar_param(&p.name, t), *s))
            }
            other => {
                let other = other.to_string();
                self.unsupported(p.span, format!("a kernel parameter of type `{other}`"))
            }
        }
    }

    /// The innermost frame. There is always one while a body is lowered.
    pub fn frame(&self) -> LResult<&Frame<'p>> {
        self.frames.last().ok_or(Reported)
    }

    pub fn frame_mut(&mut self) -> LResult<&mut Frame<'p>> {
        self.frames.last_mut().ok_or(Reported)
    }

    pub fn file(&self) -> FileId {
        self.frames.last().map_or(FileId(0), |f| f.file)
    }

    /// Points the builder at `span` of the current file: the IR built next carries it.
    pub fn at(&mut self, span: Span) {
        let loc = Loc::new(self.file(), span);
        self.b.set_loc(loc);
    }

    /// Records `error` at `span` of the current file; the construct that failed produces nothing.
    pub fn fail<T>(&mut self, span: Span, error: LowerError) -> LResult<T> {
        let file = self.file();
        self.errors.push(Located { file, span, error });
        Err(Reported)
    }

    /// Records what the checker should have ruled out (a bug, reported rather than a panic).
    pub fn internal<T>(&mut self, span: Span, what: impl Into<String>) -> LResult<T> {
        self.fail(span, LowerError::Internal { what: what.into() })
    }

    /// Reports E0305 for the const generic `name` of the current function, which has no value: at its
    /// declaration, with the use that needed it as a secondary label. `use_span` is that use, or a parameter's
    /// name (the use is then found in its type), or the signature (the use is then found in the launch clause).
    pub fn no_value<T>(&mut self, name: &str, use_span: Span) -> LResult<T> {
        let f = self.frames.last().and_then(|f| self.function_ast(f.info.module, f.info.item));
        let decl = f.and_then(|f| f.generics.iter().find(|g| g.name.name == name)).map(|g| g.span);
        let param = f.and_then(|f| f.params.iter().find(|p| p.name.span == use_span));
        let (use_span, use_label) = if let Some(p) = param {
            let at = type_mentions(&p.ty, name, 0).unwrap_or(p.span);
            (at, format!("needed by the layout of `{}`", p.name.name))
        } else if let Some(l) = f.and_then(|f| f.launch.as_ref()).filter(|_| f.is_some_and(|f| f.sig_span == use_span))
        {
            let at = l.args.iter().find_map(|a| mentions(&a.value, name, 0)).unwrap_or(l.span);
            (at, "needed by the launch clause".to_owned())
        } else {
            (use_span, "needed here".to_owned())
        };
        let file = self.file();
        let error = LowerError::NoValue { name: name.to_owned(), decl, use_label };
        self.errors.push(Located { file, span: use_span, error });
        Err(Reported)
    }

    /// Records that the construct `what` at `span` is not supported yet (E0300).
    pub fn unsupported<T>(&mut self, span: Span, what: impl std::fmt::Display) -> LResult<T> {
        self.fail(span, LowerError::Unsupported { what: what.to_string() })
    }

    /// The checker's type of an expression or binding of the current module.
    pub fn type_of(&self, id: NodeId) -> &'p cutec_sema::Type {
        let m = self.frames.last().map_or(ModuleId::ROOT, |f| f.module);
        self.program.type_of(m, id)
    }

    pub fn resolution(&self, id: NodeId) -> Option<&'p cutec_sema::Resolution> {
        let m = self.frames.last().map_or(ModuleId::ROOT, |f| f.module);
        self.program.resolution(m, id)
    }

    /// The AST of item `item` of module `m`.
    pub fn function_ast(&self, m: ModuleId, item: usize) -> Option<&'p ast::Function> {
        let module = self.program.module(m)?;
        match &module.ast.items.get(item)?.kind {
            ast::ItemKind::Kernel(f) | ast::ItemKind::Fn(f) => Some(f),
            _ => None,
        }
    }
}

/// The span of the first use of the name `name` in `e`.
fn mentions(e: &ast::Expr, name: &str, depth: u32) -> Option<Span> {
    use ast::ExprKind as K;
    if depth > 64 {
        return None;
    }
    let go = |x: &ast::Expr| mentions(x, name, depth + 1);
    match &e.kind {
        K::Name { name: n, generics } if n.name == name && generics.is_empty() => Some(e.span),
        K::Name { generics, .. } => generics.iter().find_map(go),
        K::Tuple(items) => items.iter().find_map(go),
        K::Layout { shape, stride } => go(shape).or_else(|| go(stride)),
        K::Unary { operand, .. } => go(operand),
        K::Binary { lhs, rhs, .. } => go(lhs).or_else(|| go(rhs)),
        K::Call { args, .. } => args.iter().find_map(|a| go(&a.value)),
        K::Cast { value, .. } => go(value),
        _ => None,
    }
}

/// The span of the first use of the name `name` in a written type.
fn type_mentions(t: &ast::TypeExpr, name: &str, depth: u32) -> Option<Span> {
    match &t.kind {
        ast::TypeExprKind::Named { args, .. } => args.iter().find_map(|a| mentions(a, name, depth + 1)),
        ast::TypeExprKind::Tuple(items) if depth < 64 => items.iter().find_map(|x| type_mentions(x, name, depth + 1)),
        _ => None,
    }
}
