//! Modules, kernels, checked launches and event timing.

use std::ffi::{CString, c_void};
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::{self, CUfunction_attribute, CUjit_option};
use cudarc::driver::{CudaContext, CudaStream, result};
use cutec_manifest::Manifest;

use crate::ScalarValue;
use crate::args::{ArgDesc, LaunchPlan, ParamValue, check_launch};
use crate::device::{Context, DeviceTensor};
use crate::error::{CudaError, RuntimeError, cuda};
use crate::tensor_map::TensorMap;

/// A loaded `CUmodule`, unloaded on drop.
#[derive(Debug)]
pub(crate) struct RawModule {
    pub(crate) module: sys::CUmodule,
    ctx: Arc<CudaContext>,
}

// SAFETY: driver API handles may be used from any thread; every use binds the owning context first.
unsafe impl Send for RawModule {}
// SAFETY: as above; the handle is never mutated after loading.
unsafe impl Sync for RawModule {}

impl RawModule {
    /// Loads a PTX text (NUL-terminated) or a cubin/fatbin image into `ctx` (`cuModuleLoadDataEx`); a failure
    /// carries the driver's JIT error log.
    pub(crate) fn load(ctx: &Context, image: *const c_void) -> Result<RawModule, RuntimeError> {
        ctx.ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        let mut error_log = vec![0u8; 1 << 16];
        let mut options = [CUjit_option::CU_JIT_ERROR_LOG_BUFFER, CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
        let mut values = [error_log.as_mut_ptr().cast::<c_void>(), std::ptr::without_provenance_mut(error_log.len())];
        let mut module = MaybeUninit::uninit();
        // SAFETY: `image` is a NUL-terminated PTX string or a cubin that outlives the call; the option arrays have
        // two entries each, and the log buffer is as large as its declared size.
        let status = unsafe {
            sys::cuModuleLoadDataEx(module.as_mut_ptr(), image, 2, options.as_mut_ptr(), values.as_mut_ptr())
        };
        if let Err(e) = status.result() {
            let end = error_log.iter().position(|&b| b == 0).unwrap_or(error_log.len());
            let log = String::from_utf8_lossy(&error_log[..end]).trim_end().to_owned();
            return Err(RuntimeError::ModuleLoad { source: CudaError::new("cuModuleLoadDataEx", e), log });
        }
        // SAFETY: the call succeeded, so it wrote the module handle.
        let module = unsafe { module.assume_init() };
        Ok(RawModule { module, ctx: ctx.ctx.clone() })
    }
}

impl Drop for RawModule {
    fn drop(&mut self) {
        self.ctx.record_err(self.ctx.bind_to_thread());
        // SAFETY: the module was loaded by `RawModule::load` and is unloaded exactly once; every `Kernel` holds an `Arc`
        // to this value, so none outlives it.
        self.ctx.record_err(unsafe { sys::cuModuleUnload(self.module) }.result());
    }
}

/// Whether a module built for `target` (`sm_90a`, `sm_90`, `sm_100f`) runs on a device of compute capability
/// `(major, minor)`. Arch-specific targets (`a`) need the exact capability; family targets (`f`) the same major
/// and at least the minor; plain PTX targets any device at least as new (the driver JIT-compiles forward), plain
/// cubins the same major and at least the minor. An unparsable target is left to the driver.
pub fn target_runs_on(target: &str, cubin: bool, (major, minor): (i32, i32)) -> bool {
    let Some(arch) = target.strip_prefix("sm_") else { return true };
    let (digits, suffix) = match arch.strip_suffix(['a', 'f']) {
        Some(d) => (d, arch.chars().last()),
        None => (arch, None),
    };
    let Ok(number) = digits.parse::<i32>() else { return true };
    let (t_major, t_minor) = (number / 10, number % 10);
    match suffix {
        Some('a') => (major, minor) == (t_major, t_minor),
        Some(_) => major == t_major && minor >= t_minor,
        None if cubin => major == t_major && minor >= t_minor,
        None => (major, minor) >= (t_major, t_minor),
    }
}

/// A module (PTX or cubin) loaded into a context, with its manifest.
#[derive(Debug, Clone)]
pub struct Module {
    raw: Arc<RawModule>,
    manifest: Arc<Manifest>,
    ctx: Context,
}

impl Module {
    /// Loads PTX text: the driver compiles it for the device (`cuModuleLoadDataEx`; NVRTC is not involved). A
    /// compilation failure carries the driver's JIT error log.
    pub fn load_ptx(ctx: &Context, ptx: &str, manifest: Manifest) -> Result<Module, RuntimeError> {
        let text = CString::new(ptx).map_err(|e| RuntimeError::PtxNul { offset: e.nul_position() })?;
        Self::load(ctx, text.as_ptr().cast(), false, manifest)
    }

