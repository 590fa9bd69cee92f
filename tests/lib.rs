//! Shared helpers for the cross-crate test suite (`suite/`): where the repository's inputs are, and a small
//! deterministic random number generator for the mutation test.

use std::path::{Path, PathBuf};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// `path` relative to the repository root, with `/` separators: the stable name used in snapshots.
pub fn repo_relative(path: &Path) -> String {
    let root = repo_root();
    path.strip_prefix(&root).unwrap_or(path).to_string_lossy().replace('\\', "/")
}

/// The `.cute` files directly inside `dir` (relative to the repository root), sorted.
pub fn cute_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo_root().join(dir))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "cute"));
    files.sort();
    files
}

/// xorshift64*: small, fast, and the same sequence on every machine for a given seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// The seed of a randomised test: `CUTEC_SEED` if set, else `default`.
pub fn seed(default: u64) -> u64 {
    std::env::var("CUTEC_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}
