//! The data side of `cutec run`: seeded random tensors, `.npy` files in and out, and NaN counts.

use super::{RunError, io};
use cutec_manifest::DType;
use cutec_runtime::floats::{
    bf16_to_f32, e4m3_to_f32, e5m2_to_f32, f16_to_f32, f32_to_bf16, f32_to_e4m3, f32_to_e5m2, f32_to_f16,
};
use npyz::{Endianness, TypeChar, TypeStr, WriterBuilder};
use std::io::{Read, Seek, Write};
use std::path::Path;

/// SplitMix64: a tiny, well-distributed generator; fixed forever so that seeds reproduce.
pub(super) struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// `count` random elements of `dtype` (little-endian bytes) for parameter number `index`; see the module docs.
pub(super) fn random_elements(dtype: DType, count: usize, seed: u64, index: usize) -> Vec<u8> {
    // Derive the tensor's stream from (seed, index) through one round of the generator, so streams do not overlap
    // in any practical sense.
    let mut rng = SplitMix64(SplitMix64(seed ^ (index as u64).wrapping_mul(0xd1b5_4a32_d192_ed03)).next());
    let mut out = Vec::with_capacity(count * dtype.size_bytes() as usize);
    for _ in 0..count {
        match dtype {
            DType::F32 => out.extend(unit_f32(&mut rng).to_le_bytes()),
            DType::F64 => {
                let u = (rng.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
                out.extend((u * 2.0 - 1.0).to_le_bytes());
            }
            DType::F16 => out.extend(f32_to_f16(unit_f32(&mut rng)).to_le_bytes()),
            DType::Bf16 => out.extend(f32_to_bf16(unit_f32(&mut rng)).to_le_bytes()),
            DType::E4m3 => out.push(f32_to_e4m3(unit_f32(&mut rng))),
            DType::E5m2 => out.push(f32_to_e5m2(unit_f32(&mut rng))),
            DType::I8 => out.push(small_signed(&mut rng) as u8),
            DType::U8 => out.push((rng.next() >> 58) as u8),
            DType::I32 => out.extend((small_signed(&mut rng) as i32).to_le_bytes()),
            DType::I64 => out.extend((small_signed(&mut rng) as i64).to_le_bytes()),
            DType::U32 => out.extend(((rng.next() >> 58) as u32).to_le_bytes()),
            DType::Bool => out.push((rng.next() >> 63) as u8),
        }
    }
    out
}

/// Uniform in [-1, 1): 24 random bits, exactly representable.
pub(super) fn unit_f32(rng: &mut SplitMix64) -> f32 {
    (rng.next() >> 40) as f32 * (1.0 / (1u64 << 24) as f32) * 2.0 - 1.0
}

/// Uniform in [-64, 64).
pub(super) fn small_signed(rng: &mut SplitMix64) -> i8 {
    (rng.next() >> 57) as i8 - 64
}

/// A `.npy` array as read: shape, numpy type and the element bytes converted to little-endian.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct NpyArray {
    pub(super) shape: Vec<usize>,
    pub(super) type_char: TypeChar,
    pub(super) size: usize,
    pub(super) bytes: Vec<u8>,
}

impl NpyArray {
    pub(super) fn descr(&self) -> String {
        let kind = match self.type_char {
            TypeChar::Bool => 'b',
            TypeChar::Int => 'i',
            TypeChar::Uint => 'u',
            TypeChar::Float => 'f',
            TypeChar::RawData => 'V',
            _ => '?',
        };
        format!("{}{kind}{}", if self.size == 1 { '|' } else { '<' }, self.size)
    }
}