    /// Loads a cubin (ELF) or fatbin image. The image must start with the ELF or fatbin magic number: the driver
    /// finds the end of the image from its headers, so anything else (such as PTX text without a NUL) is refused.
    pub fn load_cubin(ctx: &Context, cubin: &[u8], manifest: Manifest) -> Result<Module, RuntimeError> {
        const ELF: [u8; 4] = [0x7f, b'E', b'L', b'F'];
        const FATBIN: [u8; 4] = 0xba55_ed50u32.to_le_bytes();
        if !(cubin.starts_with(&ELF) || cubin.starts_with(&FATBIN)) {
            return Err(RuntimeError::NotABinary { len: cubin.len() });
        }
        Self::load(ctx, cubin.as_ptr().cast(), true, manifest)
    }

    fn load(ctx: &Context, image: *const c_void, cubin: bool, manifest: Manifest) -> Result<Module, RuntimeError> {
        manifest.validate()?;
        let (major, minor) = ctx.compute_capability()?;
        if !target_runs_on(&manifest.target, cubin, (major, minor)) {
            return Err(RuntimeError::TargetMismatch {
                target: manifest.target.clone(),
                ordinal: ctx.ordinal(),
                device: ctx.device_name().unwrap_or_else(|_| "unknown device".into()),
                major,
                minor,
            });
        }
        let raw = Arc::new(RawModule::load(ctx, image)?);
        Ok(Module { raw, manifest: Arc::new(manifest), ctx: ctx.clone() })
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The kernel whose PTX entry is `name`, which the manifest must describe.
    pub fn kernel(&self, name: &str) -> Result<Kernel, RuntimeError> {
        let Some(manifest) = self.manifest.kernel(name) else {
            let available = self.manifest.kernels.iter().map(|k| k.name.as_str()).collect::<Vec<_>>().join(", ");
            return Err(RuntimeError::UnknownKernel { name: name.to_owned(), available });
        };
        // Manifest validation guarantees a PTX identifier, so there is no NUL.
        let c_name = CString::new(name)
            .map_err(|_| RuntimeError::UnknownKernel { name: name.to_owned(), available: String::new() })?;
        self.ctx.ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        // SAFETY: the module is loaded and kept alive by `self.raw`.
        let func = unsafe { result::module::get_function(self.raw.module, c_name) }.map_err(|e| {
            RuntimeError::KernelNotInModule { name: name.to_owned(), source: CudaError::new("cuModuleGetFunction", e) }
        })?;
        // A persistent kernel's grid is sized from the SM count at launch.
        let sms = self
            .ctx
            .ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(cuda("cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)"))?;
        Ok(Kernel {
            func,
            sms: u32::try_from(sms).unwrap_or(1).max(1),
            _module: self.raw.clone(),
            manifest: manifest.clone(),
            ctx: self.ctx.ctx.clone(),
            stream: self.ctx.stream.clone(),
            ordinal: self.ctx.ordinal(),
            smem_allowed: AtomicU32::new(cutec_target::MAX_STATIC_SHARED_BYTES),
            non_portable_cluster: AtomicBool::new(false),
            last_checked: Mutex::new(None),
        })
    }
}

/// An argument of a launch.
#[derive(Debug, Clone, Copy)]
pub enum KernelArg<'a> {
    Tensor(&'a DeviceTensor),
    Scalar(ScalarValue),
}

impl KernelArg<'_> {
    pub fn desc(&self) -> ArgDesc {
        match self {
            KernelArg::Tensor(t) => ArgDesc::Tensor(t.desc()),
            KernelArg::Scalar(v) => ArgDesc::Scalar(*v),
        }
    }

