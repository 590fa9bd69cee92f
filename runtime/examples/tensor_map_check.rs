//! The rules of `TensorMapDesc::check` against the driver's own `cuTensorMapEncodeTiled`, on the GPU machine:
//! `tensor_map_check [CASES]`. Random descriptions whose fields straddle every limit (extents, strides, boxes,
//! element strides, swizzle spans, alignment, NaN fill, every element type, rank 1 to 5) are given to both; the
//! first disagreements are printed. Exits 1 if `check` refuses a map the driver accepts.

use cutec_manifest::DType;
use cutec_runtime::tensor_map::{TensorMapDesc, TmaL2Promotion, TmaOobFill, TmaSwizzle};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // SplitMix64.
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[(self.next() % v.len() as u64) as usize]
    }
}

fn random(r: &mut Rng) -> (TensorMapDesc, u64) {
    let rank = r.pick(&[1usize, 2, 2, 2, 3, 4, 5]);
    let dtype = r.pick(&DType::ALL);
    let dims = (0..rank).map(|_| r.pick(&[1u64, 2, 7, 64, 1000, 65536, 1 << 32, (1 << 32) + 1, 0])).collect();
    let strides =
        (1..rank).map(|_| r.pick(&[16u64, 32, 48, 8, 1000, 1024, 1 << 20, (1 << 40) - 16, 1 << 40, 0])).collect();
    let boxes = (0..rank).map(|_| r.pick(&[1u32, 2, 4, 8, 16, 32, 64, 128, 256, 257, 0])).collect();
    let elem = (0..rank).map(|_| r.pick(&[1u32, 1, 1, 2, 8, 9, 0])).collect();
    let desc = TensorMapDesc {
        dtype,
        global_dims: dims,
        global_strides: strides,
        box_dims: boxes,
        element_strides: elem,
        swizzle: r.pick(&[TmaSwizzle::None, TmaSwizzle::B32, TmaSwizzle::B64, TmaSwizzle::B128]),
        l2_promotion: r.pick(&[TmaL2Promotion::None, TmaL2Promotion::B64, TmaL2Promotion::B128, TmaL2Promotion::B256]),
        oob_fill: r.pick(&[TmaOobFill::Zero, TmaOobFill::Zero, TmaOobFill::Nan]),
    };
    let address = r.pick(&[0x7f00_0000_0000u64, 0x7f00_0000_0010, 0x7f00_0000_0008, 0x7f00_0000_0004]);
    (desc, address)
}

fn main() {
    let cases: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(200_000);
    // The driver must be initialized to encode; a context is the simplest way.
    let _ctx = match cutec_runtime::Context::new(0) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("tensor_map_check: {e}");
            std::process::exit(1);
        }
    };
    let mut r = Rng(20261130);
    let (mut agree, mut valid, mut shown) = (0usize, 0usize, 0usize);
    let mut disagree = 0usize;
    // Maps the driver accepts that `check` refuses: a defect (a kernel could not get a valid map).
    let mut too_strict = 0usize;
    // The box's size in bytes: the largest the driver accepted, the smallest it refused where `check` accepts.
    let (mut max_accepted, mut min_refused) = (0u64, u64::MAX);
    for _ in 0..cases {
        let (d, address) = random(&mut r);
        let Some(driver) = d.driver_accepts(address) else { continue };
        let ours = d.check(address);
        valid += usize::from(driver);
        let bytes = d.box_dims.iter().map(|&b| u64::from(b)).product::<u64>() * u64::from(d.dtype.size_bytes());
        if driver {
            max_accepted = max_accepted.max(bytes);
        } else if ours.is_ok() {
            min_refused = min_refused.min(bytes);
        }
        if ours.is_ok() == driver {
            agree += 1;
            continue;
        }
        disagree += 1;
        too_strict += usize::from(driver);
        if shown < 25 {
            shown += 1;
            println!(
                "DISAGREE driver {} ours {:?} at {address:#x}: {d:?}",
                if driver { "accepts" } else { "refuses" },
                ours
            );
        }
    }
    println!(
        "box bytes: largest the driver accepted {max_accepted}, smallest it refused that check() accepts {min_refused}"
    );
    println!(
        "tensor maps: {cases} random descriptions, {agree} agree with cuTensorMapEncodeTiled, {disagree} differ \
         ({valid} valid; {too_strict} accepted by the driver and refused by check, {} refused by the driver only)",
        disagree - too_strict
    );
    // A map the kernel would get: encoded, 128 bytes.
    let operand = TensorMapDesc {
        dtype: DType::Bf16,
        global_dims: vec![777, 1000],
        global_strides: vec![784 * 2],
        box_dims: vec![64, 128],
        element_strides: vec![1, 1],
        swizzle: TmaSwizzle::B128,
        l2_promotion: TmaL2Promotion::B128,
        oob_fill: TmaOobFill::Zero,
    };
    match operand.encode(0x7f00_0000_0000) {
        Ok(map) => println!("encoded a bf16 1000x777 operand map (box 128x64, SW128): {:?}", map),
        Err(e) => {
            println!("encoding the operand map failed: {e}");
            std::process::exit(1);
        }
    }
    // A map the driver refuses and `check` accepts still fails, with the driver's error, in `encode`; a valid
    // map that `check` refuses would be a defect.
    if too_strict > 0 {
        std::process::exit(1);
    }
}
