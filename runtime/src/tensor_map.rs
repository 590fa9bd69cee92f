//! TMA tensor maps: the 128-byte descriptor (`CUtensorMap`) that a Hopper kernel's `cp.async.bulk.tensor`
//! instructions read to move a box of a global tensor to or from shared memory.
//!
//! [`TensorMapDesc`] describes one map the way `cuTensorMapEncodeTiled` takes it (dimensions innermost first,
//! strides in bytes for every dimension but the innermost). [`TensorMapDesc::check`] applies every rule the driver
//! applies, so a map is refused with a message naming the rule rather than with `CUDA_ERROR_INVALID_VALUE`;
//! `runtime/examples/tensor_map_check.rs` measures the agreement of the two on the GPU. [`TensorMapDesc::encode`]
//! asks the driver for the bytes.

use crate::error::{CudaError, RuntimeError};
use cutec_manifest::DType;

pub use cutec_manifest::{TmaL2Promotion, TmaOobFill, TmaSwizzle};

/// One tiled tensor map. Index 0 is the innermost (contiguous) dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMapDesc {
    pub dtype: DType,
    /// The tensor's extent per dimension, innermost first.
    pub global_dims: Vec<u64>,
    /// The byte stride of dimensions 1.. (dimension 0 is contiguous): `rank - 1` entries.
    pub global_strides: Vec<u64>,
    /// The box moved by one instruction, in elements per dimension.
    pub box_dims: Vec<u32>,
    /// The step between elements taken, per dimension (1 takes every element).
    pub element_strides: Vec<u32>,
    pub swizzle: TmaSwizzle,
    pub l2_promotion: TmaL2Promotion,
    pub oob_fill: TmaOobFill,
}

/// A rule of `cuTensorMapEncodeTiled` a description breaks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TensorMapError {
    #[error("a tensor map has rank 1 to 5, not {rank}")]
    Rank { rank: usize },
    #[error("{what} has {got} entries; the rank is {rank}")]
    Length { what: &'static str, got: usize, rank: usize },
    #[error("TMA has no element type for {dtype}")]
    DType { dtype: DType },
    #[error("the tensor's address {address:#x} is not 16-byte aligned")]
    Address { address: u64 },
    #[error("dimension {dim} has extent {extent}; TMA takes 1 to 2^32")]
    Extent { dim: usize, extent: u64 },
    #[error("dimension {dim} has a stride of {stride} bytes; TMA takes multiples of 16 below 2^40")]
    Stride { dim: usize, stride: u64 },
    #[error("box dimension {dim} is {size}; TMA takes 1 to {}", cutec_target::TMA_MAX_BOX)]
    BoxSize { dim: usize, size: u32 },
    #[error("the box's inner row is {bytes} bytes; TMA moves rows of a multiple of 16 bytes")]
    BoxRow { bytes: u64 },
    #[error("element stride {dim} is {stride}; TMA takes 1 to 8")]
    ElementStride { dim: usize, stride: u32 },
    #[error("the box's inner row is {bytes} bytes, more than the {span}-byte span of its swizzle")]
    SwizzleSpan { bytes: u64, span: u64 },
    #[error("NaN fill needs a 16-, 32- or 64-bit floating-point tensor, not {dtype}")]
    NanFill { dtype: DType },
}

impl TensorMapDesc {
    pub fn rank(&self) -> usize {
        self.global_dims.len()
    }

    /// Checks every rule of `cuTensorMapEncodeTiled` (tiled, no interleave) for a tensor at `address`.
    pub fn check(&self, address: u64) -> Result<(), TensorMapError> {
        let rank = self.rank();
        if !(1..=5).contains(&rank) {
            return Err(TensorMapError::Rank { rank });
        }
        for (what, got, want) in [
            ("global_strides", self.global_strides.len(), rank - 1),
            ("box_dims", self.box_dims.len(), rank),
            ("element_strides", self.element_strides.len(), rank),
        ] {
            if got != want {
                return Err(TensorMapError::Length { what, got, rank });
            }
        }
        data_type(self.dtype).ok_or(TensorMapError::DType { dtype: self.dtype })?;
        if !address.is_multiple_of(16) {
            return Err(TensorMapError::Address { address });
        }
        for (dim, &extent) in self.global_dims.iter().enumerate() {
            if !(1..=1u64 << 32).contains(&extent) {
                return Err(TensorMapError::Extent { dim, extent });
            }
        }
        let elem = u64::from(self.dtype.size_bytes());
        for (k, &stride) in self.global_strides.iter().enumerate() {
            if !stride.is_multiple_of(16) || stride >= 1u64 << 40 {
                return Err(TensorMapError::Stride { dim: k + 1, stride });
            }
        }
        for (dim, &size) in self.box_dims.iter().enumerate() {
            if !(1..=cutec_target::TMA_MAX_BOX).contains(&size) {
                return Err(TensorMapError::BoxSize { dim, size });
            }
        }
        for (dim, &stride) in self.element_strides.iter().enumerate() {
            if !(1..=8).contains(&stride) {
                return Err(TensorMapError::ElementStride { dim, stride });
            }
        }
        let row = u64::from(self.box_dims[0]) * elem;
        if !row.is_multiple_of(16) {
            return Err(TensorMapError::BoxRow { bytes: row });
        }
        if let Some(span) = self.swizzle.span()
            && row > span
        {
            return Err(TensorMapError::SwizzleSpan { bytes: row, span });
        }
        // The 8-bit floats move as bytes: NaN fill needs a TMA float type.
        if self.oob_fill == TmaOobFill::Nan && !matches!(self.dtype, DType::F16 | DType::Bf16 | DType::F32 | DType::F64)
        {
            return Err(TensorMapError::NanFill { dtype: self.dtype });
        }
        Ok(())
    }

