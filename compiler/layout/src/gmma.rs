//! Hopper's `wgmma` operands: the 64-bit shared-memory matrix descriptors derived from a layout (never written
//! by hand), a model of the addresses the hardware reads through a descriptor, and the accumulator's register
//! layout.
//!
//! Sources, cited at each formula:
//! * **PTX** = PTX ISA 9.x, §9.7.15.5.1.2 "Shared Memory Matrix Layout" (Table 38, the swizzle atoms),
//!   §9.7.15.5.1.2.1 "Major-ness supported by Strides" (LBO, SBO), §9.7.15.5.1.2.1.3 "Canonical Layouts" (CuTe
//!   notation), §9.7.15.5.1.2.2 "Matrix Descriptor Format" (bits, base offset) and §9.7.15.5.1.1.1 (Figure 149,
//!   the accumulator fragment of `m64nNk16`).
//! * **C2** = CUTLASS `include/cute/arch/mma_sm90_desc.hpp` (`GmmaDescriptor`'s bit fields, `LayoutType`).
//! * **C3** = CUTLASS `include/cute/atom/mma_traits_sm90_gmma.hpp` (`make_gmma_desc`, the `Layout_{K,MN}_*_Atom`s,
//!   `CLayout_64xN`, `DescriptorIterator`).
//!
//! Units. Layouts map coordinates to *element* offsets, as everywhere in this crate; the hardware speaks bytes.
//! `T = 16 / elem_bytes` elements fill one 16-byte chunk (PTX's "128-bit normalized element"); a swizzled row
//! holds `W = 2^b` chunks (`b` = 1, 2, 3 for the 32-, 64-, 128-byte modes). The swizzle the hardware applies is
//! `Swizzle<b,4,3>` on byte addresses (PTX canonical layouts; C3 `layout_type` asserts `M == 4, S == 3`), which is
//! `Swizzle<b, 4 - log2(elem_bytes), 3>` on element offsets.
//!
//! [`operand_descriptor`] never guesses: it reads LBO and SBO off the layout and then checks, element by element
//! and for every k-step, that [`descriptor_address`] reads exactly what the layout says; anything else is refused
//! with the first element that differs.

use std::fmt;

use crate::error::LayoutError;
use crate::eval::LayoutOp;
use crate::int_tuple::IntTuple;
use crate::layout::Layout;
use crate::swizzle::{ComposedLayout, Swizzle};

/// The bound (exclusive) of a descriptor's LBO and SBO and of a start offset: 14 bits of 16-byte units.
pub const DESCRIPTOR_FIELD_LIMIT: i64 = 1 << 18;

/// Which mode of the operand is contiguous in 16-byte chunks. PTX: `imm-trans` 0 is K-major, 1 is M- (A) or
/// N-major (B); only the `.f16`/`.bf16` forms of `wgmma.mma_async` have the `imm-trans` operands, so 8-bit and
/// 32-bit operands are K-major.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Major {
    K,
    MN,
}

impl fmt::Display for Major {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Major::K => "K-major",
            Major::MN => "MN-major",
        })
    }
}

/// The descriptor's swizzling mode (PTX "Matrix Descriptor Format", bits 62–63; C2 `GMMA::LayoutType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GmmaSwizzle {
    /// No swizzle: PTX "no-swizzling or interleaved", CUTLASS `INTERLEAVE`.
    None,
    B32,
    B64,
    B128,
}

impl GmmaSwizzle {
    /// The mode whose byte swizzle is `Swizzle<bits,4,3>`.
    pub fn from_bits(bits: i64) -> Option<GmmaSwizzle> {
        match bits {
            0 => Some(GmmaSwizzle::None),
            1 => Some(GmmaSwizzle::B32),
            2 => Some(GmmaSwizzle::B64),
            3 => Some(GmmaSwizzle::B128),
            _ => None,
        }
    }

    /// `b`: the number of chunk-index bits the swizzle xors (0 for none).
    pub fn bits(self) -> i64 {
        match self {
            GmmaSwizzle::None => 0,
            GmmaSwizzle::B32 => 1,
            GmmaSwizzle::B64 => 2,
            GmmaSwizzle::B128 => 3,
        }
    }

