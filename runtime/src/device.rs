//! The CUDA context and device tensors.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, sys};
use cutec_manifest::DType;

use crate::args::TensorDesc;
use crate::error::{RuntimeError, cuda};

/// A CUDA context (the device's primary context) and the stream all work of this runtime goes to (the context's
/// default stream, so work is ordered as issued).
#[derive(Debug, Clone)]
pub struct Context {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
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
        Ok(Context { ctx, stream })
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
        Ok(DeviceTensor { buf, ptr, dtype, shape: shape.to_vec(), num_bytes, ctx: ctx.clone() })
    }

    /// A tensor holding `bytes` (the elements in row-major order, little-endian).
    pub fn from_bytes(
        ctx: &Context,
        dtype: DType,
        shape: &[usize],
        bytes: &[u8],
    ) -> Result<DeviceTensor, RuntimeError> {
        let expected = Self::byte_size(dtype, shape)?;
        if bytes.len() != expected {
            let reason = format!("{} bytes given, {expected} needed", bytes.len());
            return Err(RuntimeError::Tensor { dtype, shape: shape.to_vec(), reason });
        }
        let mut t = Self::zeros(ctx, dtype, shape)?;
        if !bytes.is_empty() {
            ctx.stream.memcpy_htod(bytes, &mut t.buf).map_err(cuda("cuMemcpyHtoD"))?;
        }
        Ok(t)
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
        let mut out = vec![0u8; self.num_bytes];
        if self.num_bytes > 0 {
            let view = self.buf.try_slice(..self.num_bytes).ok_or_else(|| RuntimeError::Tensor {
                dtype: self.dtype,
                shape: self.shape.clone(),
                reason: "buffer smaller than its shape".into(),
            })?;
            self.ctx.stream.memcpy_dtoh(&view, &mut out).map_err(cuda("cuMemcpyDtoH"))?;
        }
        self.ctx.synchronize()?;
        Ok(out)
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
        row_major_matches(&self.shape, &d.shape, &d.strides)
    }

    /// The description the argument checker sees: row-major strides, the whole buffer as its extent.
    pub fn desc(&self) -> TensorDesc {
        // `byte_size` checked at construction that every count fits in i64.
        let shape: Vec<i64> = self.shape.iter().map(|&e| e as i64).collect();
        let strides = TensorDesc::row_major_strides(&shape).unwrap_or_default();
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
}
