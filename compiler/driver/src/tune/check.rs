//! Whether a configuration computes what the reference does: element by element, `|got - want| <= atol + rtol *
//! |want|`, as numpy's `isclose` and torch's `assert_close` test.
//!
//! Another tiling sums a dot product in another order, so float outputs differ in their last bits; the default
//! tolerances are for that (a few units in the last place of the output's type, with room for the f32
//! accumulator's rounding over long sums), not for another algorithm. A NaN matches only a NaN: outputs are
//! poisoned with NaN before each checked launch, so an element a configuration does not write is a NaN where the
//! reference has a number. Integers and booleans must be equal.

use cutec_manifest::DType;
use cutec_runtime::floats::{bf16_to_f32, e4m3_to_f32, e5m2_to_f32, f16_to_f32};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    pub rtol: f64,
    pub atol: f64,
}

/// The default tolerance for outputs of type `dtype`.
pub fn default_tolerance(dtype: DType) -> Tolerance {
    let (rtol, atol) = match dtype {
        // f32's epsilon is 1.2e-7; sums of thousands of products in another order differ by far more.
        DType::F32 | DType::F64 => (1e-4, 1e-4),
        // Units in the last place: f16 has 10 fraction bits, bf16 7, e4m3 3, e5m2 2; two of them.
        DType::F16 => (2e-3, 1e-3),
        DType::Bf16 => (1.6e-2, 1e-2),
        DType::E4m3 => (0.25, 1.0 / 64.0),
        DType::E5m2 => (0.5, 1.0 / 64.0),
        DType::I8 | DType::U8 | DType::I32 | DType::I64 | DType::U32 | DType::Bool => (0.0, 0.0),
    };
    Tolerance { rtol, atol }
}

/// Element `i` of `bytes` (little-endian elements of `dtype`) as an f64; `None` past the end.
fn element(dtype: DType, bytes: &[u8], i: usize) -> Option<f64> {
    let size = dtype.size_bytes() as usize;
    let b = bytes.get(i * size..(i + 1) * size)?;
    let arr = |n: usize| -> [u8; 8] {
        let mut a = [0u8; 8];
        a[..n].copy_from_slice(&b[..n]);
        a
    };
    let [b0, b1, b2, b3, ..] = arr(size.min(8));
    Some(match dtype {
        DType::F32 => f64::from(f32::from_le_bytes([b0, b1, b2, b3])),
        DType::F64 => f64::from_le_bytes(arr(8)),
        DType::F16 => f64::from(f16_to_f32(u16::from_le_bytes([b0, b1]))),
        DType::Bf16 => f64::from(bf16_to_f32(u16::from_le_bytes([b0, b1]))),
        DType::E4m3 => f64::from(e4m3_to_f32(b0)),
        DType::E5m2 => f64::from(e5m2_to_f32(b0)),
        DType::I8 => f64::from(b0 as i8),
        DType::U8 | DType::Bool => f64::from(b0),
        DType::I32 => f64::from(i32::from_le_bytes([b0, b1, b2, b3])),
        DType::U32 => f64::from(u32::from_le_bytes([b0, b1, b2, b3])),
        DType::I64 => i64::from_le_bytes(arr(8)) as f64,
    })
}

/// Where and how much a result differs from the reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Elements outside the tolerance, of `total`.
    pub count: usize,
    pub total: usize,
    /// The element furthest outside (by error over allowed error), its value and the reference's.
    pub index: usize,
    pub got: f64,
    pub want: f64,
}

/// The largest absolute error over all elements (NaN pairs excluded): reported for configurations that pass.
pub fn max_abs_error(dtype: DType, got: &[u8], want: &[u8]) -> f64 {
    let n = got.len().min(want.len()) / dtype.size_bytes().max(1) as usize;
    (0..n)
        .filter_map(|i| Some((element(dtype, got, i)?, element(dtype, want, i)?)))
        .map(|(g, w)| if g.is_nan() && w.is_nan() { 0.0 } else { (g - w).abs() })
        .fold(0.0, f64::max)
}

