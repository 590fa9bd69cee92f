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

/// How one little-endian element of `dtype` (`dtype.size_bytes()` bytes) reads as an f64.
fn decoder(dtype: DType) -> fn(&[u8]) -> f64 {
    fn bytes<const N: usize>(b: &[u8]) -> [u8; N] {
        let mut a = [0u8; N];
        a.copy_from_slice(&b[..N]);
        a
    }
    match dtype {
        DType::F32 => |b| f64::from(f32::from_le_bytes(bytes(b))),
        DType::F64 => |b| f64::from_le_bytes(bytes(b)),
        DType::F16 => |b| f64::from(f16_to_f32(u16::from_le_bytes(bytes(b)))),
        DType::Bf16 => |b| f64::from(bf16_to_f32(u16::from_le_bytes(bytes(b)))),
        DType::E4m3 => |b| f64::from(e4m3_to_f32(b[0])),
        DType::E5m2 => |b| f64::from(e5m2_to_f32(b[0])),
        DType::I8 => |b| f64::from(b[0] as i8),
        DType::U8 | DType::Bool => |b| f64::from(b[0]),
        DType::I32 => |b| f64::from(i32::from_le_bytes(bytes(b))),
        DType::U32 => |b| f64::from(u32::from_le_bytes(bytes(b))),
        DType::I64 => |b| i64::from_le_bytes(bytes(b)) as f64,
    }
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

/// A result against the reference: the elements outside the tolerance, if any, and the largest absolute error
/// over all elements (NaN pairs excluded; reported for configurations that pass).
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub mismatch: Option<Mismatch>,
    pub max_abs_error: f64,
}

/// What one stretch of elements gives: the mismatches counted, the worst one (its excess over the allowed error,
/// its index, the two values) and the largest absolute error.
struct Part {
    count: usize,
    worst: Option<(f64, usize, f64, f64)>,
    max_abs: f64,
}

