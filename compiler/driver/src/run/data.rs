//! The data side of `cutec run`: `.npy` files in and out (the format is `cutec_runtime::npy`'s), host<->device
//! copies with a progress line, and NaN counts.

use super::progress::Progress;
use super::{RunError, io};
use cutec_manifest::DType;
use cutec_runtime::floats::{bf16_to_f32, e4m3_to_f32, e5m2_to_f32, f16_to_f32};
use cutec_runtime::npy::{self, NpyArray, NpyError};
use cutec_runtime::{Context, DeviceTensor};
use std::path::Path;

fn npy_error(path: &Path) -> impl FnOnce(NpyError) -> RunError + '_ {
    move |e| match e {
        NpyError::Io(source) => RunError::Io { path: path.to_owned(), source },
        e => RunError::Npy { path: path.to_owned(), message: e.to_string() },
    }
}

/// Reads a `.npy` file, with a progress line if that takes over a second.
pub(crate) fn read_npy(path: &Path) -> Result<NpyArray, RunError> {
    let file = std::fs::File::open(path).map_err(io(path))?;
    let len = file.metadata().map_err(io(path))?.len();
    let mut progress = Progress::stderr(format!("reading {}", path.display()), len);
    let array = npy::read_npy(file, &mut |n| progress.update(n as u64)).map_err(npy_error(path))?;
    progress.finish();
    Ok(array)
}

/// The elements of an input file as the parameter `name` of type `dtype` takes them.
pub(crate) fn npy_to_elements(path: &Path, name: &str, dtype: DType, array: NpyArray) -> Result<Vec<u8>, RunError> {
    npy::npy_to_elements(dtype, array)
        .map_err(|e| RunError::Npy { path: path.to_owned(), message: format!("input `{name}`: {e}") })
}

/// Writes a tensor's elements as a `.npy` file, with a progress line if that takes over a second.
pub(super) fn write_npy(path: &Path, dtype: DType, shape: &[usize], bytes: &[u8]) -> Result<(), RunError> {
    let file = std::fs::File::create(path).map_err(io(path))?;
    let mut progress = Progress::stderr(format!("writing {}", path.display()), bytes.len() as u64);
    npy::write_npy(file, dtype, shape, bytes, &mut |n| progress.update(n as u64)).map_err(npy_error(path))?;
    progress.finish();
    Ok(())
}

/// A device tensor holding `bytes`, with a progress line if the copy takes over a second.
pub(super) fn upload(
    ctx: &Context,
    name: &str,
    dtype: DType,
    shape: &[usize],
    bytes: &[u8],
) -> Result<DeviceTensor, RunError> {
    let mut progress = Progress::stderr(format!("copying `{name}` to the device"), bytes.len() as u64);
    let t = DeviceTensor::from_bytes_with_progress(ctx, dtype, shape, bytes, &mut |n| progress.update(n as u64))?;
    progress.finish();
    Ok(t)
}

/// A device tensor's elements on the host, with a progress line if the copy takes over a second.
pub(crate) fn download(name: &str, tensor: &DeviceTensor) -> Result<Vec<u8>, RunError> {
    let mut progress = Progress::stderr(format!("copying `{name}` from the device"), tensor.num_bytes() as u64);
    let bytes = tensor.to_bytes_with_progress(&mut |n| progress.update(n as u64))?;
    progress.finish();
    Ok(bytes)
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