    /// The 128 bytes of the map for a tensor at `address`, from the driver, after [`TensorMapDesc::check`].
    pub fn encode(&self, address: u64) -> Result<TensorMap, RuntimeError> {
        use cudarc::driver::sys;
        self.check(address).map_err(|e| RuntimeError::Unsupported(format!("tensor map: {e}")))?;
        if !unsafe { sys::is_culib_present() } {
            return Err(RuntimeError::DriverNotFound);
        }
        let dtype = data_type(self.dtype).ok_or(RuntimeError::Unsupported(format!("TMA of {}", self.dtype)))?;
        let mut map = sys::CUtensorMap { opaque: [0; 16] };
        let r = self.encode_raw(&mut map, dtype, address);
        if r != sys::CUresult::CUDA_SUCCESS {
            return Err(RuntimeError::Cuda(CudaError::new("cuTensorMapEncodeTiled", cudarc::driver::DriverError(r))));
        }
        let mut bytes = [0u8; 128];
        for (chunk, word) in bytes.chunks_exact_mut(8).zip(map.opaque) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        Ok(TensorMap { bytes })
    }

    /// The driver's answer for this description as given, without [`TensorMapDesc::check`]: what the GPU check
    /// compares `check` with. `None` when the element type has no TMA type.
    pub fn driver_accepts(&self, address: u64) -> Option<bool> {
        use cudarc::driver::sys;
        let dtype = data_type(self.dtype)?;
        let rank = self.rank();
        // The driver reads `rank` entries of each array: short arrays are refused here, as `check` does.
        if !(1..=5).contains(&rank)
            || self.global_strides.len() + 1 != rank
            || self.box_dims.len() != rank
            || self.element_strides.len() != rank
        {
            return Some(false);
        }
        let mut map = sys::CUtensorMap { opaque: [0; 16] };
        Some(self.encode_raw(&mut map, dtype, address) == sys::CUresult::CUDA_SUCCESS)
    }

    fn encode_raw(
        &self,
        map: &mut cudarc::driver::sys::CUtensorMap,
        dtype: cudarc::driver::sys::CUtensorMapDataType,
        address: u64,
    ) -> cudarc::driver::sys::CUresult {
        use cudarc::driver::sys;
        let swizzle = match self.swizzle {
            TmaSwizzle::None => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
            TmaSwizzle::B32 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
            TmaSwizzle::B64 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
            TmaSwizzle::B128 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
        };
        let l2 = match self.l2_promotion {
            TmaL2Promotion::None => sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_NONE,
            TmaL2Promotion::B64 => sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
            TmaL2Promotion::B128 => sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            TmaL2Promotion::B256 => sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        };
        let fill = match self.oob_fill {
            TmaOobFill::Zero => sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            TmaOobFill::Nan => sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA,
        };
        // Safety: every array has the `rank` entries (`rank - 1` for the strides) the driver reads, and `map` is
        // 128 writable bytes; the driver does not dereference `address`.
        unsafe {
            sys::cuTensorMapEncodeTiled(
                map,
                dtype,
                self.rank() as u32,
                address as *mut std::ffi::c_void,
                self.global_dims.as_ptr(),
                self.global_strides.as_ptr(),
                self.box_dims.as_ptr(),
                self.element_strides.as_ptr(),
                sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                swizzle,
                l2,
                fill,
            )
        }
    }
}

/// An encoded map: the bytes a kernel receives as its `__grid_constant__` parameter (128 bytes, 64-byte aligned
/// in the parameter space). Aligned to 64 bytes here too, so that the bytes a launch points at are laid out as the
/// parameter is.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct TensorMap {
    pub bytes: [u8; 128],
}

