//! `cutec run --input x=FILE.npy`: any bytes as a `.npy` file are read or refused with an `NpyError`, never a panic
//! or an allocation the file's length does not back; what is read converts to every element type or is refused.
#![no_main]

use cutec_manifest::DType;
use cutec_runtime::npy::{npy_to_elements, read_npy};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(array) = read_npy(std::io::Cursor::new(data), &mut |_| {}) else { return };
    let elements: usize = array.shape.iter().product();
    assert_eq!(array.bytes.len(), elements * array.size, "the data does not match the header's shape");
    assert!(array.bytes.len() <= data.len(), "more data than the file holds");
    for dtype in DType::ALL {
        if let Ok(bytes) = npy_to_elements(dtype, array.clone()) {
            assert_eq!(bytes.len(), elements * dtype.size_bytes() as usize, "{dtype}");
        }
    }
});