/// Compares `got` with `want` element by element; `None` when every element is within `tol`.
pub fn compare(dtype: DType, got: &[u8], want: &[u8], tol: Tolerance) -> Option<Mismatch> {
    let size = dtype.size_bytes().max(1) as usize;
    let total = want.len() / size;
    if got.len() != want.len() {
        // Not the same tensor: every element differs (a bug of the caller, reported rather than a panic).
        return Some(Mismatch { count: total, total, index: 0, got: f64::NAN, want: f64::NAN });
    }
    let mut worst: Option<(f64, Mismatch)> = None;
    let mut count = 0;
    for i in 0..total {
        let (Some(g), Some(w)) = (element(dtype, got, i), element(dtype, want, i)) else { continue };
        let allowed = tol.atol + tol.rtol * w.abs();
        let excess = match (g.is_nan(), w.is_nan()) {
            (true, true) => continue,
            (false, false) if (g - w).abs() <= allowed => continue,
            // A NaN against a number, or an infinity against anything else, is as wrong as it gets.
            (false, false) if (g - w).is_finite() => (g - w).abs() / allowed.max(f64::MIN_POSITIVE),
            _ => f64::INFINITY,
        };
        count += 1;
        if worst.as_ref().is_none_or(|(e, _)| excess > *e) {
            worst = Some((excess, Mismatch { count: 0, total, index: i, got: g, want: w }));
        }
    }
    worst.map(|(_, m)| Mismatch { count, ..m })
}

/// The row-major coordinates of flat index `index` in `shape`.
pub fn unravel(mut index: usize, shape: &[usize]) -> Vec<usize> {
    let mut out = vec![0; shape.len()];
    for (o, &e) in out.iter_mut().zip(shape).rev() {
        if e > 0 {
            *o = index % e;
            index /= e;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use cutec_runtime::floats::f32_to_bf16;

    fn bf16(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|&x| f32_to_bf16(x).to_le_bytes()).collect()
    }

    #[test]
    fn last_bits_pass_and_wrong_values_do_not() {
        let tol = default_tolerance(DType::Bf16);
        let want = bf16(&[21.0, -0.5, 0.0, 3.0]);
        // One bf16 ulp at 21 (0.125) is within 1.6% of 21.
        assert_eq!(compare(DType::Bf16, &bf16(&[21.125, -0.5, 0.0, 3.0]), &want, tol), None);
        let m = compare(DType::Bf16, &bf16(&[21.0, -0.5, 1.0, 2.0]), &want, tol).expect("two elements are wrong");
        assert_eq!((m.count, m.total, m.index, m.got, m.want), (2, 4, 2, 1.0, 0.0));
        assert!((max_abs_error(DType::Bf16, &bf16(&[21.0, -0.5, 0.25, 3.0]), &want) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn poison_left_behind_is_a_mismatch() {
        let tol = default_tolerance(DType::F32);
        let want: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|x| x.to_le_bytes()).collect();
        let mut got = want.clone();
        got[4..].copy_from_slice(&[0xff; 4]);
        let m = compare(DType::F32, &got, &want, tol).expect("a NaN where a number belongs");
        assert_eq!((m.count, m.index), (1, 1));
        assert!(m.got.is_nan());
        // NaN in both (an element the reference left poisoned too) is no difference between them.
        assert_eq!(compare(DType::F32, &got, &got, tol), None);
    }

    #[test]
    fn integers_are_exact() {
        let tol = default_tolerance(DType::I32);
        let a: Vec<u8> = [5i32, -7].iter().flat_map(|x| x.to_le_bytes()).collect();
        let b: Vec<u8> = [5i32, -6].iter().flat_map(|x| x.to_le_bytes()).collect();
        assert_eq!(compare(DType::I32, &a, &a, tol), None);
        assert_eq!(compare(DType::I32, &b, &a, tol).map(|m| (m.index, m.got, m.want)), Some((1, -6.0, -7.0)));
    }

    #[test]
    fn flat_indices_become_coordinates() {
        assert_eq!(unravel(0, &[4, 8]), [0, 0]);
        assert_eq!(unravel(13, &[4, 8]), [1, 5]);
        assert_eq!(unravel(31, &[2, 4, 4]), [1, 3, 3]);
    }
}
