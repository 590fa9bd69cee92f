//! GPU check of the device-side random fill (`DeviceTensor::fill_random`, `runtime/src/fill.ptx`) against its host
//! reference (`cutec_runtime::fill`): run on the GPU machine by `scripts/gpu/fill_check.sh`.
//!
//! - `fill_check`: every element type at sizes around the block and grid boundaries, several seeds and streams,
//!   byte for byte; then a 6 GiB `f32` fill (offsets past 2^32 bytes), sampled against the reference and timed.
//! - `fill_check compare FILE.npy DTYPE SEED STREAM`: a tensor `cutec run --save-input` wrote equals the reference.
//!
//! Prints one line per check and exits 1 on the first mismatch.

use std::time::Instant;

use cutec_manifest::DType;
use cutec_runtime::fill::{element_from_bits, random_bits, random_elements, stream_key};
use cutec_runtime::{Context, DeviceTensor, npy};

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn first_difference(a: &[u8], b: &[u8], size: usize) -> Option<usize> {
    if a.len() != b.len() {
        return Some(a.len().min(b.len()) / size);
    }
    a.chunks(size).zip(b.chunks(size)).position(|(x, y)| x != y)
}

fn exhaustive(ctx: &Context) -> Result<(), String> {
    // 2^24 threads per launch: the largest sizes make each thread loop.
    let sizes = [0usize, 1, 255, 256, 257, 65_537, 1_000_003, (1 << 24) + 7, (1 << 25) + 1];
    let mut checked = 0usize;
    for dtype in DType::ALL {
        let size = dtype.size_bytes() as usize;
        for &n in &sizes {
            let keys: &[(u64, u64)] = if n > 1 << 22 { &[(42, 3)] } else { &[(0, 0), (42, 3), (u64::MAX, 7)] };
            for &(seed, stream) in keys {
                let mut t = DeviceTensor::zeros(ctx, dtype, &[n]).map_err(err)?;
                t.fill_random(seed, stream).map_err(err)?;
                let device = t.to_bytes().map_err(err)?;
                let host = random_elements(dtype, n, seed, stream);
                if let Some(i) = first_difference(&device, &host, size) {
                    let (d, h) = (device.chunks(size).nth(i), host.chunks(size).nth(i));
                    return Err(format!(
                        "{dtype}[{n}] seed {seed} stream {stream}: element {i} is {d:02x?} on the device, {h:02x?} \
                         in the reference"
                    ));
                }
                checked += n;
            }
        }
        println!("fill {dtype}: device == reference at sizes {sizes:?}");
    }
    println!("fill: {checked} elements equal to the reference");
    Ok(())
}

fn large(ctx: &Context) -> Result<(), String> {
    let n: usize = 3 << 29; // 1.5 * 2^30 f32 = 6 GiB: byte offsets beyond 2^32
    let (seed, stream) = (1234, 5);
    let mut t = DeviceTensor::zeros(ctx, DType::F32, &[n]).map_err(err)?;
    let mut times = Vec::new();
    for _ in 0..5 {
        ctx.synchronize().map_err(err)?;
        let start = Instant::now();
        t.fill_random(seed, stream).map_err(err)?;
        ctx.synchronize().map_err(err)?;
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let bytes = (n * 4) as f64;
    println!("fill f32[{n}] (6 GiB): median {:.2} ms, {:.0} GB/s (5 runs)", median * 1e3, bytes / median / 1e9);
    let device = t.to_bytes().map_err(err)?;
    let key = stream_key(seed, stream);
    // The last 100,000 elements and every 9,973rd one.
    let sample = (n - 100_000..n).chain((0..n).step_by(9_973));
    let mut count = 0;
    for i in sample {
        let expected = &element_from_bits(DType::F32, random_bits(key, i as u64))[..4];
        if &device[4 * i..4 * i + 4] != expected {
            return Err(format!("f32[{n}]: element {i} differs from the reference"));
        }
        count += 1;
    }
    println!("fill f32[{n}]: {count} sampled elements (to the last) equal to the reference");
    Ok(())
}

fn compare(path: &str, dtype: &str, seed: &str, stream: &str) -> Result<(), String> {
    let dtype: DType = dtype.parse().map_err(err)?;
    let seed: u64 = seed.parse().map_err(err)?;
    let stream: u64 = stream.parse().map_err(err)?;
    let file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let array = npy::read_npy(file, &mut |_| {}).map_err(|e| format!("{path}: {e}"))?;
    let n: usize = array.shape.iter().product();
    let saved = npy::npy_to_elements(dtype, array).map_err(|e| format!("{path}: {e}"))?;
    let reference = random_elements(dtype, n, seed, stream);
    if let Some(i) = first_difference(&saved, &reference, dtype.size_bytes() as usize) {
        return Err(format!("{path}: element {i} differs from the reference ({dtype}, seed {seed}, stream {stream})"));
    }
    println!("{path}: {n} {dtype} elements equal to the reference (seed {seed}, stream {stream})");
    Ok(())
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => {
            let ctx = Context::new(0).map_err(err)?;
            exhaustive(&ctx)?;
            large(&ctx)
        }
        [cmd, path, dtype, seed, stream] if cmd == "compare" => compare(path, dtype, seed, stream),
        _ => Err("usage: fill_check | fill_check compare FILE.npy DTYPE SEED STREAM".into()),
    }
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fill_check: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