pub(super) fn read_npy(path: &Path) -> Result<NpyArray, RunError> {
    let npy_err = |message: String| RunError::Npy { path: path.to_owned(), message };
    let mut file = std::io::BufReader::new(std::fs::File::open(path).map_err(io(path))?);
    let header = npyz::NpyHeader::from_reader(&mut file).map_err(|e| npy_err(format!("not a .npy file: {e}")))?;
    if header.order() != npyz::Order::C {
        return Err(npy_err("Fortran-order array; save it in C order (numpy.ascontiguousarray)".into()));
    }
    let npyz::DType::Plain(ts) = header.dtype() else {
        return Err(npy_err(format!("structured dtype {} is not supported", header.dtype().descr())));
    };
    let size = usize::try_from(ts.size_field()).map_err(|_| npy_err("absurd element size".into()))?;
    let shape: Vec<usize> = header.shape().iter().map(|&e| e as usize).collect();
    let count = shape.iter().try_fold(1usize, |a, &e| a.checked_mul(e));
    let expected = count.and_then(|c| c.checked_mul(size)).ok_or_else(|| npy_err("the shape overflows".into()))?;
    // The header is checked against the file's length before anything is allocated: a 128-byte file whose header
    // claims a terabyte is an error, not an allocation failure.
    let total = file.get_ref().metadata().map_err(io(path))?.len();
    let at = file.stream_position().map_err(io(path))?;
    let present = total.saturating_sub(at);
    if present != expected as u64 {
        return Err(npy_err(format!("{present} data bytes for shape {shape:?} of {ts}; expected {expected}")));
    }
    let mut bytes = Vec::with_capacity(expected);
    file.read_to_end(&mut bytes).map_err(io(path))?;
    if bytes.len() != expected {
        return Err(npy_err(format!("{} data bytes for shape {shape:?} of {ts}; expected {expected}", bytes.len())));
    }
    if ts.endianness() == Endianness::Big && size > 1 {
        bytes.chunks_exact_mut(size).for_each(<[u8]>::reverse);
    }
    Ok(NpyArray { shape, type_char: ts.type_char(), size, bytes })
}

/// Converts a `.npy` array's elements to `dtype` (little-endian bytes). Accepted: the numpy type of the same name
/// (`<f4` for `f32`, `<f2` for `f16`, `|b1` for `bool`, ...); for `f16`, `bf16`, `e4m3`, `e5m2` also `<f4`
/// (rounded to nearest-even); for `bf16` also `<u2` or `|V2` raw bits, for `e4m3`/`e5m2` `|u1` or `|V1` raw bits.
pub(super) fn npy_to_elements(dtype: DType, a: &NpyArray) -> Result<Vec<u8>, String> {
    use TypeChar::{Bool, Float, Int, RawData, Uint};
    let from_f32 = |convert: &dyn Fn(f32) -> Vec<u8>| -> Vec<u8> {
        a.bytes.chunks_exact(4).flat_map(|c| convert(f32::from_le_bytes([c[0], c[1], c[2], c[3]]))).collect()
    };
    let same = match dtype {
        DType::F32 => (a.type_char, a.size) == (Float, 4),
        DType::F64 => (a.type_char, a.size) == (Float, 8),
        DType::F16 => (a.type_char, a.size) == (Float, 2),
        DType::Bf16 => matches!((a.type_char, a.size), (Uint | RawData, 2)),
        DType::E4m3 | DType::E5m2 => matches!((a.type_char, a.size), (Uint | RawData, 1)),
        DType::I8 => (a.type_char, a.size) == (Int, 1),
        DType::U8 => (a.type_char, a.size) == (Uint, 1),
        DType::I32 => (a.type_char, a.size) == (Int, 4),
        DType::I64 => (a.type_char, a.size) == (Int, 8),
        DType::U32 => (a.type_char, a.size) == (Uint, 4),
        DType::Bool => (a.type_char, a.size) == (Bool, 1),
    };
    if same {
        return Ok(a.bytes.clone());
    }
    if (a.type_char, a.size) == (Float, 4) {
        match dtype {
            DType::F16 => return Ok(from_f32(&|x| f32_to_f16(x).to_le_bytes().to_vec())),
            DType::Bf16 => return Ok(from_f32(&|x| f32_to_bf16(x).to_le_bytes().to_vec())),
            DType::E4m3 => return Ok(from_f32(&|x| vec![f32_to_e4m3(x)])),
            DType::E5m2 => return Ok(from_f32(&|x| vec![f32_to_e5m2(x)])),
            _ => {}
        }
    }
    let expected = match dtype {
        DType::F32 => "<f4",
        DType::F64 => "<f8",
        DType::F16 => "<f2 or <f4",
        DType::Bf16 => "<f4 or <u2 (raw bits)",
        DType::E4m3 | DType::E5m2 => "<f4 or |u1 (raw bits)",
        DType::I8 => "|i1",
        DType::U8 => "|u1",
        DType::I32 => "<i4",
        DType::I64 => "<i8",
        DType::U32 => "<u4",
        DType::Bool => "|b1",
    };
    Err(format!("numpy dtype {} cannot be used for a {dtype} parameter (expected {expected})", a.descr()))
}

