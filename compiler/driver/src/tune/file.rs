//! The tuning file: what `cutec tune` found, keyed by source, kernel, device and shape, read back by
//! `cutec build --tuning` and `cutec run --tuning`.
//!
//! ```json
//! { "version": 1,
//!   "entries": [ { "source_hash": "fnv1a64:...", "kernel": "gemm", "device": "NVIDIA H200",
//!                  "shape": { "K": 4096, "M": 4096, "N": 4096 }, "consts": { "BN": 256, "STAGES": 4 },
//!                  "time_us": 601.2, "default_time_us": 612.3, "source": "examples/gemm_sm90.cute" } ] }
//! ```
//!
//! The key is `(source_hash, kernel, device, shape)`; a tuning writes its entries over those of the same key and
//! keeps the others, so one file collects shapes, devices and kernels over several runs. Selection is by exact
//! match only: a shape between two tuned ones is not interpolated, since the best tile for 4096 rows says little
//! about 3000 (the caller says so and uses the defaults). The source is identified by the hash of its text: a
//! file edited since its tuning no longer matches, which is what a stale tuning deserves.

use crate::DefineValue;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

pub const VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuningFile {
    pub version: u32,
    #[serde(default)]
    pub entries: Vec<Entry>,
}

impl Default for TuningFile {
    fn default() -> Self {
        TuningFile { version: VERSION, entries: Vec::new() }
    }
}

/// A const value as JSON has it: `256` or `true`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ConstJson {
    Bool(bool),
    Int(i64),
}

impl From<DefineValue> for ConstJson {
    fn from(v: DefineValue) -> Self {
        match v {
            DefineValue::Int(i) => ConstJson::Int(i),
            DefineValue::Bool(b) => ConstJson::Bool(b),
        }
    }
}

impl From<ConstJson> for DefineValue {
    fn from(v: ConstJson) -> Self {
        match v {
            ConstJson::Int(i) => DefineValue::Int(i),
            ConstJson::Bool(b) => DefineValue::Bool(b),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub source_hash: String,
    pub kernel: String,
    /// The CUDA device's name (`NVIDIA H200`): the best configuration differs between GPUs.
    pub device: String,
    pub shape: BTreeMap<String, i64>,
    /// The best configuration: the swept parameters' values and the `-D`s the tuning ran with.
    pub consts: BTreeMap<String, ConstJson>,
    pub time_us: f64,
    pub default_time_us: f64,
    /// The file as it was named when tuned (informative; the hash is the key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl Entry {
    fn key(&self) -> (&str, &str, &str, &BTreeMap<String, i64>) {
        (&self.source_hash, &self.kernel, &self.device, &self.shape)
    }
    /// The consts as `-D` values.
    pub fn defines(&self) -> Vec<(String, DefineValue)> {
        self.consts.iter().map(|(n, v)| (n.clone(), DefineValue::from(*v))).collect()
    }
    /// `BN=256 STAGES=4`.
    pub fn label(&self) -> String {
        let parts: Vec<String> = self.consts.iter().map(|(n, v)| format!("{n}={}", DefineValue::from(*v))).collect();
        if parts.is_empty() { "(default)".into() } else { parts.join(" ") }
    }
}

/// The key of a source: FNV-1a (64 bits) of its bytes. Stable across machines and Rust versions, unlike the
/// standard library's hasher, and enough to tell edited files apart; not a defence against forgery.
pub fn source_hash(source: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in source.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("fnv1a64:{h:016x}")
}

/// Why a tuning file cannot be used.
#[derive(Debug)]
pub enum FileError {
    Io(std::io::Error),
    /// Over the size limit, or not text.
    Read(crate::files::ReadError),
    Json(serde_json::Error),
    Version(u32),
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileError::Io(e) => write!(f, "{e}"),
            FileError::Read(e) => write!(f, "{e}"),
            FileError::Json(e) => write!(f, "not a tuning file: {e}"),
            FileError::Version(v) => write!(f, "a tuning file of version {v}; this cutec reads version {VERSION}"),
        }
    }
}

impl TuningFile {
    pub fn parse(text: &str) -> Result<TuningFile, FileError> {
        // The version first, so that a future format is named as such rather than as malformed.
        let value: serde_json::Value = serde_json::from_str(text).map_err(FileError::Json)?;
        if let Some(v) = value.get("version").and_then(serde_json::Value::as_u64)
            && v != u64::from(VERSION)
        {
            return Err(FileError::Version(u32::try_from(v).unwrap_or(u32::MAX)));
        }
        serde_json::from_value(value).map_err(FileError::Json)
    }

