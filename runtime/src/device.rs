//! The CUDA context and device tensors.

use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, sys};
use cutec_manifest::DType;

use crate::args::TensorDesc;
use crate::error::{RuntimeError, TensorBytes, cuda};
use crate::fill::FillModule;

/// A CUDA context (the device's primary context) and the stream all work of this runtime goes to (the context's
/// default stream, so work is ordered as issued).
#[derive(Debug, Clone)]
pub struct Context {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    /// The random-fill kernels, loaded on first use.
    fill: Arc<Mutex<Option<Arc<FillModule>>>>,
}

impl Context {
    /// Opens device `ordinal`. On a machine without the CUDA driver this is [`RuntimeError::DriverNotFound`]
    /// (the driver library is opened at run time; nothing is linked).
    pub fn new(ordinal: usize) -> Result<Context, RuntimeError> {
        // SAFETY: only attempts to dlopen the driver library by its usual names.
        if !unsafe { sys::is_culib_present() } {
            return Err(RuntimeError::DriverNotFound);
        }
        let ctx = CudaContext::new(ordinal).map_err(cuda("cuInit/cuDevicePrimaryCtxRetain"))?;
        let stream = ctx.default_stream();
        Ok(Context { ctx, stream, fill: Arc::default() })
    }

    /// The fill kernels of this context, loaded (JIT-compiled by the driver) on the first call.
    pub(crate) fn fill_module(&self) -> Result<Arc<FillModule>, RuntimeError> {
        // A poisoned lock only means another thread panicked while loading: load again.
        let mut slot = self.fill.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(m) = slot.as_ref() {
            return Ok(m.clone());
        }
        let m = Arc::new(FillModule::load(self)?);
        *slot = Some(m.clone());
        Ok(m)
    }

    /// `(free, total)` bytes of device memory, as the driver reports them now.
    pub fn memory_info(&self) -> Result<(usize, usize), RuntimeError> {
        self.ctx.mem_get_info().map_err(cuda("cuMemGetInfo"))
    }

    /// Refuses, before anything is allocated, a set of tensors (name, type, shape) larger than the device's free
    /// memory, naming each tensor and its size.
    pub fn check_fits(&self, tensors: &[(&str, DType, &[usize])]) -> Result<(), RuntimeError> {
        let (free, total) = self.memory_info()?;
        let device = self.device_name().unwrap_or_else(|_| "unknown device".into());
        check_fits(tensors, free as u64, total as u64, self.ordinal(), &device)
    }

