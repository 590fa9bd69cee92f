//! TMA tensor maps of a kernel: which tensor parameter a `CUtensorMap` parameter describes, which of its modes
//! are the map's dimensions, and the box one `cp.async.bulk.tensor` moves.

use serde::{Deserialize, Serialize};

/// A TMA tensor map the runtime encodes at launch from a tensor argument and passes as a 128-byte,
/// 64-byte-aligned PTX parameter (a `__grid_constant__ CUtensorMap`).
///
/// Dimension `d` of the map (0 innermost, as the driver counts) is the top-level mode `modes[d]` of the tensor
/// parameter `tensor`: its extent is that mode's shape, its byte stride (for `d >= 1`) that mode's stride times the
/// element size; `modes[0]` has stride 1. Modes not listed are not part of the map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorMapParam {
    /// The PTX parameter's name; shares one namespace with the kernel's parameters and dimensions.
    pub name: String,
    /// The tensor parameter the map describes.
    pub tensor: String,
    /// The tensor's top-level mode for each map dimension, innermost first.
    pub modes: Vec<usize>,
    /// The box in elements per map dimension, innermost first.
    #[serde(rename = "box")]
    pub box_shape: Vec<u32>,
    pub swizzle: TmaSwizzle,
    pub l2_promotion: TmaL2Promotion,
    pub oob_fill: TmaOobFill,
}

/// The swizzle of the shared-memory box (`CU_TENSOR_MAP_SWIZZLE_*`): the span in bytes of one swizzle row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TmaSwizzle {
    #[serde(rename = "none")]
    None,
    #[serde(rename = "32B")]
    B32,
    #[serde(rename = "64B")]
    B64,
    #[serde(rename = "128B")]
    B128,
}

impl TmaSwizzle {
    /// The span in bytes, the longest inner box row the swizzle takes (`None`: unlimited).
    pub fn span(self) -> Option<u64> {
        match self {
            TmaSwizzle::None => None,
            TmaSwizzle::B32 => Some(32),
            TmaSwizzle::B64 => Some(64),
            TmaSwizzle::B128 => Some(128),
        }
    }
}

/// How far L2 fetches around each access (`CU_TENSOR_MAP_L2_PROMOTION_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TmaL2Promotion {
    #[serde(rename = "none")]
    None,
    #[serde(rename = "64B")]
    B64,
    #[serde(rename = "128B")]
    B128,
    #[serde(rename = "256B")]
    B256,
}

/// What a box element outside the tensor reads as (`CU_TENSOR_MAP_FLOAT_OOB_FILL_*`): zero, or, for 16-, 32- and
/// 64-bit float tensors, a NaN that makes the tensor cores' FMA skip the element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TmaOobFill {
    Zero,
    Nan,
}

/// The bytes of one tensor-map PTX parameter (`.param .align 64 .b8 NAME[128]`).
pub const TENSOR_MAP_BYTES: u32 = 128;
/// The alignment of a tensor-map PTX parameter.
pub const TENSOR_MAP_ALIGN: u32 = 64;
/// The most dimensions a tensor map has.
pub const TENSOR_MAP_MAX_RANK: usize = 5;
/// The largest box extent per dimension, the target's.
pub use cutec_target::TMA_MAX_BOX;
/// TMA's unit of global addresses, strides and inner box rows, in bytes.
pub const TMA_ALIGN: u32 = 16;
