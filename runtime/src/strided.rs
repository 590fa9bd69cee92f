//! Tensors whose layout is a permutation of a compact one (a column-major matrix, strides `(1, rows)`): whether
//! strides are such a layout, and the host-side conversions between that element order and row-major, which is
//! the order of `.npy` files and of `DeviceTensor::from_bytes`.

/// Whether `strides` lay out `shape` compactly in some order of its modes: sorted by stride, each mode of extent
/// above 1 starts where the modes before it end (modes of extent 0 or 1 may have any stride).
pub fn is_permuted_compact(shape: &[usize], strides: &[i64]) -> bool {
    if strides.len() != shape.len() {
        return false;
    }
    if shape.contains(&0) {
        return true;
    }
    let mut modes: Vec<(i64, usize)> =
        strides.iter().zip(shape).filter(|&(_, &e)| e > 1).map(|(&s, &e)| (s, e)).collect();
    modes.sort_unstable();
    let mut next: i64 = 1;
    for (stride, extent) in modes {
        if stride != next {
            return false;
        }
        let Some(n) = i64::try_from(extent).ok().and_then(|e| next.checked_mul(e)) else { return false };
        next = n;
    }
    true
}

/// The storage offset (in elements) of each row-major index of `shape`, in row-major order.
fn offsets(shape: &[usize], strides: &[i64]) -> impl Iterator<Item = usize> {
    let total: usize = shape.iter().product();
    let shape = shape.to_vec();
    let strides: Vec<usize> = strides.iter().map(|&s| s.max(0) as usize).collect();
    let mut index = vec![0usize; shape.len()];
    let mut offset = 0usize;
    (0..total).map(move |k| {
        if k > 0 {
            // The next row-major index: the last mode fastest.
            for m in (0..shape.len()).rev() {
                index[m] += 1;
                offset += strides[m];
                if index[m] < shape[m] {
                    break;
                }
                offset -= strides[m] * index[m];
                index[m] = 0;
            }
        }
        offset
    })
}

/// Row-major `bytes` (elements of `elem` bytes) rearranged into the order `strides` lays `shape` out in.
/// `strides` must satisfy [`is_permuted_compact`].
pub fn row_major_to_strided(bytes: &[u8], shape: &[usize], strides: &[i64], elem: usize) -> Vec<u8> {
    let mut out = vec![0u8; bytes.len()];
    for (k, at) in offsets(shape, strides).enumerate() {
        out[at * elem..(at + 1) * elem].copy_from_slice(&bytes[k * elem..(k + 1) * elem]);
    }
    out
}

/// The inverse of [`row_major_to_strided`]: elements stored as `strides` lays `shape` out, in row-major order.
pub fn strided_to_row_major(bytes: &[u8], shape: &[usize], strides: &[i64], elem: usize) -> Vec<u8> {
    let mut out = vec![0u8; bytes.len()];
    for (k, at) in offsets(shape, strides).enumerate() {
        out[k * elem..(k + 1) * elem].copy_from_slice(&bytes[at * elem..(at + 1) * elem]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permuted_compact_layouts_are_recognised() {
        assert!(is_permuted_compact(&[3, 4], &[4, 1]));
        assert!(is_permuted_compact(&[3, 4], &[1, 3]));
        assert!(is_permuted_compact(&[2, 3, 4], &[1, 8, 2]));
        assert!(is_permuted_compact(&[1, 4], &[99, 1]), "a mode of extent 1 takes any stride");
        assert!(!is_permuted_compact(&[3, 4], &[1, 4]), "a gap");
        assert!(!is_permuted_compact(&[3, 4], &[2, 6]), "not from 1");
        assert!(!is_permuted_compact(&[3, 4], &[1, 1]), "overlapping");
        assert!(!is_permuted_compact(&[3, 4], &[4]));
        assert!(!is_permuted_compact(&[3, 4], &[-1, 3]));
    }

    #[test]
    fn a_column_major_matrix_round_trips() {
        // (2, 3) row-major 0..6 stored column-major: 0 3 1 4 2 5.
        let bytes: Vec<u8> = (0..6).collect();
        let stored = row_major_to_strided(&bytes, &[2, 3], &[1, 2], 1);
        assert_eq!(stored, [0, 3, 1, 4, 2, 5]);
        assert_eq!(strided_to_row_major(&stored, &[2, 3], &[1, 2], 1), bytes);
        // Row-major strides leave the order alone; two-byte elements move whole.
        let wide: Vec<u8> = (0..12).collect();
        assert_eq!(row_major_to_strided(&wide, &[2, 3], &[3, 1], 2), wide);
        let stored = row_major_to_strided(&wide, &[2, 3], &[1, 2], 2);
        assert_eq!(stored, [0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11]);
        assert_eq!(strided_to_row_major(&stored, &[2, 3], &[1, 2], 2), wide);
    }

    #[test]
    fn empty_and_single_element_tensors_convert() {
        // A zero extent: any strides describe no elements, and there is nothing to move.
        assert!(is_permuted_compact(&[0, 5], &[1, 0]));
        assert!(row_major_to_strided(&[], &[0, 5], &[1, 0], 2).is_empty());
        assert!(strided_to_row_major(&[], &[5, 0], &[1, 5], 4).is_empty());
        assert_eq!(row_major_to_strided(&[7, 9], &[1, 1], &[1, 1], 2), [7, 9]);
        // Strides whose compact extent overflows i64 are not a layout of the buffer.
        assert!(!is_permuted_compact(&[1 << 40, 1 << 40], &[1, 1 << 40]));
    }

    #[test]
    fn three_modes_in_any_order_round_trip() {
        let shape = [2, 3, 4];
        let bytes: Vec<u8> = (0..24).collect();
        for strides in [[12i64, 4, 1], [1, 2, 6], [1, 8, 2], [12, 1, 3]] {
            assert!(is_permuted_compact(&shape, &strides), "{strides:?}");
            let stored = row_major_to_strided(&bytes, &shape, &strides, 1);
            // Element (i, j, k) is at i*s0 + j*s1 + k*s2.
            for i in 0..2i64 {
                for j in 0..3i64 {
                    for k in 0..4i64 {
                        let at = (i * strides[0] + j * strides[1] + k * strides[2]) as usize;
                        assert_eq!(stored[at], bytes[(i * 12 + j * 4 + k) as usize], "{strides:?}");
                    }
                }
            }
            assert_eq!(strided_to_row_major(&stored, &shape, &strides, 1), bytes);
        }
    }
}