/// The `.npy` type and little-endian bytes an output of `dtype` is written as (see the module docs).
pub(super) fn elements_to_npy(dtype: DType, bytes: &[u8]) -> (&'static str, Vec<u8>) {
    let widen = |f: &dyn Fn(&[u8]) -> f32, size: usize| -> Vec<u8> {
        bytes.chunks_exact(size).flat_map(|c| f(c).to_le_bytes()).collect()
    };
    match dtype {
        DType::F32 => ("<f4", bytes.to_vec()),
        DType::F64 => ("<f8", bytes.to_vec()),
        DType::F16 => ("<f2", bytes.to_vec()),
        DType::Bf16 => ("<f4", widen(&|c| bf16_to_f32(u16::from_le_bytes([c[0], c[1]])), 2)),
        DType::E4m3 => ("<f4", widen(&|c| e4m3_to_f32(c[0]), 1)),
        DType::E5m2 => ("<f4", widen(&|c| e5m2_to_f32(c[0]), 1)),
        DType::I8 => ("|i1", bytes.to_vec()),
        DType::U8 => ("|u1", bytes.to_vec()),
        DType::I32 => ("<i4", bytes.to_vec()),
        DType::I64 => ("<i8", bytes.to_vec()),
        DType::U32 => ("<u4", bytes.to_vec()),
        DType::Bool => ("|b1", bytes.to_vec()),
    }
}

pub(super) fn write_npy(path: &Path, dtype: DType, shape: &[usize], bytes: &[u8]) -> Result<(), RunError> {
    let (descr, data) = elements_to_npy(dtype, bytes);
    let type_str: TypeStr = descr.parse().map_err(|e| RunError::Npy {
        path: path.to_owned(),
        message: format!("internal: bad numpy type {descr}: {e}"),
    })?;
    let shape: Vec<u64> = shape.iter().map(|&e| e as u64).collect();
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).map_err(io(path))?);
    npyz::WriteOptions::new_header_only()
        .dtype(npyz::DType::Plain(type_str))
        .shape(&shape)
        .writer(&mut file)
        .write_header_only()
        .map_err(io(path))?;
    file.write_all(&data).map_err(io(path))?;
    file.flush().map_err(io(path))
}

/// How many elements of a floating-point tensor are NaN (0 for other types).
pub(super) fn count_nan(dtype: DType, bytes: &[u8]) -> usize {
    match dtype {
        DType::F32 => bytes.chunks_exact(4).filter(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]).is_nan()).count(),
        DType::F64 => bytes
            .chunks_exact(8)
            .filter(|c| <[u8; 8]>::try_from(*c).is_ok_and(|b| f64::from_le_bytes(b).is_nan()))
            .count(),
        DType::F16 => bytes.chunks_exact(2).filter(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])).is_nan()).count(),
        DType::Bf16 => bytes.chunks_exact(2).filter(|c| bf16_to_f32(u16::from_le_bytes([c[0], c[1]])).is_nan()).count(),
        DType::E4m3 => bytes.iter().filter(|&&b| e4m3_to_f32(b).is_nan()).count(),
        DType::E5m2 => bytes.iter().filter(|&&b| e5m2_to_f32(b).is_nan()).count(),
        _ => 0,
    }
}
