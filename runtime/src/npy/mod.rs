//! `.npy` files (NumPy's array format): reading, with the header checked against the data before anything is
//! allocated; converting to and from a parameter's element type; writing.
//!
//! Accepted on input: C-order arrays of a plain numpy type, either endianness. A parameter of `dtype` takes the
//! numpy type of the same name (`<f4` for `f32`, `<f2` for `f16`, `|b1` for `bool`, ...); `f16`, `bf16`, `e4m3`
//! and `e5m2` also take `<f4` (rounded to nearest even); `bf16` also `<u2` or `|V2` raw bits, `e4m3`/`e5m2` `|u1`
//! or `|V1`/`<V1` raw bits (torch's `t.view(torch.uint8).numpy()`, and `numpy.save` of an `ml_dtypes` fp8 array). Written: the dtype where numpy has it (`f32 f64 f16 i8 u8 i32 i64 u32 bool`); **`bf16`,
//! `e4m3` and `e5m2` as `float32`** (exact: every value of these formats is an `f32`), so numpy and torch read
//! them without extensions.
//!
//! Nothing here panics on any input: every problem is an [`NpyError`].

use std::io::{Read, Seek, SeekFrom, Write};

use cutec_manifest::DType;

mod header;
#[cfg(test)]
mod tests;

use header::Endian;

use crate::floats::{bf16_to_f32, e4m3_to_f32, e5m2_to_f32, f32_to_bf16, f32_to_e4m3, f32_to_e5m2, f32_to_f16};

/// The most bytes read, converted or written at once (a progress report comes after each piece).
const PIECE: usize = 64 << 20;

/// What is wrong with a `.npy` file or its use.
#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("not a .npy file: {0}")]
    Header(String),
    #[error("Fortran-order array; save it in C order (numpy.ascontiguousarray)")]
    FortranOrder,
    #[error("structured dtype {descr} is not supported")]
    Structured { descr: String },
    #[error("absurd element size {size}")]
    ElementSize { size: u64 },
    #[error("the shape {shape:?} of {descr} overflows")]
    ShapeOverflow { shape: Vec<u64>, descr: String },
    #[error("{present} data bytes for shape {shape:?} of {descr}; expected {expected}")]
    Length { present: u64, expected: u64, shape: Vec<usize>, descr: String },
    #[error("numpy dtype {found} cannot be used for a {dtype} parameter (expected {expected})")]
    DType { found: String, dtype: DType, expected: &'static str },
}

/// The kind of a numpy element type (its type character).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NpyKind {
    Bool,
    Int,
    Uint,
    Float,
    /// `V`: raw bytes.
    Raw,
    /// Complex, strings, dates, objects: never accepted.
    Other,
}

/// A `.npy` array as read: shape, element kind and size, and the element bytes converted to little-endian.
#[derive(Debug, Clone, PartialEq)]
pub struct NpyArray {
    pub shape: Vec<usize>,
    pub kind: NpyKind,
    pub size: usize,
    pub bytes: Vec<u8>,
}

impl NpyArray {
    /// The numpy type string of the elements as held (little-endian): `<f4`, `|u1`.
    pub fn descr(&self) -> String {
        let kind = match self.kind {
            NpyKind::Bool => 'b',
            NpyKind::Int => 'i',
            NpyKind::Uint => 'u',
            NpyKind::Float => 'f',
            NpyKind::Raw => 'V',
            NpyKind::Other => '?',
        };
        format!("{}{kind}{}", if self.size == 1 { '|' } else { '<' }, self.size)
    }
}

/// Reads a `.npy` array from `file` (from its start). The header's shape and type are checked against the length
/// of the data before anything is allocated: a 128-byte file whose header claims a terabyte is an error, not an
/// allocation failure. `progress` is called with the number of data bytes read so far, after each piece.
pub fn read_npy<R: Read + Seek>(file: R, progress: &mut dyn FnMut(usize)) -> Result<NpyArray, NpyError> {
    let mut file = std::io::BufReader::new(file);
    let header = header::read(&mut file)?;
    let descr = header.descr.text.clone();
    if header.fortran_order {
        return Err(NpyError::FortranOrder);
    }
    let size = usize::try_from(header.descr.size).map_err(|_| NpyError::ElementSize { size: header.descr.size })?;
    let overflow = || NpyError::ShapeOverflow { shape: header.shape.clone(), descr: descr.clone() };
    let shape: Vec<usize> =
        header.shape.iter().map(|&e| usize::try_from(e).map_err(|_| overflow())).collect::<Result<_, _>>()?;
    let count = shape.iter().try_fold(1usize, |a, &e| a.checked_mul(e));
    let expected = count.and_then(|c| c.checked_mul(size)).ok_or_else(overflow)?;
    let total = file.seek(SeekFrom::End(0))?;
    file.seek(SeekFrom::Start(header.data_offset))?;
    let present = total.saturating_sub(header.data_offset);
    let length_error = |present: u64| NpyError::Length {
        present,
        expected: expected as u64,
        shape: shape.clone(),
        descr: descr.clone(),
    };
    if present != expected as u64 {
        return Err(length_error(present));
    }
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(expected).map_err(|e| NpyError::Io(std::io::Error::other(e)))?;
    while bytes.len() < expected {
        let want = (expected - bytes.len()).min(PIECE) as u64;
        if (&mut file).take(want).read_to_end(&mut bytes)? == 0 {
            break; // the file shrank while being read
        }
        progress(bytes.len());
    }
    if bytes.len() != expected {
        return Err(length_error(bytes.len() as u64));
    }
    if header.descr.endian == Endian::Big && size > 1 {
        bytes.chunks_exact_mut(size).for_each(<[u8]>::reverse);
    }
    let kind = match header.descr.kind {
        'b' => NpyKind::Bool,
        'i' => NpyKind::Int,
        'u' => NpyKind::Uint,
        'f' => NpyKind::Float,
        'V' => NpyKind::Raw,
        _ => NpyKind::Other,
    };
    Ok(NpyArray { shape, kind, size, bytes })
}