    /// `W = 2^b`: 16-byte chunks per swizzled row (PTX Table 38: atoms of 8 rows of `W` 128-bit elements).
    pub fn chunks(self) -> i64 {
        1 << self.bits()
    }

    /// The bytes of one row of the swizzle atom: 16, 32, 64 or 128.
    pub fn row_bytes(self) -> i64 {
        16 * self.chunks()
    }

    /// The 2-bit layout type of the descriptor: 0 none, 1 128B, 2 64B, 3 32B (PTX, C2).
    pub fn layout_type(self) -> u64 {
        match self {
            GmmaSwizzle::None => 0,
            GmmaSwizzle::B128 => 1,
            GmmaSwizzle::B64 => 2,
            GmmaSwizzle::B32 => 3,
        }
    }

    /// The inverse of [`GmmaSwizzle::layout_type`] on its two bits.
    pub fn from_layout_type(t: u64) -> GmmaSwizzle {
        match t & 3 {
            1 => GmmaSwizzle::B128,
            2 => GmmaSwizzle::B64,
            3 => GmmaSwizzle::B32,
            _ => GmmaSwizzle::None,
        }
    }

    /// The alignment of a tile base in bytes: the swizzle's repeating pattern (8 rows) starts on a 1024-, 512- or
    /// 256-byte boundary (PTX "Matrix Descriptor Format": base offset 0 means the pattern starts there); an
    /// unswizzled operand needs the 16 bytes every start address needs (PTX §9.7.15.5.1).
    pub fn alignment(self) -> i64 {
        match self {
            GmmaSwizzle::None => 16,
            _ => 8 * self.row_bytes(),
        }
    }

    /// The hardware's swizzle of a byte offset: bits `[4, 4+b)` ^= bits `[7, 7+b)` (`Swizzle<b,4,3>`).
    pub fn apply(self, byte_offset: i64) -> i64 {
        let mask = self.chunks() - 1;
        byte_offset ^ (((byte_offset >> 7) & mask) << 4)
    }

    /// The same swizzle on offsets of `elem_bytes`-byte elements: `Swizzle<b, 4 - log2(elem_bytes), 3>`.
    /// @pre `elem_bytes` is 1, 2 or 4.
    pub fn element_swizzle(self, elem_bytes: i64) -> Result<Swizzle, GmmaError> {
        let log = elem_log2(elem_bytes)?;
        Swizzle::new(self.bits(), 4 - log, 3).map_err(GmmaError::Layout)
    }
}

impl fmt::Display for GmmaSwizzle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GmmaSwizzle::None => "unswizzled",
            GmmaSwizzle::B32 => "32-byte-swizzled",
            GmmaSwizzle::B64 => "64-byte-swizzled",
            GmmaSwizzle::B128 => "128-byte-swizzled",
        })
    }
}

/// The fields of a `wgmma` matrix descriptor, in bytes (PTX "Matrix Descriptor Format"; C2 `GmmaDescriptor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SmemDescriptor {
    /// The matrix start, relative to the tile base (the base is aligned to [`GmmaSwizzle::alignment`]).
    pub start_offset_bytes: i64,
    /// Leading dimension byte offset (PTX §9.7.15.5.1.2.1.1).
    pub lbo_bytes: i64,
    /// Stride dimension byte offset (PTX §9.7.15.5.1.2.1.2).
    pub sbo_bytes: i64,
    pub swizzle: GmmaSwizzle,
    /// Bits 49–51: `(pattern start address >> 7) & 7` when the swizzle pattern does not start on its boundary.
    /// Always 0 here, as in CUTLASS (C3 `make_gmma_desc`): the tile base is aligned instead.
    pub base_offset: u8,
}

/// PTX's `matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4`.
fn encode_field(x: i64) -> u64 {
    ((x as u64) & 0x3FFFF) >> 4
}

