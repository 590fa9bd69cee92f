use super::*;
use crate::fill::random_elements;
use std::io::Cursor;

/// A `.npy` file as numpy writes it (version 1.0, the dict padded to 64 bytes), with a header dict of our choice.
fn npy_file(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut text = dict.to_owned();
    let unpadded = 10 + text.len() + 1;
    text.extend(std::iter::repeat_n(' ', 64 - unpadded % 64));
    text.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((text.len() as u16).to_le_bytes());
    out.extend(text.as_bytes());
    out.extend_from_slice(data);
    out
}

fn npy_bytes(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
    let order = if fortran { "True" } else { "False" };
    npy_file(&format!("{{'descr': '{descr}', 'fortran_order': {order}, 'shape': {shape}, }}"), data)
}

fn read(bytes: Vec<u8>) -> Result<NpyArray, NpyError> {
    read_npy(Cursor::new(bytes), &mut |_| {})
}

#[test]
fn round_trip_every_dtype() {
    for dtype in DType::ALL {
        let bytes = random_elements(dtype, 6, 7, 0);
        let mut file = Vec::new();
        write_npy(&mut file, dtype, &[2, 3], &bytes, &mut |_| {}).unwrap();
        let array = read(file).unwrap();
        assert_eq!(array.shape, [2, 3]);
        assert_eq!(array.descr(), npy_descr_of(dtype));
        assert_eq!(npy_to_elements(dtype, array).unwrap(), bytes, "{dtype}");
    }
}

#[test]
fn a_header_claiming_more_data_than_the_file_holds_is_an_error() {
    // A small file whose header declares 2^40 f32 elements: refused before anything is allocated.
    let file = npy_bytes("<f4", false, "(1099511627776,)", &[0u8; 16]);
    let e = read(file).unwrap_err().to_string();
    assert_eq!(e, "16 data bytes for shape [1099511627776] of <f4; expected 4398046511104");
    let file = npy_bytes("<f4", false, "(18446744073709551615, 4)", &[]);
    assert!(matches!(read(file), Err(NpyError::ShapeOverflow { .. })));
}

#[test]
fn big_endian_and_fortran_order() {
    let data = [1.5f32.to_be_bytes(), (-2.0f32).to_be_bytes()].concat();
    let a = read(npy_bytes(">f4", false, "(2,)", &data)).unwrap();
    assert_eq!(npy_to_elements(DType::F32, a).unwrap(), [1.5f32.to_le_bytes(), (-2.0f32).to_le_bytes()].concat());
    let e = read(npy_bytes("<f4", true, "(1, 1)", &[0; 4])).unwrap_err();
    assert!(matches!(e, NpyError::FortranOrder));
    assert!(matches!(read(b"\x93NUMPY garbage".to_vec()), Err(NpyError::Header(_))));
}

#[test]
fn dtype_mismatch_and_conversions() {
    let array = |kind, size, bytes: Vec<u8>| NpyArray { shape: vec![bytes.len() / size], kind, size, bytes };
    let f64s = array(NpyKind::Float, 8, 1.0f64.to_le_bytes().to_vec());
    assert_eq!(
        npy_to_elements(DType::F32, f64s).unwrap_err().to_string(),
        "numpy dtype <f8 cannot be used for a f32 parameter (expected <f4)"
    );
    let f32s = || array(NpyKind::Float, 4, [1.0f32, -0.5].map(f32::to_le_bytes).concat());
    assert_eq!(npy_to_elements(DType::Bf16, f32s()).unwrap(), [0x80, 0x3f, 0x00, 0xbf]);
    assert_eq!(npy_to_elements(DType::E4m3, f32s()).unwrap(), [0x38, 0xb0]);
    let raw = array(NpyKind::Uint, 2, vec![0x80, 0x3f]);
    assert_eq!(npy_to_elements(DType::Bf16, raw).unwrap(), [0x80, 0x3f]);
    assert!(npy_to_elements(DType::I32, f32s()).unwrap_err().to_string().contains("expected <i4"));
}

/// The raw-bit forms of fp8 arrays: `|u1` (torch's `t.view(torch.uint8).numpy()`) and the void type that
/// `numpy.save` writes for an `ml_dtypes.float8_e4m3fn` array, `<V1` (measured with ml_dtypes 0.6 on the H200
/// machine), or `|V1`; each is taken byte for byte.
#[test]
fn fp8_raw_bits_are_read_as_torch_and_ml_dtypes_write_them() {
    let bits = [0x38u8, 0xb0, 0x7e, 0x01];
    for descr in ["|u1", "<V1", "|V1"] {
        let a = read(npy_bytes(descr, false, "(2, 2)", &bits)).unwrap();
        assert_eq!(a.shape, [2, 2]);
        assert_eq!(npy_to_elements(DType::E4m3, a).unwrap(), bits, "{descr}");
    }
}