    /// The file at `path`, read up to [`crate::files::MAX_TUNING_BYTES`].
    pub fn read(path: &Path) -> Result<TuningFile, FileError> {
        TuningFile::parse(&Self::text(path)?)
    }

    /// The file at `path`, or an empty one if there is none yet.
    pub fn read_or_new(path: &Path) -> Result<TuningFile, FileError> {
        match Self::text(path) {
            Ok(text) => TuningFile::parse(&text),
            Err(FileError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(TuningFile::default()),
            Err(e) => Err(e),
        }
    }

    fn text(path: &Path) -> Result<String, FileError> {
        crate::files::read_text_capped(path, crate::files::MAX_TUNING_BYTES).map_err(|e| match e {
            crate::files::ReadError::Io(e) => FileError::Io(e),
            e => FileError::Read(e),
        })
    }

    pub fn to_json(&self) -> String {
        // Serializing plain data into a string cannot fail; an empty object would be a bug, not a crash.
        let mut s = serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into());
        s.push('\n');
        s
    }

    /// Writes through a temporary file in the same directory, renamed over `path`: an interrupted write leaves
    /// the old file whole.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        std::io::Write::write_all(&mut tmp, self.to_json().as_bytes())?;
        tmp.persist(path).map_err(|e| e.error)?;
        Ok(())
    }

    /// Adds `new`, replacing the entries of the same key in place (others keep their order).
    pub fn merge(&mut self, new: Vec<Entry>) {
        for e in new {
            match self.entries.iter_mut().find(|old| old.key() == e.key()) {
                Some(old) => *old = e,
                None => self.entries.push(e),
            }
        }
    }

    /// The entry for exactly this source, kernel and shape on `device` (any device when `None`: a build without
    /// a GPU, which must then be unambiguous).
    pub fn select(
        &self,
        source_hash: &str,
        kernel: &str,
        device: Option<&str>,
        shape: &[(String, i64)],
    ) -> Selection<'_> {
        let shape: BTreeMap<String, i64> = shape.iter().cloned().collect();
        let same_kernel: Vec<&Entry> =
            self.entries.iter().filter(|e| e.source_hash == source_hash && e.kernel == kernel).collect();
        let found: Vec<&Entry> =
            same_kernel.iter().copied().filter(|e| e.shape == shape && device.is_none_or(|d| e.device == d)).collect();
        match found.as_slice() {
            [one] => Selection::Found(one),
            [] => {
                let mut near: Vec<String> = same_kernel
                    .iter()
                    .map(|e| {
                        let s: Vec<String> = e.shape.iter().map(|(n, v)| format!("{n}={v}")).collect();
                        format!("{} on {}", s.join(","), e.device)
                    })
                    .collect();
                near.dedup();
                let other_sources = self.entries.iter().any(|e| e.kernel == kernel && e.source_hash != source_hash);
                Selection::None { tuned: near, other_sources }
            }
            several => Selection::Ambiguous(several.iter().map(|e| e.device.clone()).collect()),
        }
    }
}