    /// Number of CUDA devices.
    pub fn device_count() -> Result<usize, RuntimeError> {
        // SAFETY: as in `new`.
        if !unsafe { sys::is_culib_present() } {
            return Err(RuntimeError::DriverNotFound);
        }
        cudarc::driver::result::init().map_err(cuda("cuInit"))?;
        let n = CudaContext::device_count().map_err(cuda("cuDeviceGetCount"))?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    pub fn ordinal(&self) -> usize {
        self.ctx.ordinal()
    }

    /// The device's name, e.g. `NVIDIA H200`.
    pub fn device_name(&self) -> Result<String, RuntimeError> {
        self.ctx.name().map_err(cuda("cuDeviceGetName"))
    }

    /// `(major, minor)` compute capability, `(9, 0)` on Hopper.
    pub fn compute_capability(&self) -> Result<(i32, i32), RuntimeError> {
        self.ctx.compute_capability().map_err(cuda("cuDeviceGetAttribute(COMPUTE_CAPABILITY)"))
    }

    /// Waits for all work issued so far; reports the first asynchronous error (e.g. a kernel fault) if any.
    pub fn synchronize(&self) -> Result<(), RuntimeError> {
        self.stream.synchronize().map_err(cuda("cuStreamSynchronize"))?;
        self.ctx.check_err().map_err(cuda("an earlier asynchronous operation"))
    }
}

/// The rule of [`Context::check_fits`], without a device: every tensor's size is computed (an overflow is an
/// error naming the tensor) and their sum must not exceed `free`.
pub fn check_fits(
    tensors: &[(&str, DType, &[usize])],
    free: u64,
    total: u64,
    ordinal: usize,
    device: &str,
) -> Result<(), RuntimeError> {
    let mut sizes = Vec::with_capacity(tensors.len());
    let mut needed: u64 = 0;
    for &(name, dtype, shape) in tensors {
        let bytes = DeviceTensor::byte_size(dtype, shape).map_err(|_| RuntimeError::Tensor {
            dtype,
            shape: shape.to_vec(),
            reason: format!("`{name}`: the size overflows"),
        })? as u64;
        needed = needed.saturating_add(bytes);
        sizes.push(TensorBytes { name: name.to_owned(), dtype, shape: shape.to_vec(), bytes });
    }
    if needed <= free {
        return Ok(());
    }
    Err(RuntimeError::OutOfDeviceMemory { ordinal, device: device.to_owned(), needed, free, total, tensors: sizes })
}

/// The most bytes one host<->device copy call moves: large enough for full bandwidth, small enough that a
/// progress report comes several times a second.
pub const TRANSFER_CHUNK: usize = 64 << 20;

/// A dense row-major tensor in device memory: a byte buffer with an element type and a shape.
///
/// Invariants: the buffer holds at least `num_bytes()` bytes (at least one byte, so that an empty tensor still
/// has a valid address), and `device_ptr()` is the buffer's address (256-byte aligned, as every CUDA allocation).
#[derive(Debug)]
pub struct DeviceTensor {
    buf: CudaSlice<u8>,
    ptr: u64,
    dtype: DType,
    shape: Vec<usize>,
    /// Element strides of a permuted layout ([`Self::with_strides`]); `None` is row-major.
    strides: Option<Vec<i64>>,
    num_bytes: usize,
    ctx: Context,
}

impl DeviceTensor {
    fn byte_size(dtype: DType, shape: &[usize]) -> Result<usize, RuntimeError> {
        let elements = shape.iter().try_fold(1usize, |acc, &e| acc.checked_mul(e));
        let bytes = elements.and_then(|n| n.checked_mul(dtype.size_bytes() as usize));
        // Extents must also fit the checker's i64.
        match bytes {
            Some(b) if i64::try_from(b).is_ok() => Ok(b),
            _ => Err(RuntimeError::Tensor { dtype, shape: shape.to_vec(), reason: "the size overflows".into() }),
        }
    }

    /// A tensor of zero bytes.
    pub fn zeros(ctx: &Context, dtype: DType, shape: &[usize]) -> Result<DeviceTensor, RuntimeError> {
        let num_bytes = Self::byte_size(dtype, shape)?;
        let buf = ctx.stream.alloc_zeros::<u8>(num_bytes.max(1)).map_err(cuda("cuMemAlloc"))?;
        // A single stream: the returned synchronization guard has nothing to record and is dropped at once.
        let ptr = buf.device_ptr(&ctx.stream).0;
        Ok(DeviceTensor { buf, ptr, dtype, shape: shape.to_vec(), strides: None, num_bytes, ctx: ctx.clone() })
    }

    /// A tensor holding `bytes` (the elements in row-major order, little-endian).
    pub fn from_bytes(
        ctx: &Context,
        dtype: DType,
        shape: &[usize],
        bytes: &[u8],
    ) -> Result<DeviceTensor, RuntimeError> {
        Self::from_bytes_with_progress(ctx, dtype, shape, bytes, &mut |_| {})
    }