impl SmemDescriptor {
    /// The 64-bit descriptor for a tile whose base is at shared-memory byte address `smem_base_address`: bits
    /// 0–13 `(base + start) >> 4`, 16–29 `LBO >> 4`, 32–45 `SBO >> 4`, 49–51 base offset, 62–63 layout type.
    /// The address field is the low field, so `encode(b) == encode(0) + (b >> 4)` while the 14 bits do not carry
    /// (addresses below 256 KiB): code may encode the constant part once and add the base at run time, as
    /// CUTLASS's `DescriptorIterator` does.
    /// @pre `smem_base_address` is aligned to `self.swizzle.alignment()` (the model's addresses assume it).
    pub fn encode(&self, smem_base_address: u32) -> u64 {
        let address = i64::from(smem_base_address).wrapping_add(self.start_offset_bytes);
        encode_field(address)
            | encode_field(self.lbo_bytes) << 16
            | encode_field(self.sbo_bytes) << 32
            | u64::from(self.base_offset & 7) << 49
            | self.swizzle.layout_type() << 62
    }

    /// The fields of an encoded descriptor; `start_offset_bytes` is the whole start address.
    pub fn decode(desc: u64) -> SmemDescriptor {
        let field = |shift: u32| ((desc >> shift) & 0x3FFF) as i64 * 16;
        SmemDescriptor {
            start_offset_bytes: field(0),
            lbo_bytes: field(16),
            sbo_bytes: field(32),
            swizzle: GmmaSwizzle::from_layout_type(desc >> 62),
            base_offset: ((desc >> 49) & 7) as u8,
        }
    }

    /// The same descriptor starting `start_offset_bytes` into the tile.
    pub fn with_start(&self, start_offset_bytes: i64) -> SmemDescriptor {
        SmemDescriptor { start_offset_bytes, ..*self }
    }
}

/// The descriptors of one operand tile: one per `(MN block, k-step)` pair, all alike but for the start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperandDescriptors {
    pub major: Major,
    /// The descriptor of MN block 0, k-step 0.
    pub desc: SmemDescriptor,
    /// `starts[i][j]`: the start offset in bytes of MN block `i` (rows `i*mn ..`) and k-step `j` (columns
    /// `j*k ..`): the tile's unswizzled offset of `(i*mn, j*k)` times the element size (C3 advances the
    /// descriptor by the `uint128_t` offset of the unswizzled layout the same way).
    pub starts: Vec<Vec<i64>>,
    /// The alignment in bytes the tile's base needs ([`GmmaSwizzle::alignment`]).
    pub alignment: i64,
}

impl OperandDescriptors {
    /// The descriptor of MN block `mn_block`, k-step `k_step`.
    pub fn at(&self, mn_block: usize, k_step: usize) -> Option<SmemDescriptor> {
        let start = *self.starts.get(mn_block)?.get(k_step)?;
        Some(self.desc.with_start(start))
    }