    /// Whether [`Self::desc`] would equal `d`, without allocating.
    fn matches(&self, d: &ArgDesc) -> bool {
        match (self, d) {
            (KernelArg::Tensor(t), ArgDesc::Tensor(d)) => t.matches_desc(d),
            (KernelArg::Scalar(v), ArgDesc::Scalar(w)) => v == w,
            _ => false,
        }
    }
}

/// Attributes the driver reports for a loaded kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelInfo {
    pub num_regs: i32,
    pub static_smem_bytes: i32,
    /// Local memory per thread: non-zero means register spills or stack.
    pub local_bytes: i32,
    pub max_threads_per_block: i32,
    pub ptx_version: i32,
    pub binary_version: i32,
}

/// A kernel of a loaded module and its manifest entry.
#[derive(Debug)]
pub struct Kernel {
    func: sys::CUfunction,
    /// The device's SM count: a persistent kernel launches at most one CTA per SM.
    sms: u32,
    _module: Arc<RawModule>,
    manifest: cutec_manifest::Kernel,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    ordinal: usize,
    /// The dynamic shared memory the function is currently allowed (the driver's default is 48 KiB).
    smem_allowed: AtomicU32,
    non_portable_cluster: AtomicBool,
    /// The last argument set [`Kernel::launch`] checked and its plan: launching again with the same arguments (the
    /// same buffers, shapes and scalar values) skips the check, which is most of a launch's host time.
    last_checked: Mutex<Option<(Vec<ArgDesc>, ReadyLaunch)>>,
}

// SAFETY: `CUfunction` is a driver handle usable from any thread once the context is bound (done before each use);
// the mutable state is atomic.
unsafe impl Send for Kernel {}
// SAFETY: as above.
unsafe impl Sync for Kernel {}

/// One 8-byte, 8-aligned slot holding a PTX parameter's bytes.
#[repr(C, align(8))]
struct Slot([u8; 8]);

/// A checked plan with its tensor maps encoded: everything a launch passes to the driver.
#[derive(Debug, Clone)]
struct ReadyLaunch {
    plan: LaunchPlan,
    /// The bytes of `plan.tensor_maps`, in order; each 64-byte aligned.
    maps: Vec<TensorMap>,
}

impl ReadyLaunch {
    fn new(plan: LaunchPlan) -> Result<ReadyLaunch, RuntimeError> {
        let maps = plan.tensor_maps.iter().map(|m| m.desc.encode(m.address)).collect::<Result<_, _>>()?;
        Ok(ReadyLaunch { plan, maps })
    }

    fn param_count(&self) -> usize {
        self.plan.params.len() + self.maps.len()
    }
}

/// Fills `ptrs` (one entry per PTX parameter, in ABI order) with pointers to each parameter's bytes, as
/// `cuLaunchKernel`'s `kernelParams` takes them: the values of `params` are written into `slots` (one each), the
/// tensor maps are pointed at where they are. The pointers are valid while `slots` and `maps` are.
fn point_at_params(params: &[ParamValue], maps: &[TensorMap], slots: &mut [Slot], ptrs: &mut [*mut c_void]) {
    for (slot, p) in slots.iter_mut().zip(params) {
        slot.0 = p.to_le_bytes();
    }
    let values = slots.iter_mut().take(params.len()).map(|s| s.0.as_mut_ptr().cast());
    // The driver only reads through these pointers.
    let maps = maps.iter().map(|m| m.bytes.as_ptr().cast_mut().cast());
    for (ptr, p) in ptrs.iter_mut().zip(values.chain(maps)) {
        *ptr = p;
    }
}