/// The elements of `array` as `dtype` (little-endian bytes); see the module docs for what is accepted. Takes the
/// array so that an array of the parameter's own type is used without a copy.
pub fn npy_to_elements(dtype: DType, array: NpyArray) -> Result<Vec<u8>, NpyError> {
    use NpyKind::{Bool, Float, Int, Raw, Uint};
    let same = match dtype {
        DType::F32 => (array.kind, array.size) == (Float, 4),
        DType::F64 => (array.kind, array.size) == (Float, 8),
        DType::F16 => (array.kind, array.size) == (Float, 2),
        DType::Bf16 => matches!((array.kind, array.size), (Uint | Raw, 2)),
        DType::E4m3 | DType::E5m2 => matches!((array.kind, array.size), (Uint | Raw, 1)),
        DType::I8 => (array.kind, array.size) == (Int, 1),
        DType::U8 => (array.kind, array.size) == (Uint, 1),
        DType::I32 => (array.kind, array.size) == (Int, 4),
        DType::I64 => (array.kind, array.size) == (Int, 8),
        DType::U32 => (array.kind, array.size) == (Uint, 4),
        DType::Bool => (array.kind, array.size) == (Bool, 1),
    };
    if same {
        return Ok(array.bytes);
    }
    let narrow: Option<fn(f32, &mut Vec<u8>)> = match dtype {
        DType::F16 => Some(|x, out| out.extend(f32_to_f16(x).to_le_bytes())),
        DType::Bf16 => Some(|x, out| out.extend(f32_to_bf16(x).to_le_bytes())),
        DType::E4m3 => Some(|x, out| out.push(f32_to_e4m3(x))),
        DType::E5m2 => Some(|x, out| out.push(f32_to_e5m2(x))),
        _ => None,
    };
    if let Some(narrow) = narrow
        && (array.kind, array.size) == (Float, 4)
    {
        let mut out = Vec::with_capacity(array.bytes.len() / 4 * dtype.size_bytes() as usize);
        for c in array.bytes.chunks_exact(4) {
            narrow(f32::from_le_bytes([c[0], c[1], c[2], c[3]]), &mut out);
        }
        return Ok(out);
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
    Err(NpyError::DType { found: array.descr(), dtype, expected })
}

/// The numpy type an output of `dtype` is written as (see the module docs).
pub fn npy_descr_of(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 | DType::Bf16 | DType::E4m3 | DType::E5m2 => "<f4",
        DType::F64 => "<f8",
        DType::F16 => "<f2",
        DType::I8 => "|i1",
        DType::U8 => "|u1",
        DType::I32 => "<i4",
        DType::I64 => "<i8",
        DType::U32 => "<u4",
        DType::Bool => "|b1",
    }
}

/// Writes elements of `dtype` (little-endian `bytes`) as a `.npy` array of `shape`, widening `bf16`, `e4m3` and
/// `e5m2` to `float32` a piece at a time. `progress` is called with the number of element bytes written so far.
pub fn write_npy<W: Write>(
    out: W,
    dtype: DType,
    shape: &[usize],
    bytes: &[u8],
    progress: &mut dyn FnMut(usize),
) -> Result<(), NpyError> {
    let mut out = std::io::BufWriter::new(out);
    out.write_all(&header::format(npy_descr_of(dtype), shape))?;
    let widen: Option<fn(&[u8]) -> f32> = match dtype {
        DType::Bf16 => Some(|c| bf16_to_f32(u16::from_le_bytes([c[0], c[1]]))),
        DType::E4m3 => Some(|c| e4m3_to_f32(c[0])),
        DType::E5m2 => Some(|c| e5m2_to_f32(c[0])),
        _ => None,
    };
    let size = dtype.size_bytes() as usize;
    let mut written = 0;
    // Pieces are whole elements: PIECE is a multiple of every element size.
    for piece in bytes.chunks(PIECE) {
        match widen {
            Some(widen) => {
                let wide: Vec<u8> = piece.chunks_exact(size).flat_map(|c| widen(c).to_le_bytes()).collect();
                out.write_all(&wide)?;
            }
            None => out.write_all(piece)?,
        }
        written += piece.len();
        progress(written);
    }
    out.flush()?;
    Ok(())
}