/// The worse of two mismatches: the larger excess, the lower index on a tie (what one pass in order finds first,
/// however the elements were split).
fn worse(a: Option<(f64, usize, f64, f64)>, b: Option<(f64, usize, f64, f64)>) -> Option<(f64, usize, f64, f64)> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.0 > x.0 || (y.0 == x.0 && y.1 < x.1) { y } else { x }),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Elements `first..first + got.len() / size` (`got` and `want` being that stretch's bytes).
fn compare_part(decode: fn(&[u8]) -> f64, size: usize, got: &[u8], want: &[u8], first: usize, tol: Tolerance) -> Part {
    let mut part = Part { count: 0, worst: None, max_abs: 0.0 };
    for (k, (g, w)) in got.chunks_exact(size).zip(want.chunks_exact(size)).enumerate() {
        let (g, w) = (decode(g), decode(w));
        if g.is_nan() && w.is_nan() {
            continue;
        }
        // A NaN against a number is no largest error (f64::max keeps the number); it is a mismatch below.
        part.max_abs = part.max_abs.max((g - w).abs());
        let allowed = tol.atol + tol.rtol * w.abs();
        let excess = match (g.is_nan(), w.is_nan()) {
            (false, false) if (g - w).abs() <= allowed => continue,
            // A NaN against a number, or an infinity against anything else, is as wrong as it gets.
            (false, false) if (g - w).is_finite() => (g - w).abs() / allowed.max(f64::MIN_POSITIVE),
            _ => f64::INFINITY,
        };
        part.count += 1;
        part.worst = worse(part.worst, Some((excess, first + k, g, w)));
    }
    part
}

/// Compares `got` with `want` element by element, in one pass over stretches of them on the machine's cores (an
/// 8192 x 8192 bf16 output is 67 million elements, checked once per configuration and shape).
pub fn compare_all(dtype: DType, got: &[u8], want: &[u8], tol: Tolerance) -> Comparison {
    let size = dtype.size_bytes().max(1) as usize;
    let total = want.len() / size;
    if got.len() != want.len() {
        // Not the same tensor: every element differs (a bug of the caller, reported rather than a panic).
        let mismatch = Mismatch { count: total, total, index: 0, got: f64::NAN, want: f64::NAN };
        return Comparison { mismatch: Some(mismatch), max_abs_error: f64::NAN };
    }
    let decode = decoder(dtype);
    const STRETCH: usize = 1 << 20;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(total.div_ceil(STRETCH)).max(1);
    let per = total.div_ceil(threads).max(1);
    let parts: Vec<Part> = if threads == 1 {
        vec![compare_part(decode, size, got, want, 0, tol)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = got
                .chunks(per * size)
                .zip(want.chunks(per * size))
                .enumerate()
                .map(|(t, (g, w))| {
                    (t * per, g.len() / size, scope.spawn(move || compare_part(decode, size, g, w, t * per, tol)))
                })
                .collect();
            // A stretch's thread does not panic (it indexes nothing past its slices); were it to, every element of
            // the stretch counts as wrong: never a check passed unseen.
            handles
                .into_iter()
                .map(|(first, len, h)| {
                    h.join().unwrap_or(Part {
                        count: len,
                        worst: Some((f64::INFINITY, first, f64::NAN, f64::NAN)),
                        max_abs: f64::NAN,
                    })
                })
                .collect()
        })
    };
    let (count, worst, max_abs) =
        parts.into_iter().fold((0, None, 0.0f64), |(c, w, m), p| (c + p.count, worse(w, p.worst), m.max(p.max_abs)));
    let mismatch = worst.map(|(_, index, got, want)| Mismatch { count, total, index, got, want });
    Comparison { mismatch, max_abs_error: max_abs }
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

    fn compare(dtype: DType, got: &[u8], want: &[u8], tol: Tolerance) -> Option<Mismatch> {
        compare_all(dtype, got, want, tol).mismatch
    }

    fn max_abs_error(dtype: DType, got: &[u8], want: &[u8]) -> f64 {
        compare_all(dtype, got, want, Tolerance { rtol: 0.0, atol: 0.0 }).max_abs_error
    }

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

    /// Split over threads or not, the same count, the same worst element (the first of equals) and the same
    /// largest error, however many cores split the 3 million elements (stretches of at least 2^20).
    #[test]
    fn stretches_agree_with_one_pass() {
        let n = 3 * (1 << 20) + 17;
        let want: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5 - 100.0).collect();
        let mut got = want.clone();
        // Equal excess at two places in different stretches: the first one is the worst; a NaN pair is no error.
        for &i in &[5, 3_000_005] {
            got[i] += 50.0;
        }
        got[1 << 20] = f32::NAN;
        let mut want = want;
        want[1 << 20] = f32::NAN;
        got[n - 1] += 0.5e-4;
        let bytes = |v: &[f32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
        let (g, w) = (bytes(&got), bytes(&want));
        let tol = default_tolerance(DType::F32);
        let all = compare_all(DType::F32, &g, &w, tol);
        let one = compare_part(decoder(DType::F32), 4, &g, &w, 0, tol);
        let m = all.mismatch.expect("two elements are wrong");
        assert_eq!((m.count, m.total, m.index), (2, n, 5));
        assert_eq!((one.count, one.worst.map(|x| x.1)), (2, Some(5)));
        assert_eq!(all.max_abs_error, one.max_abs);
        assert!((all.max_abs_error - 50.0).abs() < 1e-9);
    }

    /// No elements: nothing differs. Outputs of different lengths (a caller's bug): every element differs.
    #[test]
    fn empty_and_mismatched_lengths() {
        let tol = default_tolerance(DType::Bf16);
        let empty = compare_all(DType::Bf16, &[], &[], tol);
        assert_eq!((empty.mismatch, empty.max_abs_error), (None, 0.0));
        let m = compare(DType::Bf16, &bf16(&[1.0]), &bf16(&[1.0, 2.0]), tol).expect("lengths differ");
        assert_eq!((m.count, m.total), (2, 2));
    }

    #[test]
    fn flat_indices_become_coordinates() {
        assert_eq!(unravel(0, &[4, 8]), [0, 0]);
        assert_eq!(unravel(13, &[4, 8]), [1, 5]);
        assert_eq!(unravel(31, &[2, 4, 4]), [1, 3, 3]);
    }
}