impl Kernel {
    pub fn name(&self) -> &str {
        &self.manifest.name
    }

    pub fn manifest(&self) -> &cutec_manifest::Kernel {
        &self.manifest
    }

    /// Checks `args` against the manifest and computes the launch, without launching.
    pub fn plan(&self, args: &[KernelArg<'_>]) -> Result<LaunchPlan, RuntimeError> {
        let descs: Vec<ArgDesc> = args.iter().map(KernelArg::desc).collect();
        check_launch(&self.manifest, self.ordinal, &descs)
            .map_err(|source| RuntimeError::Argument { kernel: self.manifest.name.clone(), source: Box::new(source) })
    }

    /// Checks the arguments and encodes the tensor maps once for any number of launches; the tensors stay
    /// borrowed meanwhile.
    pub fn prepare<'a>(&'a self, args: &[KernelArg<'a>]) -> Result<PreparedLaunch<'a>, RuntimeError> {
        Ok(PreparedLaunch { kernel: self, ready: ReadyLaunch::new(self.plan(args)?)?, _tensors: PhantomData })
    }

    /// Checks the arguments and launches (asynchronously: a fault inside the kernel is reported by the next
    /// synchronizing call, e.g. [`Context::synchronize`]).
    pub fn launch(&self, args: &[KernelArg<'_>]) -> Result<(), RuntimeError> {
        // A poisoned lock only means another thread panicked mid-launch: the cache is then simply not trusted.
        if let Ok(cache) = self.last_checked.lock()
            && let Some((descs, ready)) = cache.as_ref()
            && descs.len() == args.len()
            && args.iter().zip(descs).all(|(a, d)| a.matches(d))
        {
            return self.launch_ready(ready);
        }
        let descs: Vec<ArgDesc> = args.iter().map(KernelArg::desc).collect();
        let plan = check_launch(&self.manifest, self.ordinal, &descs).map_err(|source| RuntimeError::Argument {
            kernel: self.manifest.name.clone(),
            source: Box::new(source),
        })?;
        let ready = ReadyLaunch::new(plan)?;
        self.launch_ready(&ready)?;
        if let Ok(mut cache) = self.last_checked.lock() {
            *cache = Some((descs, ready));
        }
        Ok(())
    }

    /// Checks arguments described by address (another framework's tensors: a torch tensor, an object with
    /// `__cuda_array_interface__`) and launches on `stream`, a raw `CUstream` handle of this kernel's context as
    /// frameworks expose it (`torch.cuda.current_stream().cuda_stream`; 0 is the legacy default stream). As in
    /// [`Kernel::launch`], launching again with equal descriptions skips the check.
    ///
    /// # Safety
    ///
    /// Every tensor description must be true: `ptr` a device address of this kernel's context, valid for `len`
    /// elements of `dtype`, and the memory must stay allocated until the kernel has finished on `stream`; `stream`
    /// must be null or a live stream of this kernel's context.
    pub unsafe fn launch_described(&self, args: &[ArgDesc], stream: usize) -> Result<(), RuntimeError> {
        let stream: sys::CUstream = std::ptr::with_exposed_provenance_mut(stream);
        if let Ok(cache) = self.last_checked.lock()
            && let Some((descs, ready)) = cache.as_ref()
            && descs.as_slice() == args
        {
            return self.launch_ready_on(ready, stream);
        }
        let plan = check_launch(&self.manifest, self.ordinal, args).map_err(|source| RuntimeError::Argument {
            kernel: self.manifest.name.clone(),
            source: Box::new(source),
        })?;
        let ready = ReadyLaunch::new(plan)?;
        self.launch_ready_on(&ready, stream)?;
        if let Ok(mut cache) = self.last_checked.lock() {
            *cache = Some((args.to_vec(), ready));
        }
        Ok(())
    }

    /// The ordinal of the device the kernel is loaded on.
    pub fn device(&self) -> usize {
        self.ordinal
    }

    /// The grid a launch of `plan` runs: its grid, or for a persistent kernel (whose `plan.grid` counts tiles)
    /// at most one CTA per SM of this device (see `cutec_manifest::Launch::hardware_grid`).
    pub fn hardware_grid(&self, plan: &LaunchPlan) -> [u32; 3] {
        self.manifest.launch.hardware_grid(plan.grid, plan.cluster, self.sms)
    }

    /// The driver's attributes of the function.
    pub fn info(&self) -> Result<KernelInfo, RuntimeError> {
        use CUfunction_attribute::*;
        let get = |attr, call| {
            let mut v = 0i32;
            // SAFETY: `func` is a live function of a loaded module; `v` is a valid out-pointer.
            unsafe { sys::cuFuncGetAttribute(&mut v, attr, self.func) }.result().map(|()| v).map_err(cuda(call))
        };
        self.ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        Ok(KernelInfo {
            num_regs: get(CU_FUNC_ATTRIBUTE_NUM_REGS, "cuFuncGetAttribute(NUM_REGS)")?,
            static_smem_bytes: get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "cuFuncGetAttribute(SHARED_SIZE_BYTES)")?,
            local_bytes: get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "cuFuncGetAttribute(LOCAL_SIZE_BYTES)")?,
            max_threads_per_block: get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "cuFuncGetAttribute(MAX_THREADS)")?,
            ptx_version: get(CU_FUNC_ATTRIBUTE_PTX_VERSION, "cuFuncGetAttribute(PTX_VERSION)")?,
            binary_version: get(CU_FUNC_ATTRIBUTE_BINARY_VERSION, "cuFuncGetAttribute(BINARY_VERSION)")?,
        })
    }

