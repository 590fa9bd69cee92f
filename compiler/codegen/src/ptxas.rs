//! Assembling PTX with NVIDIA's `ptxas`, and reading its `-v` report (registers, spills, shared memory), so
//! tests can assert that a kernel does not spill.
//!
//! `ptxas` is found through `$CUTEC_PTXAS`, then `PATH`, then the `nvidia-cuda-nvcc` Python wheel
//! (`<site-packages>/nvidia/cu13/bin/ptxas`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// What `ptxas -v` says about one kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelReport {
    pub name: String,
    pub registers: u32,
    pub stack_frame_bytes: u32,
    pub spill_store_bytes: u32,
    pub spill_load_bytes: u32,
    pub shared_bytes: u32,
    pub barriers: u32,
}

impl KernelReport {
    pub fn spills(&self) -> bool {
        self.spill_store_bytes > 0 || self.spill_load_bytes > 0
    }
}

/// A successful assembly.
#[derive(Clone, Debug, Default)]
pub struct PtxasReport {
    pub kernels: Vec<KernelReport>,
    /// ptxas's warnings and coded performance advisories, one a line. ptxas 13 prints some advisories as `info`
    /// (`ptxas info : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized ...`,
    /// C7508 `setmaxnreg` ignored), so a line with a `(Cdddd)` code counts as well.
    pub warnings: Vec<String>,
    /// Everything ptxas printed.
    pub log: String,
    pub cubin: Vec<u8>,
}

impl PtxasReport {
    pub fn kernel(&self, name: &str) -> Option<&KernelReport> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PtxasError {
    #[error("ptxas not found (set CUTEC_PTXAS, put it on PATH, or `pip install nvidia-cuda-nvcc`)")]
    NotFound,
    #[error("running ptxas: {0}")]
    Io(#[from] std::io::Error),
    #[error("ptxas rejected the PTX:\n{log}")]
    Rejected { log: String },
}

/// The `ptxas` to use, if there is one.
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CUTEC_PTXAS") {
        return Some(PathBuf::from(p));
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join("ptxas");
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    let out = Command::new("python3").args(["-c", "import nvidia; print(nvidia.__path__[0])"]).output().ok()?;
    let dir = String::from_utf8(out.stdout).ok()?;
    let candidate = Path::new(dir.trim()).join("cu13/bin/ptxas");
    candidate.is_file().then_some(candidate)
}

/// Assembles `ptx` for `sm_90a` with `ptxas -v`.
pub fn assemble_with_ptxas(ptx: &str) -> Result<PtxasReport, PtxasError> {
    let ptxas = find_ptxas().ok_or(PtxasError::NotFound)?;
    assemble(&ptxas, ptx, "sm_90a")
}

/// Assembles `ptx` for `arch` with the given `ptxas`.
pub fn assemble(ptxas: &Path, ptx: &str, arch: &str) -> Result<PtxasReport, PtxasError> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "cutec-ptxas-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir)?;
    let result = (|| {
        let input = dir.join("module.ptx");
        let output = dir.join("module.cubin");
        std::fs::write(&input, ptx)?;
        let out =
            Command::new(ptxas).arg(format!("-arch={arch}")).arg("-v").arg(&input).arg("-o").arg(&output).output()?;
        let mut log = String::from_utf8_lossy(&out.stdout).into_owned();
        log.push_str(&String::from_utf8_lossy(&out.stderr));
        if !out.status.success() {
            return Err(PtxasError::Rejected { log });
        }
        let cubin = std::fs::read(&output)?;
        let mut report = parse_report(&log);
        report.cubin = cubin;
        Ok(report)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Whether `line` carries one of ptxas's coded messages, `(C` and four digits `)`.
fn has_advisory_code(line: &str) -> bool {
    line.match_indices("(C").any(|(i, _)| {
        let code = line.as_bytes().get(i + 2..i + 7);
        code.is_some_and(|c| c[..4].iter().all(u8::is_ascii_digit) && c[4] == b')')
    })
}

/// Reads `ptxas -v` output:
///
/// ```text
/// ptxas info    : Compiling entry function 'softmax' for 'sm_90a'
/// ptxas info    : Function properties for softmax
///     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
/// ptxas info    : Used 30 registers, used 1 barriers, 256 bytes smem, 400 bytes cmem[0]
/// ```
pub fn parse_report(log: &str) -> PtxasReport {
    let mut report = PtxasReport { log: log.to_string(), ..PtxasReport::default() };
    for line in log.lines() {
        if line.contains("warning") || has_advisory_code(line) {
            report.warnings.push(line.trim().to_string());
        }
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or_default();
            report.kernels.push(KernelReport { name: name.to_string(), ..KernelReport::default() });
            continue;
        }
        let Some(k) = report.kernels.last_mut() else { continue };
        for item in line.rsplit(':').next().unwrap_or_default().split(',') {
            let item = item.trim().trim_start_matches("Used ").trim_start_matches("used ");
            let Some((number, what)) = item.split_once(' ') else { continue };
            let Ok(n) = number.parse::<u32>() else { continue };
            match what.trim() {
                "registers" => k.registers = n,
                "barriers" => k.barriers = n,
                "bytes smem" => k.shared_bytes = n,
                "bytes stack frame" => k.stack_frame_bytes = n,
                "bytes spill stores" => k.spill_store_bytes = n,
                "bytes spill loads" => k.spill_load_bytes = n,
                _ => {}
            }
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::parse_report;

    #[test]
    fn coded_advisories_printed_as_info_are_warnings() {
        let log = "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n\
                   ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized\n\
                   ptxas info    : Function properties for k\n    0 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n\
                   ptxas info    : Used 168 registers, used 1 barriers (C1234 is not a code here)\n";
        let r = parse_report(log);
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
        assert!(r.warnings[0].contains("C7514"));
        let k = r.kernel("k").expect("the kernel");
        assert_eq!((k.registers, k.spill_store_bytes, k.spill_load_bytes), (168, 8, 4));
    }
}