    /// The start offsets of the k-steps of MN block `mn_block`, in bytes.
    pub fn k_step_offsets(&self, mn_block: usize) -> &[i64] {
        self.starts.get(mn_block).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// Why a layout is not a `wgmma` operand. Each message stands alone (the diagnostics layer may add a code).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GmmaError {
    /// `wgmma` reads 1-, 2- or 4-byte elements from shared memory.
    ElementSize { elem_bytes: i64 },
    /// The MMA's operand shape is not one `wgmma` has.
    MmaShape { mn: i64, k: i64, elem_bytes: i64 },
    /// The accumulator of `m64nN` needs N a multiple of 8 from 8 to 256.
    AccumulatorWidth { n: i64 },
    /// No A fragment in registers is `64 x k` (`k` a multiple of 16, at most 256 here).
    ARegisterDepth { k: i64 },
    /// The tile is not rank 2 or not a whole number of MMA operands.
    TileShape { tile: String, what: String },
    /// A shape, stride or offset is only known at run time.
    Dynamic { tile: String },
    /// The swizzle is none of the three the hardware applies (in element units).
    Swizzle { swizzle: String, elem_bytes: i64 },
    /// Neither mode of the tile is contiguous.
    NoContiguousMode { tile: String },
    /// An MN-major operand of elements that are not 16 bits wide (no `imm-trans` in their `wgmma` forms).
    TransposeNeeds16Bit { elem_bytes: i64 },
    /// A descriptor field is negative, not a multiple of 16 bytes, or beyond its 14 bits.
    Field { field: &'static str, bytes: i64 },
    /// The first element whose place in the layout is not where the descriptor makes the hardware read it.
    Mismatch { mn: i64, k: i64, layout_byte: i64, descriptor_byte: i64, swizzle: GmmaSwizzle, major: Major },
    /// An error of the layout algebra while evaluating the tile.
    Layout(LayoutError),
}

impl fmt::Display for GmmaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GmmaError::ElementSize { elem_bytes } => {
                write!(f, "wgmma reads elements of 1, 2 or 4 bytes from shared memory, not {elem_bytes}")
            }
            GmmaError::MmaShape { mn, k, elem_bytes } => write!(
                f,
                "no wgmma operand is {mn}x{k} with {elem_bytes}-byte elements: M or N is a multiple of 8 up to \
                 256 and K is 32 bytes (16 elements of 16 bits, 32 of 8 bits, 8 of 32 bits)"
            ),
            GmmaError::AccumulatorWidth { n } => {
                write!(f, "no wgmma accumulator is 64x{n}: N is a multiple of 8 from 8 to 256")
            }
            GmmaError::ARegisterDepth { k } => {
                write!(f, "no wgmma A fragment in registers is 64x{k}: K is a multiple of 16 from 16 to 256")
            }
            GmmaError::TileShape { tile, what } => write!(f, "the operand tile {tile} {what}"),
            GmmaError::Dynamic { tile } => {
                write!(
                    f,
                    "the operand tile {tile} has run-time shapes, strides or offset; a descriptor needs static ones"
                )
            }
            GmmaError::Swizzle { swizzle, elem_bytes } => {
                let m = 4 - elem_bytes.trailing_zeros() as i64;
                write!(
                    f,
                    "the swizzle {swizzle} is not one wgmma reads for {elem_bytes}-byte elements: those are \
                     Sw<1,{m},3> (32-byte), Sw<2,{m},3> (64-byte), Sw<3,{m},3> (128-byte) or none"
                )
            }
            GmmaError::NoContiguousMode { tile } => {
                write!(f, "neither mode of the operand tile {tile} has stride 1, so it is neither K- nor MN-major")
            }
            GmmaError::TransposeNeeds16Bit { elem_bytes } => write!(
                f,
                "the tile is MN-major, but wgmma transposes only 16-bit operands; {elem_bytes}-byte elements must \
                 be K-major in shared memory"
            ),
            GmmaError::Field { field, bytes } => write!(
                f,
                "the {field} would be {bytes} bytes; the descriptor holds multiples of 16 from 0 to {}",
                DESCRIPTOR_FIELD_LIMIT - 16
            ),
            GmmaError::Mismatch { mn, k, layout_byte, descriptor_byte, swizzle, major } => {
                let article = if matches!(swizzle, GmmaSwizzle::None) { "an" } else { "a" };
                write!(
                    f,
                    "element ({mn}, {k}) is at byte {layout_byte} of the tile; {article} {swizzle} {major} \
                     descriptor would read byte {descriptor_byte}"
                )
            }
            GmmaError::Layout(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for GmmaError {}

impl From<LayoutError> for GmmaError {
    fn from(e: LayoutError) -> GmmaError {
        GmmaError::Layout(e)
    }
}

fn elem_log2(elem_bytes: i64) -> Result<i64, GmmaError> {
    match elem_bytes {
        1 => Ok(0),
        2 => Ok(1),
        4 => Ok(2),
        _ => Err(GmmaError::ElementSize { elem_bytes }),
    }
}

/// A plain layout as an operand tile: `Sw<0,4,3> o 0 o L` (CuTe's `INTERLEAVE` atoms carry this identity).
pub fn unswizzled(layout: Layout) -> ComposedLayout {
    ComposedLayout::new(Swizzle::identity(), layout)
}

/// The byte offset, from a tile base aligned to `desc.swizzle.alignment()`, that `wgmma` reads for element
/// `(mn, k)` of its `MN x K` operand (`0 <= k < 32 / elem_bytes`) through `desc`: the PTX canonical layout
/// (§9.7.15.5.1.2.1.3; C3's comment on `make_gmma_desc`) in bytes, added to the start, then swizzled as an
/// address (`Swizzle<b,4,3>`: bits `[4,4+b)` ^= bits `[7,7+b)`). With `c` the 16-byte chunk and `r` the byte
/// within it, along the contiguous mode, and `W` the chunks of a swizzled row:
/// * K-major (`((8,m),(T,2k)):((W*T,SBO),(1,LBO))`, LBO replaced by `T` when swizzled):
///   `(mn % 8) * 16W + (mn / 8) * SBO + c * (swizzled ? 16 : LBO) + r`;
/// * MN-major, no swizzle (`((T,1,m),(8,k)):((1,T,SBO),(T,LBO))`): `r + c * SBO + (k % 8) * 16 + (k / 8) * LBO`;
/// * MN-major, swizzled (`((T,W,m),(8,k)):((1,T,LBO),(W*T,SBO))`):
///   `r + (c % W) * 16 + (c / W) * LBO + (k % 8) * 16W + (k / 8) * SBO`.
///
/// `desc.base_offset` is not modelled (it must be 0: PTX gives only its encoding, not how the hardware uses it).
/// Computed in 128 bits, so no argument makes it overflow.
pub fn descriptor_address(desc: &SmemDescriptor, major: Major, elem_bytes: i64, mn: i64, k: i64) -> i64 {
    let (mn, k, eb) = (i128::from(mn), i128::from(k), i128::from(elem_bytes));
    let (lbo, sbo) = (i128::from(desc.lbo_bytes), i128::from(desc.sbo_bytes));
    let w = i128::from(desc.swizzle.chunks());
    let swizzled = desc.swizzle != GmmaSwizzle::None;
    let linear = match major {
        Major::K => {
            let (c, r) = ((k * eb) / 16, (k * eb) % 16);
            let chunk_stride = if swizzled { 16 } else { lbo };
            (mn % 8) * 16 * w + (mn / 8) * sbo + c * chunk_stride + r
        }
        Major::MN if swizzled => {
            let (c, r) = ((mn * eb) / 16, (mn * eb) % 16);
            r + (c % w) * 16 + (c / w) * lbo + (k % 8) * 16 * w + (k / 8) * sbo
        }
        Major::MN => {
            let (c, r) = ((mn * eb) / 16, (mn * eb) % 16);
            r + c * sbo + (k % 8) * 16 + (k / 8) * lbo
        }
    };
    desc.swizzle.apply((i128::from(desc.start_offset_bytes) + linear) as i64)
}

/// The descriptors `wgmma` needs to read the operand tile `tile`, a static `(MN_tile, K_tile)` layout (possibly
/// swizzled, possibly with an offset, as slicing a stage off a ring leaves it) from `(mn, k)` to element offsets,
/// for MMAs whose operand is `mn x k` (`mn` = 64 for A, N for B; `k` = 32 bytes of elements).
///
/// Post-condition, checked by enumeration: for every MN block `i < MN_tile / mn`, k-step `j < K_tile / k` and
/// `(m, kk)` in `mn x k`, `descriptor_address(at(i, j), major, elem_bytes, m, kk)` equals the tile's offset of
/// `(i*mn + m, j*k + kk)` times `elem_bytes`. The tile base must be aligned to `alignment`.
///
/// Derivation (PTX §9.7.15.5.1.2.1, C3 `make_gmma_desc`), with `L` the unswizzled layout in bytes:
/// * K-major: SBO = `L(8, 0)` (the next 8 rows); LBO = `L(0, T)` (the next 16-byte chunk along K) without
///   swizzle, else unused and written as 16 (CUTLASS's 1, "assumed 1" in PTX).
/// * MN-major, no swizzle: SBO = `L(T, 0)` (the next chunk along MN), LBO = `L(0, 8)` (the next 8 K rows).
/// * MN-major, swizzled: LBO = `L(T*W, 0)` (the next atom along MN), SBO = `L(0, 8)`.
/// * A field the MMA's operand never uses (a single 8-row group, a single atom) gets a dense placeholder:
///   `8 * row_bytes` for the K-major SBO and `row_bytes` for the swizzled MN-major LBO (what CuTe's complement
///   gives in `make_gmma_desc`), 128 (one core matrix) for the unswizzled MN-major SBO.
pub fn operand_descriptor(
    tile: &ComposedLayout,
    elem_bytes: i64,
    mn: i64,
    k: i64,
) -> Result<OperandDescriptors, GmmaError> {
    elem_log2(elem_bytes)?;
    if k.checked_mul(elem_bytes) != Some(32) || mn % 8 != 0 || !(8..=256).contains(&mn) {
        return Err(GmmaError::MmaShape { mn, k, elem_bytes });
    }
    let shown = || tile.to_string();
    let layout = &tile.layout;
    let offset = match tile.offset.static_value() {
        Some(o) if layout.is_static() => o,
        _ => return Err(GmmaError::Dynamic { tile: shown() }),
    };
    if layout.rank() != 2 {
        return Err(GmmaError::TileShape { tile: shown(), what: "is not a rank-2 (MN, K) layout".into() });
    }
    let mode_size = |i: usize| -> Result<i64, GmmaError> { Ok(layout.mode(i)?.size()?.need(LayoutOp::Size)?) };
    let (tile_mn, tile_k) = (mode_size(0)?, mode_size(1)?);
    if tile_mn % mn != 0 || tile_k % k != 0 {
        return Err(GmmaError::TileShape {
            tile: shown(),
            what: format!("is {tile_mn}x{tile_k}, not a whole number of {mn}x{k} operands"),
        });
    }
    let swizzle = classify_swizzle(&tile.swizzle, elem_bytes)?;
    let offsets = layout.indices()?;
    // Unswizzled element offset of (m, kk), the offset of the composed layout included.
    let at = |m: i64, kk: i64| offset.wrapping_add(offsets[(m + tile_mn * kk) as usize]);
    let step = |m: i64, kk: i64| at(m, kk).wrapping_sub(at(0, 0));
    let major = if step(0, 1) == 1 {
        Major::K
    } else if step(1, 0) == 1 {
        Major::MN
    } else {
        return Err(GmmaError::NoContiguousMode { tile: shown() });
    };
    if major == Major::MN && elem_bytes != 2 {
        return Err(GmmaError::TransposeNeeds16Bit { elem_bytes });
    }
    let t = 16 / elem_bytes;
    let w = swizzle.chunks();
    let bytes_to = |m: i64, kk: i64| step(m, kk).wrapping_mul(elem_bytes);
    let (lbo, sbo) = match (major, swizzle) {
        (Major::K, _) => {
            let lbo = if swizzle == GmmaSwizzle::None { bytes_to(0, t) } else { 16 };
            (lbo, if mn > 8 { bytes_to(8, 0) } else { 8 * swizzle.row_bytes() })
        }
        (Major::MN, GmmaSwizzle::None) => (bytes_to(0, 8), if mn > t { bytes_to(t, 0) } else { 128 }),
        (Major::MN, _) => (if mn > t * w { bytes_to(t * w, 0) } else { swizzle.row_bytes() }, bytes_to(0, 8)),
    };
    check_field("leading dimension byte offset", lbo)?;
    check_field("stride dimension byte offset", sbo)?;
    let mut starts = Vec::new();
    for i in 0..tile_mn / mn {
        let mut row = Vec::new();
        for j in 0..tile_k / k {
            let start = at(i * mn, j * k).wrapping_mul(elem_bytes);
            check_field("start offset", start)?;
            row.push(start);
        }
        starts.push(row);
    }
    let first = at(0, 0).wrapping_mul(elem_bytes); // starts[0][0]
    let desc = SmemDescriptor { start_offset_bytes: first, lbo_bytes: lbo, sbo_bytes: sbo, swizzle, base_offset: 0 };
    let result = OperandDescriptors { major, desc, starts, alignment: swizzle.alignment() };
    for (i, row) in result.starts.iter().enumerate() {
        for (j, &start) in row.iter().enumerate() {
            let d = desc.with_start(start);
            for kk in 0..k {
                for m in 0..mn {
                    let (tm, tk) = (i as i64 * mn + m, j as i64 * k + kk);
                    let layout_byte = tile.swizzle.apply(at(tm, tk)).wrapping_mul(elem_bytes);
                    let descriptor_byte = descriptor_address(&d, major, elem_bytes, m, kk);
                    if layout_byte != descriptor_byte {
                        return Err(GmmaError::Mismatch {
                            mn: tm,
                            k: tk,
                            layout_byte,
                            descriptor_byte,
                            swizzle,
                            major,
                        });
                    }
                }
            }
        }
    }
    Ok(result)
}

/// The descriptor's swizzle mode for the tile's element swizzle: identity, or `Swizzle<b, 4 - log2(elem_bytes), 3>`
/// for `b` in 1..=3.
fn classify_swizzle(sw: &Swizzle, elem_bytes: i64) -> Result<GmmaSwizzle, GmmaError> {
    if sw.bits() == 0 {
        return Ok(GmmaSwizzle::None);
    }
    let mode = GmmaSwizzle::from_bits(sw.bits());
    match mode {
        Some(m) if m.element_swizzle(elem_bytes)? == *sw => Ok(m),
        _ => Err(GmmaError::Swizzle { swizzle: sw.to_string(), elem_bytes }),
    }
}

fn check_field(field: &'static str, bytes: i64) -> Result<(), GmmaError> {
    if bytes < 0 || bytes % 16 != 0 || bytes >= DESCRIPTOR_FIELD_LIMIT {
        return Err(GmmaError::Field { field, bytes });
    }
    Ok(())
}

/// CuTe's `CLayout_64xN` (C3): `((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512))`, from (thread of the warpgroup,
/// accumulator register) to `m + 64*n` in the column-major 64xN tile; for N = 8 the value mode is `(2,2):(64,8)`
/// as in CUTLASS. Thread `t = t0 + 4*t1 + 32*t2` (lane % 4, lane / 4, warp), register `v = v0 + 2*v1 + 4*v2`.
pub fn wgmma_accumulator_layout(n: i64) -> Result<Layout, GmmaError> {
    if n % 8 != 0 || !(8..=256).contains(&n) {
        return Err(GmmaError::AccumulatorWidth { n });
    }
    let (values, value_strides) = if n == 8 {
        (IntTuple::ints(&[2, 2]), IntTuple::ints(&[64, 8]))
    } else {
        (IntTuple::ints(&[2, 2, n / 8]), IntTuple::ints(&[64, 8, 512]))
    };
    let shape = IntTuple::Tuple(vec![IntTuple::ints(&[4, 8, 4]), values]);
    let stride = IntTuple::Tuple(vec![IntTuple::ints(&[128, 1, 16]), value_strides]);
    Ok(Layout::new(shape, stride)?)
}

/// The A operand of a wgmma with A in registers (the "RS" form, `f16`/`bf16`), for a `64 x K` tile: CuTe's
/// `ALayout_64x16` (C3: it *is* `CLayout_64x16`) repeated along K, one k16 step after another, from (thread of
/// the warpgroup, value) to `m + 64*k` in the column-major 64xK tile. Each k-step is 8 consecutive values of the
/// thread (4 registers of 32 bits, two values each, the lower one in the low half), which is what the
/// instruction's `{a0, a1, a2, a3}` take (PTX §9.7.15.5.1.1.1, the A fragment of `m64nNk16`). It is the
/// accumulator's layout with N = K: a 64xN accumulator converted to `bf16` is the A operand of the next MMA
/// (FlashAttention's P @ V).
pub fn wgmma_a_register_layout(k: i64) -> Result<Layout, GmmaError> {
    if k % 16 != 0 || !(16..=256).contains(&k) {
        return Err(GmmaError::ARegisterDepth { k });
    }
    wgmma_accumulator_layout(k)
}