    fn set_attribute(&self, attr: CUfunction_attribute, value: i32, call: &'static str) -> Result<(), CudaError> {
        // SAFETY: `func` is a live function of a loaded module.
        unsafe { sys::cuFuncSetAttribute(self.func, attr, value) }.result().map_err(|e| CudaError::new(call, e))
    }

    fn launch_ready(&self, ready: &ReadyLaunch) -> Result<(), RuntimeError> {
        self.launch_ready_on(ready, self.stream.cu_stream())
    }

    fn launch_ready_on(&self, ready: &ReadyLaunch, stream: sys::CUstream) -> Result<(), RuntimeError> {
        let plan = &ready.plan;
        self.ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        if plan.smem_bytes > self.smem_allowed.load(Ordering::Relaxed) {
            let bytes = i32::try_from(plan.smem_bytes).unwrap_or(i32::MAX);
            let attr = CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
            self.set_attribute(attr, bytes, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)").map_err(|source| {
                RuntimeError::SharedMemory { kernel: self.manifest.name.clone(), bytes: plan.smem_bytes, source }
            })?;
            self.smem_allowed.store(plan.smem_bytes, Ordering::Relaxed);
        }
        // The parameter array lives on the stack for up to MAX_INLINE_PARAMS parameters (no allocation per launch).
        const MAX_INLINE_PARAMS: usize = 32;
        let mut inline_slots = [const { Slot([0; 8]) }; MAX_INLINE_PARAMS];
        let mut inline_ptrs = [std::ptr::null_mut::<c_void>(); MAX_INLINE_PARAMS];
        let mut heap_slots: Vec<Slot>;
        let mut heap_ptrs: Vec<*mut c_void>;
        let n = ready.param_count();
        let ptrs: &mut [*mut c_void] = if n <= MAX_INLINE_PARAMS {
            point_at_params(&plan.params, &ready.maps, &mut inline_slots, &mut inline_ptrs);
            &mut inline_ptrs[..n]
        } else {
            heap_slots = plan.params.iter().map(|_| Slot([0; 8])).collect();
            heap_ptrs = vec![std::ptr::null_mut(); n];
            point_at_params(&plan.params, &ready.maps, &mut heap_slots, &mut heap_ptrs);
            &mut heap_ptrs
        };
        let [gx, gy, gz] = self.hardware_grid(plan);
        let [bx, by, bz] = plan.block;
        let Some([cx, cy, cz]) = plan.cluster else {
            // SAFETY: the arguments were checked against the manifest: one pointer per PTX parameter, each at the
            // parameter's bytes (a slot, or a tensor map of `ready`, both alive until the call returns); every
            // pointer argument and tensor map addresses a live allocation borrowed by the caller.
            return unsafe {
                result::launch_kernel(self.func, (gx, gy, gz), (bx, by, bz), plan.smem_bytes, stream, ptrs)
            }
            .map_err(cuda("cuLaunchKernel"));
        };
        if cx * cy * cz > cutec_target::PORTABLE_CLUSTER_CTAS && !self.non_portable_cluster.load(Ordering::Relaxed) {
            let attr = CUfunction_attribute::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED;
            self.set_attribute(attr, 1, "cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED)")?;
            self.non_portable_cluster.store(true, Ordering::Relaxed);
        }
        // SAFETY: an all-zero launch attribute is a valid plain-data value.
        let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attr.value.clusterDim = sys::CUlaunchAttributeValue_union__bindgen_ty_1 { x: cx, y: cy, z: cz };
        let config = sys::CUlaunchConfig {
            gridDimX: gx,
            gridDimY: gy,
            gridDimZ: gz,
            blockDimX: bx,
            blockDimY: by,
            blockDimZ: bz,
            sharedMemBytes: plan.smem_bytes,
            hStream: stream,
            attrs: &mut attr,
            numAttrs: 1,
        };
        // SAFETY: as for `launch_kernel` above; `config` and `attr` outlive the call.
        unsafe { sys::cuLaunchKernelEx(&config, self.func, ptrs.as_mut_ptr(), std::ptr::null_mut()) }
            .result()
            .map_err(cuda("cuLaunchKernelEx"))
    }
}