    /// [`Self::from_bytes`], calling `progress` with the number of bytes copied so far after each piece of at
    /// most [`TRANSFER_CHUNK`] bytes (for a progress line on long transfers).
    pub fn from_bytes_with_progress(
        ctx: &Context,
        dtype: DType,
        shape: &[usize],
        bytes: &[u8],
        progress: &mut dyn FnMut(usize),
    ) -> Result<DeviceTensor, RuntimeError> {
        let expected = Self::byte_size(dtype, shape)?;
        if bytes.len() != expected {
            let reason = format!("{} bytes given, {expected} needed", bytes.len());
            return Err(RuntimeError::Tensor { dtype, shape: shape.to_vec(), reason });
        }
        let mut t = Self::zeros(ctx, dtype, shape)?;
        let mut done = 0;
        for piece in bytes.chunks(TRANSFER_CHUNK) {
            let mut view = t.buf.try_slice_mut(done..done + piece.len()).ok_or_else(|| RuntimeError::Tensor {
                dtype,
                shape: shape.to_vec(),
                reason: "buffer smaller than its shape".into(),
            })?;
            // From pageable memory the call returns once the piece is staged: the count is the host's progress.
            ctx.stream.memcpy_htod(piece, &mut view).map_err(cuda("cuMemcpyHtoD"))?;
            done += piece.len();
            progress(done);
        }
        Ok(t)
    }

    /// The same buffer described with `strides` instead of row-major ones: a permutation of the shape's modes
    /// laid out compactly (a column-major matrix is `(1, rows)`), so the elements still fill the buffer exactly.
    /// The bytes are not moved; [`crate::strided`] converts between this order and row-major on the host.
    pub fn with_strides(mut self, strides: Vec<i64>) -> Result<DeviceTensor, RuntimeError> {
        if !crate::strided::is_permuted_compact(&self.shape, &strides) {
            let reason = format!("strides {strides:?} are not a permutation of a compact layout of the shape");
            return Err(RuntimeError::Tensor { dtype: self.dtype, shape: self.shape.clone(), reason });
        }
        self.strides = Some(strides);
        Ok(self)
    }

    /// The element strides the kernel sees: row-major unless [`Self::with_strides`] set others.
    pub fn strides(&self) -> Vec<i64> {
        match &self.strides {
            Some(s) => s.clone(),
            None => {
                let shape: Vec<i64> = self.shape.iter().map(|&e| e as i64).collect();
                TensorDesc::row_major_strides(&shape).unwrap_or_default()
            }
        }
    }

    /// Sets every byte to `byte` (e.g. `0xff` to poison an output: all-ones is NaN in every float format).
    pub fn fill_bytes(&mut self, byte: u8) -> Result<(), RuntimeError> {
        self.ctx.ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        // SAFETY: `ptr` is this tensor's live allocation of at least `num_bytes` bytes, on this stream.
        unsafe { cudarc::driver::result::memset_d8_async(self.ptr, byte, self.num_bytes, self.ctx.stream.cu_stream()) }
            .map_err(cuda("cuMemsetD8Async"))
    }

    /// Copies the elements back to the host (waits for all work issued before).
    pub fn to_bytes(&self) -> Result<Vec<u8>, RuntimeError> {
        self.to_bytes_with_progress(&mut |_| {})
    }

    /// [`Self::to_bytes`], calling `progress` with the number of bytes copied so far after each piece of at most
    /// [`TRANSFER_CHUNK`] bytes.
    pub fn to_bytes_with_progress(&self, progress: &mut dyn FnMut(usize)) -> Result<Vec<u8>, RuntimeError> {
        // Work issued before (the kernel) finishes first, so the pieces time the copy alone.
        self.ctx.synchronize()?;
        let mut out = vec![0u8; self.num_bytes];
        let mut done = 0;
        for piece in out.chunks_mut(TRANSFER_CHUNK) {
            let view = self.buf.try_slice(done..done + piece.len()).ok_or_else(|| RuntimeError::Tensor {
                dtype: self.dtype,
                shape: self.shape.clone(),
                reason: "buffer smaller than its shape".into(),
            })?;
            self.ctx.stream.memcpy_dtoh(&view, piece).map_err(cuda("cuMemcpyDtoH"))?;
            done += piece.len();
            progress(done);
        }
        self.ctx.synchronize()?;
        Ok(out)
    }

