//! Seeded random tensors, made on the device.
//!
//! A tensor's elements depend only on `(seed, stream, element index)`: element `i` is made from SplitMix64's word
//! for counter `i + 1` of the stream's key (see [`random_bits`]), so the device fills any size in one pass with no
//! host memory or transfer, and the result is the same on every machine and for every grid. The distribution, per
//! element type (documented once, here; `fill.ptx` computes the same):
//!
//! - `f32`: uniform in `[-1, 1)` with 24 random bits (a multiple of 2^-23); `f16`, `bf16`, `e4m3`, `e5m2`: that
//!   `f32` rounded to nearest even; `f64`: uniform in `[-1, 1)` with 53 random bits;
//! - `i8`, `i32`, `i64`: uniform in `[-64, 64)`; `u8`, `u32`: uniform in `[0, 64)`; `bool`: 0 or 1.
//!
//! Small integers keep sums and products of integer kernels far from overflow; floats in `[-1, 1)` keep softmax
//! and GEMM outputs in range. [`random_elements`] is the host reference: the tests compare the device's bytes with
//! it, and the driver's unit tests use it where no GPU is present.

use std::ffi::{CString, c_void};
use std::sync::Arc;

use cudarc::driver::{result, sys};
use cutec_manifest::DType;

use crate::device::{Context, DeviceTensor};
use crate::error::{RuntimeError, cuda};
use crate::floats::{f32_to_bf16, f32_to_e4m3, f32_to_e5m2, f32_to_f16};
use crate::module::RawModule;

/// The fill kernels' PTX (one `cutec_fill_<dtype>` entry per element type).
pub const FILL_PTX: &str = include_str!("fill.ptx");