#[test]
fn progress_counts_every_byte() {
    let bytes = random_elements(DType::Bf16, 1000, 1, 0);
    let mut file = Vec::new();
    let mut last = 0;
    write_npy(&mut file, DType::Bf16, &[1000], &bytes, &mut |n| last = n).unwrap();
    assert_eq!(last, bytes.len());
    let mut last = 0;
    let array = read_npy(Cursor::new(file), &mut |n| last = n).unwrap();
    assert_eq!(last, 4000, "bf16 is written widened to f32");
    assert_eq!(npy_to_elements(DType::Bf16, array).unwrap(), bytes);
}

#[test]
fn headers_are_written_as_numpy_writes_them() {
    let mut file = Vec::new();
    write_npy(&mut file, DType::F32, &[2, 3], &[0; 24], &mut |_| {}).unwrap();
    assert_eq!(file, npy_bytes("<f4", false, "(2, 3)", &[0; 24]));
    let mut file = Vec::new();
    write_npy(&mut file, DType::Bool, &[7], &[1; 7], &mut |_| {}).unwrap();
    assert_eq!(file, npy_bytes("|b1", false, "(7,)", &[1; 7]));
    assert_eq!(file.len() - 7, 128, "the data starts at a multiple of 64 bytes");
    let mut file = Vec::new();
    write_npy(&mut file, DType::F64, &[], &[0; 8], &mut |_| {}).unwrap();
    let a = read(file).unwrap();
    assert_eq!((a.shape.len(), a.descr().as_str()), (0, "<f8"));
}

#[test]
fn header_dicts_numpy_may_write_are_read() {
    // Key order, quotes, spacing, Python 2 longs, version 2.0, `=` (native, little-endian here), no endianness.
    for (dict, shape) in [
        ("{'shape': (3,), 'fortran_order': False, 'descr': '<f4'}", vec![3]),
        ("{\"descr\":\"=f4\",\"fortran_order\":False,\"shape\":(1L, 3L)}", vec![1, 3]),
        ("{'descr': 'f4', 'fortran_order': False, 'shape': (3, ), }", vec![3]),
    ] {
        let count: usize = shape.iter().product();
        let a = read(npy_file(dict, &vec![0; 4 * count])).unwrap_or_else(|e| panic!("{dict}: {e}"));
        assert_eq!(a.shape, shape, "{dict}");
        assert_eq!(a.descr(), "<f4");
    }
    let mut v2 = npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }", &[5, 6]);
    let text_len = u16::from_le_bytes([v2[8], v2[9]]);
    v2.splice(6..10, [2, 0].into_iter().chain(u32::from(text_len).to_le_bytes()));
    assert_eq!(read(v2).unwrap().bytes, [5, 6]);
}

#[test]
fn hostile_headers_are_errors() {
    let deep = format!(
        "{{'descr': {}'<f4'{}, 'fortran_order': False, 'shape': (1,)}}",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"\x93NUMPY".to_vec(), "ends inside the header"),
        (b"NOTNUMPY\x01\x00\x00\x00".to_vec(), "does not start with"),
        (b"\x93NUMPY\x09\x00\x00\x00".to_vec(), "version 9.0"),
        (b"\x93NUMPY\x02\x00\xff\xff\xff\xff{".to_vec(), "longer than"),
        (b"\x93NUMPY\x01\x00\x40\x00{'descr'".to_vec(), "the file ends after 8"),
        (npy_file(&deep, &[]), "nests too deeply"),
        (npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", &[]), "too large"),
        (npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", &[]), "unexpected `-`"),
        (npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': ('a',)}", &[]), "non-negative integers"),
        (npy_file("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", &[]), "no boolean 'fortran_order'"),
        (npy_file("{'descr': '<', 'fortran_order': False, 'shape': (1,)}", &[]), "is not a numpy type"),
        (npy_file("{'descr': '<f', 'fortran_order': False, 'shape': (1,)}", &[]), "with a size"),
        (npy_file("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", &[]), "structured"),
        (npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", &[]), "after the dict"),
        (npy_file("{'descr': '<f4' 'fortran_order': False}", &[]), "expected `,` or `}`"),
        (npy_file("{'descr: '<f4'}", &[]), "expected `:`"),
        (npy_file("{'descr': '<f99999999999999999999', 'fortran_order': False, 'shape': (1,)}", &[]), "with a size"),
        (npy_file("{'descr': '<f18446744073709551615', 'fortran_order': False, 'shape': (2,)}", &[]), "overflows"),
    ];
    for (file, expected) in cases {
        let e = read(file.clone()).map(|a| a.shape).unwrap_err().to_string();
        assert!(e.contains(expected), "{:?}: `{e}` lacks `{expected}`", String::from_utf8_lossy(&file));
    }
}