/// What [`TuningFile::select`] found.
#[derive(Debug, PartialEq)]
pub enum Selection<'a> {
    Found(&'a Entry),
    /// No entry: the shapes and devices tuned for this source and kernel (`M=4096,N=4096 on NVIDIA H200`), and
    /// whether the file has entries of this kernel for another text of the source (an edited file).
    None {
        tuned: Vec<String>,
        other_sources: bool,
    },
    /// Entries for several devices and none named: their devices.
    Ambiguous(Vec<String>),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(device: &str, m: i64, bn: i64) -> Entry {
        Entry {
            source_hash: source_hash("kernel"),
            kernel: "gemm".into(),
            device: device.into(),
            shape: [("M".to_owned(), m), ("N".to_owned(), 4096)].into_iter().collect(),
            consts: [("BN".to_owned(), ConstJson::Int(bn)), ("FAST".to_owned(), ConstJson::Bool(true))]
                .into_iter()
                .collect(),
            time_us: 100.0,
            default_time_us: 120.5,
            source: Some("k.cute".into()),
        }
    }

    #[test]
    fn hashes_are_stable() {
        assert_eq!(source_hash(""), "fnv1a64:cbf29ce484222325");
        assert_eq!(source_hash("a"), "fnv1a64:af63dc4c8601ec8c");
        assert_ne!(source_hash("kernel k"), source_hash("kernel  k"));
    }

    #[test]
    fn round_trip_and_merge() {
        let mut f = TuningFile::default();
        f.merge(vec![entry("NVIDIA H200", 4096, 256), entry("NVIDIA H100", 4096, 128)]);
        let text = f.to_json();
        assert!(text.contains("\"BN\": 256") && text.contains("\"FAST\": true"), "{text}");
        let back = TuningFile::parse(&text).expect("round trip");
        assert_eq!(back, f);
        // Same key: replaced in place; a new shape: appended.
        let mut g = back;
        g.merge(vec![entry("NVIDIA H200", 4096, 128), entry("NVIDIA H200", 8192, 256)]);
        let bn: Vec<(String, i64, ConstJson)> =
            g.entries.iter().map(|e| (e.device.clone(), e.shape["M"], e.consts["BN"])).collect();
        assert_eq!(
            bn,
            [
                ("NVIDIA H200".into(), 4096, ConstJson::Int(128)),
                ("NVIDIA H100".into(), 4096, ConstJson::Int(128)),
                ("NVIDIA H200".into(), 8192, ConstJson::Int(256)),
            ]
        );
        assert_eq!(
            g.entries[0].defines(),
            [("BN".into(), DefineValue::Int(128)), ("FAST".into(), DefineValue::Bool(true))]
        );
        assert_eq!(g.entries[0].label(), "BN=128 FAST=true");
    }

    #[test]
    fn files_that_are_not_tuning_files() {
        assert!(matches!(TuningFile::parse("{\"version\": 2, \"entries\": 7}"), Err(FileError::Version(2))));
        assert!(matches!(TuningFile::parse("[1, 2]"), Err(FileError::Json(_))));
        assert!(matches!(
            TuningFile::parse("{\"version\": 1, \"entries\": [{\"kernel\": 3}]}"),
            Err(FileError::Json(_))
        ));
        assert_eq!(TuningFile::parse("{\"version\": 1}").map(|f| f.entries.len()).ok(), Some(0));
    }

    #[test]
    fn selection_is_by_exact_key() {
        let mut f = TuningFile::default();
        f.merge(vec![entry("NVIDIA H200", 4096, 256), entry("NVIDIA H100", 4096, 128), entry("NVIDIA H200", 8192, 64)]);
        let h = source_hash("kernel");
        let shape = |m: i64| vec![("N".to_owned(), 4096), ("M".to_owned(), m)];
        let consts = |s: Selection<'_>| match s {
            Selection::Found(e) => Some(e.consts["BN"]),
            _ => None,
        };
        assert_eq!(consts(f.select(&h, "gemm", Some("NVIDIA H100"), &shape(4096))), Some(ConstJson::Int(128)));
        assert_eq!(consts(f.select(&h, "gemm", Some("NVIDIA H200"), &shape(4096))), Some(ConstJson::Int(256)));
        // Without a device: unambiguous for 8192, not for 4096.
        assert_eq!(consts(f.select(&h, "gemm", None, &shape(8192))), Some(ConstJson::Int(64)));
        assert_eq!(
            f.select(&h, "gemm", None, &shape(4096)),
            Selection::Ambiguous(vec!["NVIDIA H200".into(), "NVIDIA H100".into()])
        );
        // Another shape, device, kernel or source: nothing, with what there is.
        match f.select(&h, "gemm", Some("NVIDIA H100"), &shape(2048)) {
            Selection::None { tuned, other_sources } => {
                assert_eq!(
                    tuned,
                    ["M=4096,N=4096 on NVIDIA H200", "M=4096,N=4096 on NVIDIA H100", "M=8192,N=4096 on NVIDIA H200"]
                );
                assert!(!other_sources);
            }
            s => panic!("{s:?}"),
        }
        assert_eq!(
            f.select(&source_hash("kernel // edited"), "gemm", None, &shape(4096)),
            Selection::None { tuned: vec![], other_sources: true }
        );
        assert!(matches!(f.select(&h, "gemv", None, &shape(4096)), Selection::None { .. }));
    }

    #[test]
    fn writes_replace_the_file_whole() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("t.json");
        assert_eq!(TuningFile::read_or_new(&path).map(|f| f.entries.len()).ok(), Some(0));
        let mut f = TuningFile::default();
        f.merge(vec![entry("NVIDIA H200", 4096, 256)]);
        f.write(&path).expect("written");
        assert_eq!(TuningFile::read(&path).expect("read back"), f);
        std::fs::write(&path, "not json").expect("written");
        assert!(TuningFile::read_or_new(&path).is_err(), "a broken file is an error, not an empty file");
    }
}