impl std::fmt::Debug for TensorMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TensorMap(")?;
        self.bytes.iter().try_for_each(|b| write!(f, "{b:02x}"))?;
        write!(f, ")")
    }
}

/// The TMA element type of a manifest dtype; the 8-bit floats move as bytes, as CUTLASS moves them.
fn data_type(d: DType) -> Option<cudarc::driver::sys::CUtensorMapDataType> {
    use cudarc::driver::sys::CUtensorMapDataType as T;
    Some(match d {
        DType::U8 | DType::I8 | DType::E4m3 | DType::E5m2 | DType::Bool => T::CU_TENSOR_MAP_DATA_TYPE_UINT8,
        DType::F16 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        DType::Bf16 => T::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        DType::F32 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        DType::F64 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
        DType::I32 => T::CU_TENSOR_MAP_DATA_TYPE_INT32,
        DType::U32 => T::CU_TENSOR_MAP_DATA_TYPE_UINT32,
        DType::I64 => T::CU_TENSOR_MAP_DATA_TYPE_INT64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bf16 (M, K) = (1000, 777) K-major tensor, padded rows of 784 elements, boxes of 64 x 128 with SW128: a
    /// GEMM operand tile.
    fn operand() -> TensorMapDesc {
        TensorMapDesc {
            dtype: DType::Bf16,
            global_dims: vec![777, 1000],
            global_strides: vec![784 * 2],
            box_dims: vec![64, 128],
            element_strides: vec![1, 1],
            swizzle: TmaSwizzle::B128,
            l2_promotion: TmaL2Promotion::B128,
            oob_fill: TmaOobFill::Zero,
        }
    }

    #[test]
    fn a_gemm_operand_map_is_valid() {
        assert_eq!(operand().check(0x7f00_0000_0000), Ok(()));
    }

    #[test]
    fn every_rule_is_checked_and_named() {
        let with = |f: &dyn Fn(&mut TensorMapDesc)| {
            let mut d = operand();
            f(&mut d);
            d.check(0x7f00_0000_0000).expect_err("must be refused").to_string()
        };
        type Edit<'a> = &'a dyn Fn(&mut TensorMapDesc);
        let cases: [(Edit, &str); 10] = [
            (&|d| d.global_dims = vec![1; 6], "rank 1 to 5, not 6"),
            (&|d| d.box_dims = vec![64], "box_dims has 1 entries"),
            (&|d| d.global_dims[1] = 0, "dimension 1 has extent 0"),
            (&|d| d.global_dims[0] = (1 << 32) + 1, "TMA takes 1 to 2^32"),
            (&|d| d.global_strides[0] = 777 * 2, "a stride of 1554 bytes"),
            (&|d| d.box_dims[1] = 257, "box dimension 1 is 257"),
            (&|d| d.box_dims[0] = 4, "inner row is 8 bytes"),
            (&|d| d.element_strides[0] = 9, "element stride 0 is 9"),
            (&|d| d.swizzle = TmaSwizzle::B64, "more than the 64-byte span"),
            (
                &|d| {
                    d.dtype = DType::I32;
                    d.box_dims[0] = 16;
                    d.oob_fill = TmaOobFill::Nan;
                },
                "NaN fill needs a 16-, 32- or 64-bit floating-point tensor",
            ),
        ];
        for (f, says) in cases {
            let e = with(f);
            assert!(e.contains(says), "expected `{says}` in `{e}`");
        }
        assert!(operand().check(0x7f00_0000_0008).expect_err("misaligned").to_string().contains("16-byte aligned"));
    }

    #[test]
    fn each_dtype_has_its_tma_element_type_and_the_1_byte_types_move_as_bytes() {
        use cudarc::driver::sys::CUtensorMapDataType as T;
        let want = |d| match d {
            DType::F32 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            DType::F16 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            DType::Bf16 => T::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            DType::F64 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
            DType::I32 => T::CU_TENSOR_MAP_DATA_TYPE_INT32,
            DType::U32 => T::CU_TENSOR_MAP_DATA_TYPE_UINT32,
            DType::I64 => T::CU_TENSOR_MAP_DATA_TYPE_INT64,
            DType::I8 | DType::U8 | DType::E4m3 | DType::E5m2 | DType::Bool => T::CU_TENSOR_MAP_DATA_TYPE_UINT8,
        };
        for d in DType::ALL {
            assert_eq!(data_type(d), Some(want(d)), "{d}");
        }
    }

    #[test]
    fn an_encoded_map_is_64_byte_aligned_as_its_parameter() {
        assert_eq!(std::mem::align_of::<TensorMap>(), 64);
        assert_eq!(std::mem::size_of::<TensorMap>(), 128);
    }
}