    pub(crate) fn context(&self) -> &Context {
        &self.ctx
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn num_elements(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn num_bytes(&self) -> usize {
        self.num_bytes
    }

    /// The device address of element 0.
    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }

    /// The device ordinal of the memory.
    pub fn ordinal(&self) -> usize {
        self.ctx.ordinal()
    }

    /// Whether [`Self::desc`] would equal `d`, without allocating (the launch path's cache check).
    pub fn matches_desc(&self, d: &TensorDesc) -> bool {
        if d.dtype != self.dtype
            || d.ptr != self.ptr
            || d.device != self.ordinal()
            || d.len != (self.num_bytes / self.dtype.size_bytes() as usize) as u64
        {
            return false;
        }
        match &self.strides {
            Some(strides) => {
                d.shape.len() == self.shape.len()
                    && d.shape.iter().zip(&self.shape).all(|(&a, &b)| a == b as i64)
                    && d.strides == *strides
            }
            None => row_major_matches(&self.shape, &d.shape, &d.strides),
        }
    }

    /// The description the argument checker sees: its strides (row-major unless set), the whole buffer as its
    /// extent.
    pub fn desc(&self) -> TensorDesc {
        // `byte_size` checked at construction that every count fits in i64.
        let shape: Vec<i64> = self.shape.iter().map(|&e| e as i64).collect();
        let strides = self.strides();
        TensorDesc {
            dtype: self.dtype,
            shape,
            strides,
            ptr: self.ptr,
            len: (self.num_bytes / self.dtype.size_bytes() as usize) as u64,
            device: self.ordinal(),
        }
    }
}

/// Whether `d_shape` is `shape` and `d_strides` its row-major strides as [`TensorDesc::row_major_strides`] gives
/// them, without allocating.
fn row_major_matches(shape: &[usize], d_shape: &[i64], d_strides: &[i64]) -> bool {
    if d_shape.len() != shape.len() || d_strides.len() != shape.len() {
        return false;
    }
    let mut stride: i64 = 1;
    for ((&extent, &s), &e) in shape.iter().zip(d_strides).zip(d_shape).rev() {
        if e != extent as i64 || s != stride {
            return false;
        }
        stride = stride.saturating_mul((extent as i64).max(1));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_major_match_agrees_with_row_major_strides() {
        for shape in [&[][..], &[7], &[4, 8], &[2, 0, 3], &[1, 1, 5], &[3, 5, 7, 2]] {
            let s: Vec<i64> = shape.iter().map(|&e| e as i64).collect();
            let strides = TensorDesc::row_major_strides(&s).expect("small shapes");
            assert!(row_major_matches(shape, &s, &strides), "{shape:?}");
            if let Some(last) = strides.len().checked_sub(1) {
                let mut wrong = strides.clone();
                wrong[last] += 1;
                assert!(!row_major_matches(shape, &s, &wrong), "{shape:?} with strides {wrong:?}");
                let mut other = s.clone();
                other[0] += 1;
                assert!(!row_major_matches(shape, &other, &strides), "{other:?}");
            }
            assert!(!row_major_matches(shape, &[s.clone(), vec![1]].concat(), &strides));
        }
    }

    #[test]
    fn tensors_larger_than_free_memory_are_refused_naming_each() {
        let shape: &[usize] = &[3_000_000, 4096];
        let tensors = [("x", DType::F32, shape), ("y", DType::F32, shape)];
        let gib = 1u64 << 30;
        assert!(check_fits(&tensors, 100 * gib, 140 * gib, 0, "H200").is_ok());
        let e = check_fits(&tensors, 80 * gib, 140 * gib, 0, "NVIDIA H200").unwrap_err().to_string();
        assert_eq!(
            e,
            "the tensors need 91.6 GiB of device memory, but device 0 (NVIDIA H200) has 80.0 GiB free of 140.0 GiB: \
             `x` f32[3000000, 4096] 45.8 GiB, `y` f32[3000000, 4096] 45.8 GiB"
        );
        let huge: &[usize] = &[usize::MAX, 2];
        let e = check_fits(&[("z", DType::Bf16, huge)], u64::MAX, u64::MAX, 0, "d").unwrap_err().to_string();
        assert!(e.contains("`z`: the size overflows"), "{e}");
    }
}