/// A checked launch with its tensor maps encoded, ready to be issued any number of times; borrows the argument
/// tensors.
#[derive(Debug)]
pub struct PreparedLaunch<'a> {
    kernel: &'a Kernel,
    ready: ReadyLaunch,
    _tensors: PhantomData<&'a DeviceTensor>,
}

impl PreparedLaunch<'_> {
    pub fn plan(&self) -> &LaunchPlan {
        &self.ready.plan
    }

    /// Issues the launch (asynchronously).
    pub fn launch(&self) -> Result<(), RuntimeError> {
        self.kernel.launch_ready(&self.ready)
    }
}

/// Launches `kernel` `warmup` times untimed, then `iters` times back to back with a CUDA event recorded between
/// consecutive launches; returns each launch's GPU time in milliseconds (the interval between its two events).
pub fn time_launches(
    kernel: &Kernel,
    args: &[KernelArg<'_>],
    warmup: usize,
    iters: usize,
) -> Result<Vec<f32>, RuntimeError> {
    let prepared = kernel.prepare(args)?;
    for _ in 0..warmup {
        prepared.launch()?;
    }
    let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    let events = (0..=iters)
        .map(|_| kernel.ctx.new_event(timing))
        .collect::<Result<Vec<_>, _>>()
        .map_err(cuda("cuEventCreate"))?;
    let record = |i: usize| events[i].record(&kernel.stream).map_err(cuda("cuEventRecord"));
    record(0)?;
    for i in 1..=iters {
        prepared.launch()?;
        record(i)?;
    }
    kernel.stream.synchronize().map_err(cuda("cuStreamSynchronize"))?;
    events.windows(2).map(|w| w[0].elapsed_ms(&w[1]).map_err(cuda("cuEventElapsedTime"))).collect()
}

/// Host time of one launch call, in microseconds (medians over rounds of back-to-back launches): through
/// [`Kernel::launch`] (arguments checked on every call), through a [`PreparedLaunch`] (checked once), and through
/// the bare driver call with the parameter array built once: the floor every other path is compared with.
#[derive(Clone, Copy, Debug)]
pub struct LaunchOverhead {
    pub checked_us: f64,
    pub prepared_us: f64,
    pub bare_us: f64,
}

/// Measures [`LaunchOverhead`] with `rounds` rounds of `per_round` launches of each kind. Launches are
/// asynchronous: only the host side is timed, and the stream is drained between rounds so that a full launch
/// queue never makes the host wait. Use a kernel that runs for less time than a launch takes to issue.
pub fn measure_launch_overhead(
    kernel: &Kernel,
    args: &[KernelArg<'_>],
    rounds: usize,
    per_round: usize,
) -> Result<LaunchOverhead, RuntimeError> {
    let prepared = kernel.prepare(args)?;
    let ReadyLaunch { plan, maps } = prepared.ready.clone();
    if plan.cluster.is_some() {
        return Err(RuntimeError::Unsupported("measuring the launch overhead of a cluster launch".into()));
    }
    let mut slots: Vec<Slot> = plan.params.iter().map(|_| Slot([0; 8])).collect();
    let mut ptrs: Vec<*mut c_void> = vec![std::ptr::null_mut(); plan.params.len() + maps.len()];
    point_at_params(&plan.params, &maps, &mut slots, &mut ptrs);
    let stream = kernel.stream.cu_stream();
    let ([gx, gy, gz], [bx, by, bz]) = (kernel.hardware_grid(&plan), plan.block);
    let mut bare = || {
        // SAFETY: the same checked parameters, tensor maps and live allocations as `prepared`, which borrows the
        // tensors; `slots` and `maps` outlive every launch.
        unsafe { result::launch_kernel(kernel.func, (gx, gy, gz), (bx, by, bz), plan.smem_bytes, stream, &mut ptrs) }
            .map_err(cuda("cuLaunchKernel"))
    };
    let per_round = per_round.max(1);
    let time = |launch: &mut dyn FnMut() -> Result<(), RuntimeError>| -> Result<f64, RuntimeError> {
        let mut samples = Vec::with_capacity(rounds);
        for _ in 0..rounds.max(1) {
            kernel.stream.synchronize().map_err(cuda("cuStreamSynchronize"))?;
            let start = std::time::Instant::now();
            for _ in 0..per_round {
                launch()?;
            }
            samples.push(start.elapsed().as_secs_f64() * 1e6 / per_round as f64);
        }
        kernel.stream.synchronize().map_err(cuda("cuStreamSynchronize"))?;
        samples.sort_by(f64::total_cmp);
        Ok(samples[samples.len() / 2])
    };
    kernel.ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
    let bare_us = time(&mut bare)?;
    let prepared_us = time(&mut || prepared.launch())?;
    let checked_us = time(&mut || kernel.launch(args))?;
    Ok(LaunchOverhead { checked_us, prepared_us, bare_us })
}

/// The median of `samples` (the mean of the middle two for an even count); `None` when empty. NaNs sort last.
pub fn median(samples: &[f32]) -> Option<f32> {
    let mut v = samples.to_vec();
    v.sort_by(f32::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        assert!(target_runs_on("sm_90a", false, (9, 0)));
        assert!(!target_runs_on("sm_90a", false, (10, 0)));
        assert!(!target_runs_on("sm_90a", false, (8, 9)));
        assert!(target_runs_on("sm_90", false, (10, 0)));
        assert!(!target_runs_on("sm_90", true, (10, 0)));
        assert!(target_runs_on("sm_100f", true, (10, 3)));
        assert!(!target_runs_on("sm_100f", true, (12, 0)));
        assert!(target_runs_on("sm_80", true, (8, 6)));
        assert!(target_runs_on("compute_90", false, (9, 0)));
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[f32::NAN, 1.0, 2.0]), Some(2.0));
    }

    #[test]
    fn no_driver_is_an_error_not_a_panic() {
        // SAFETY: only attempts to dlopen the driver library.
        if unsafe { sys::is_culib_present() } {
            return; // a machine with a driver: nothing to check here
        }
        assert!(matches!(Context::new(0), Err(RuntimeError::DriverNotFound)));
        assert!(matches!(Context::device_count(), Err(RuntimeError::DriverNotFound)));
    }
}