/// SplitMix64's increment (the golden ratio in 64-bit fixed point).
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function: a bijection of `u64` with good avalanche.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The key of stream `stream` (the parameter's index, for `cutec run`) under `seed`: one SplitMix64 step from
/// `seed ^ stream * C`, so streams of one seed, and seeds of one stream, do not overlap in any practical sense.
pub fn stream_key(seed: u64, stream: u64) -> u64 {
    mix((seed ^ stream.wrapping_mul(0xd1b5_4a32_d192_ed03)).wrapping_add(GAMMA))
}

/// The 64-bit word element `index` is made from: SplitMix64's output for counter `index + 1` of `key`. Equal to
/// the `index + 1`-th output of a sequential SplitMix64 started at `key`, which is what the host generated before
/// the fill moved to the device (the bytes of a seed did not change).
pub fn random_bits(key: u64, index: u64) -> u64 {
    mix(key.wrapping_add(index.wrapping_add(1).wrapping_mul(GAMMA)))
}

/// `f32` uniform in `[-1, 1)` from a word: its top 24 bits, scaled; every step is exact.
pub fn unit_f32(bits: u64) -> f32 {
    (bits >> 40) as f32 * (1.0 / (1u64 << 23) as f32) - 1.0
}

/// The little-endian bytes of the element of `dtype` made from `bits` (the first `dtype.size_bytes()` of 8).
pub fn element_from_bits(dtype: DType, bits: u64) -> [u8; 8] {
    let mut out = [0u8; 8];
    let small_signed = (bits >> 57) as i64 - 64;
    let small_unsigned = bits >> 58;
    match dtype {
        DType::F32 => out[..4].copy_from_slice(&unit_f32(bits).to_le_bytes()),
        DType::F64 => {
            let v = (bits >> 11) as f64 * (1.0 / (1u64 << 52) as f64) - 1.0;
            out.copy_from_slice(&v.to_le_bytes());
        }
        DType::F16 => out[..2].copy_from_slice(&f32_to_f16(unit_f32(bits)).to_le_bytes()),
        DType::Bf16 => out[..2].copy_from_slice(&f32_to_bf16(unit_f32(bits)).to_le_bytes()),
        DType::E4m3 => out[0] = f32_to_e4m3(unit_f32(bits)),
        DType::E5m2 => out[0] = f32_to_e5m2(unit_f32(bits)),
        // Two's complement truncation of a small value: the same bytes as the narrower type's.
        DType::I8 | DType::I32 | DType::I64 => out = small_signed.to_le_bytes(),
        DType::U8 | DType::U32 => out = small_unsigned.to_le_bytes(),
        DType::Bool => out[0] = (bits >> 63) as u8,
    }
    out
}

/// The host reference of [`DeviceTensor::fill_random`]: `count` elements of `dtype` (little-endian bytes) of
/// stream `stream` under `seed`.
pub fn random_elements(dtype: DType, count: usize, seed: u64, stream: u64) -> Vec<u8> {
    let key = stream_key(seed, stream);
    let size = dtype.size_bytes() as usize;
    let mut out = Vec::with_capacity(count.saturating_mul(size));
    for i in 0..count as u64 {
        out.extend_from_slice(&element_from_bits(dtype, random_bits(key, i))[..size]);
    }
    out
}

/// The PTX entry that fills tensors of `dtype`.
pub fn fill_kernel_name(dtype: DType) -> String {
    format!("cutec_fill_{}", dtype.name())
}

/// The fill module, loaded once per [`Context`] on first use.
#[derive(Debug)]
pub(crate) struct FillModule {
    _module: Arc<RawModule>,
    /// `cutec_fill_<dtype>` in the order of [`DType::ALL`].
    functions: Vec<sys::CUfunction>,
}

// SAFETY: `CUfunction` handles may be used from any thread once their context is bound (done before each launch);
// they are never mutated and the module that owns them lives as long as this value.
unsafe impl Send for FillModule {}
// SAFETY: as above.
unsafe impl Sync for FillModule {}

impl FillModule {
    pub(crate) fn load(ctx: &Context) -> Result<FillModule, RuntimeError> {
        let text = CString::new(FILL_PTX).map_err(|e| RuntimeError::PtxNul { offset: e.nul_position() })?;
        let module = Arc::new(RawModule::load(ctx, text.as_ptr().cast())?);
        let mut functions = Vec::with_capacity(DType::ALL.len());
        for dtype in DType::ALL {
            let name = fill_kernel_name(dtype);
            let c_name = CString::new(name.clone()).map_err(|e| RuntimeError::PtxNul { offset: e.nul_position() })?;
            // SAFETY: the module is loaded and kept alive by `module`.
            let f = unsafe { result::module::get_function(module.module, c_name) }.map_err(|e| {
                RuntimeError::KernelNotInModule { name, source: crate::CudaError::new("cuModuleGetFunction", e) }
            })?;
            functions.push(f);
        }
        Ok(FillModule { _module: module, functions })
    }
}

/// Threads per block of the fill kernels, and the most blocks one launch uses (a grid-stride loop covers the rest:
/// 2^24 threads keep every SM busy without a grid sized to the tensor).
const FILL_BLOCK: u32 = 256;
const FILL_MAX_BLOCKS: u64 = 1 << 16;

impl DeviceTensor {
    /// Fills the tensor with the seeded random elements of stream `stream` (asynchronously, on the context's
    /// stream). The bytes equal [`random_elements`]`(dtype, n, seed, stream)`.
    pub fn fill_random(&mut self, seed: u64, stream: u64) -> Result<(), RuntimeError> {
        let n = self.num_elements() as u64;
        if n == 0 {
            return Ok(());
        }
        let ctx = self.context().clone();
        let module = ctx.fill_module()?;
        let index = DType::ALL.iter().position(|&d| d == self.dtype()).unwrap_or(0);
        let Some(&func) = module.functions.get(index) else {
            return Err(RuntimeError::Unsupported(format!("a random fill of {}", self.dtype())));
        };
        let blocks = n.div_ceil(u64::from(FILL_BLOCK)).min(FILL_MAX_BLOCKS) as u32;
        let (mut ptr, mut count, mut key) = (self.device_ptr(), n, stream_key(seed, stream));
        let mut params: [*mut c_void; 3] = [(&raw mut ptr).cast(), (&raw mut count).cast(), (&raw mut key).cast()];
        ctx.ctx.bind_to_thread().map_err(cuda("cuCtxSetCurrent"))?;
        // SAFETY: the kernel takes (u64 address, u64 count, u64 key); the address is this tensor's live allocation
        // of `count` elements of the kernel's type, which `&mut self` keeps alive and unaliased for the call; the
        // parameter values outlive the call (the driver copies them at launch).
        unsafe {
            result::launch_kernel(func, (blocks, 1, 1), (FILL_BLOCK, 1, 1), 0, ctx.stream.cu_stream(), &mut params)
        }
        .map_err(cuda("cuLaunchKernel(cutec_fill)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::floats::{bf16_to_f32, e4m3_to_f32, e5m2_to_f32, f16_to_f32};

    /// The sequential generator the host used before the fill moved to the device.
    fn sequential(seed: u64, stream: u64, count: usize) -> Vec<u64> {
        let mut state = seed ^ stream.wrapping_mul(0xd1b5_4a32_d192_ed03);
        let next = |s: &mut u64| {
            *s = s.wrapping_add(GAMMA);
            mix(*s)
        };
        let mut s = next(&mut state);
        (0..count).map(|_| next(&mut s)).collect()
    }

    #[test]
    fn counter_form_equals_the_sequential_generator() {
        for (seed, stream) in [(0, 0), (42, 0), (42, 1), (u64::MAX, 7)] {
            let key = stream_key(seed, stream);
            let counter: Vec<u64> = (0..1000).map(|i| random_bits(key, i)).collect();
            assert_eq!(counter, sequential(seed, stream, 1000), "seed {seed} stream {stream}");
        }
    }

    #[test]
    fn pinned_bytes() {
        // Part of the contract: a seed gives these values on every machine, host or device.
        let f32s: Vec<f32> = random_elements(DType::F32, 3, 0, 0)
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(f32s, [0.304_896_95, 0.402_424_22, -0.225_751_76]);
    }

    fn values(dtype: DType, count: usize, seed: u64) -> Vec<f64> {
        let size = dtype.size_bytes() as usize;
        random_elements(dtype, count, seed, 3)
            .chunks_exact(size)
            .map(|c| {
                let b = |i: usize| c[i];
                match dtype {
                    DType::F32 => f64::from(f32::from_le_bytes([b(0), b(1), b(2), b(3)])),
                    DType::F64 => f64::from_le_bytes([b(0), b(1), b(2), b(3), b(4), b(5), b(6), b(7)]),
                    DType::F16 => f64::from(f16_to_f32(u16::from_le_bytes([b(0), b(1)]))),
                    DType::Bf16 => f64::from(bf16_to_f32(u16::from_le_bytes([b(0), b(1)]))),
                    DType::E4m3 => f64::from(e4m3_to_f32(b(0))),
                    DType::E5m2 => f64::from(e5m2_to_f32(b(0))),
                    DType::I8 => f64::from(b(0) as i8),
                    DType::U8 | DType::Bool => f64::from(b(0)),
                    DType::I32 => f64::from(i32::from_le_bytes([b(0), b(1), b(2), b(3)])),
                    DType::U32 => f64::from(u32::from_le_bytes([b(0), b(1), b(2), b(3)])),
                    DType::I64 => i64::from_le_bytes([b(0), b(1), b(2), b(3), b(4), b(5), b(6), b(7)]) as f64,
                }
            })
            .collect()
    }

    /// The documented distribution: every value in its range, and (over 200,000 draws) the mean and the variance
    /// of the uniform distribution within a margin of about ten standard errors, so the test fails for a wrong
    /// range or scale and not by chance.
    #[test]
    fn the_reference_has_the_documented_distribution() {
        const N: usize = 200_000;
        // (type, low, high, discrete): uniform on [low, high), or on the integers low..high.
        let cases = [
            (DType::F32, -1.0, 1.0, false),
            (DType::F64, -1.0, 1.0, false),
            (DType::F16, -1.0, 1.0, false),
            (DType::Bf16, -1.0, 1.0, false),
            (DType::E4m3, -1.0, 1.0, false),
            (DType::E5m2, -1.0, 1.0, false),
            (DType::I8, -64.0, 64.0, true),
            (DType::I32, -64.0, 64.0, true),
            (DType::I64, -64.0, 64.0, true),
            (DType::U8, 0.0, 64.0, true),
            (DType::U32, 0.0, 64.0, true),
            (DType::Bool, 0.0, 2.0, true),
        ];
        for (dtype, low, high, discrete) in cases {
            let v = values(dtype, N, 1);
            let rounded = matches!(dtype, DType::F16 | DType::Bf16 | DType::E4m3 | DType::E5m2);
            // Rounding to nearest may give exactly 1.0 in the narrow formats.
            let top = if rounded { high + f64::EPSILON } else { high };
            assert!(v.iter().all(|&x| x >= low && x < top), "{dtype}: a value outside [{low}, {high})");
            let (mean, var) = if discrete {
                let k = high - low; // k equally likely integers
                ((low + high - 1.0) / 2.0, (k * k - 1.0) / 12.0)
            } else {
                ((low + high) / 2.0, (high - low) * (high - low) / 12.0)
            };
            let m = v.iter().sum::<f64>() / N as f64;
            let s2 = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / N as f64;
            let se = (var / N as f64).sqrt();
            // FP8 rounding (3 mantissa bits) moves the variance by a few percent; allow it.
            let var_tolerance = if matches!(dtype, DType::E4m3 | DType::E5m2) { 0.05 } else { 0.02 };
            assert!((m - mean).abs() < 10.0 * se, "{dtype}: mean {m}, expected {mean}");
            assert!((s2 - var).abs() < var_tolerance * var, "{dtype}: variance {s2}, expected {var}");
            if discrete {
                // Every value of the range occurs.
                let distinct: std::collections::BTreeSet<i64> = v.iter().map(|&x| x as i64).collect();
                assert_eq!(distinct.len(), (high - low) as usize, "{dtype}");
            }
        }
        // The f32 values are multiples of 2^-23 (24 random bits), and neighbouring elements are not correlated.
        let f = values(DType::F32, N, 2);
        assert!(f.iter().all(|x| (x * f64::from(1u32 << 23)).fract() == 0.0));
        let corr = f.windows(2).map(|w| w[0] * w[1]).sum::<f64>() / (N as f64 - 1.0) / (1.0 / 3.0);
        assert!(corr.abs() < 0.02, "lag-1 correlation {corr}");
    }

    #[test]
    fn streams_and_seeds_differ_and_repeat() {
        let a = random_elements(DType::F32, 1000, 42, 0);
        assert_eq!(a, random_elements(DType::F32, 1000, 42, 0));
        assert_ne!(a, random_elements(DType::F32, 1000, 42, 1));
        assert_ne!(a, random_elements(DType::F32, 1000, 43, 0));
        // A prefix of a longer fill is the shorter fill: elements do not depend on the tensor's size.
        assert_eq!(random_elements(DType::Bf16, 10, 5, 2), random_elements(DType::Bf16, 20, 5, 2)[..20]);
        for dtype in DType::ALL {
            assert_eq!(random_elements(dtype, 5, 0, 0).len(), 5 * dtype.size_bytes() as usize);
        }
    }

    #[test]
    fn every_dtype_has_a_kernel_in_the_ptx() {
        for dtype in DType::ALL {
            let entry = format!(".visible .entry {}(", fill_kernel_name(dtype));
            assert!(FILL_PTX.contains(&entry), "fill.ptx lacks {entry}");
        }
    }
}
