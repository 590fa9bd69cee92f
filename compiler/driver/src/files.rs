//! Reading the files a user names (sources, tuning files, `cutec run`'s module and manifest): never more than a
//! cap, so that `/dev/zero`, a FIFO or a huge file costs at most the cap in time and memory. A file is read
//! through [`std::io::Read::take`] of the cap plus one byte: one byte more than the cap says the file is over it.

use std::io::Read;
use std::path::Path;

use cutec_diagnostics::{Diagnostic, SourceMap};

use crate::codes;
use crate::command_line::path_error;

/// The most bytes of a source file (E0008): the lexer's limit.
pub const MAX_SOURCE_BYTES: u64 = cutec_grammar::MAX_SOURCE_BYTES as u64;
/// The most bytes of a tuning file (`--tuning`, `cutec tune -o`): far more than any number of entries a tuning
/// run writes.
pub const MAX_TUNING_BYTES: u64 = 16 << 20;
/// The most bytes of a manifest read by `cutec run`.
pub const MAX_MANIFEST_BYTES: u64 = 16 << 20;
/// The most bytes of a PTX or cubin module read by `cutec run`.
pub const MAX_MODULE_BYTES: u64 = 256 << 20;

/// Why a capped read failed.
#[derive(Debug)]
pub enum ReadError {
    Io(std::io::Error),
    /// The file has more than `limit` bytes (it may be endless: only `limit + 1` were read).
    TooLarge {
        limit: u64,
    },
    /// The file is not UTF-8 (for text).
    NotUtf8,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::TooLarge { limit } => write!(f, "the file is longer than the limit of {limit} bytes"),
            ReadError::NotUtf8 => write!(f, "stream did not contain valid UTF-8"),
        }
    }
}

impl std::error::Error for ReadError {}

impl From<ReadError> for std::io::Error {
    fn from(e: ReadError) -> std::io::Error {
        match e {
            ReadError::Io(e) => e,
            ReadError::TooLarge { .. } => std::io::Error::new(std::io::ErrorKind::FileTooLarge, e.to_string()),
            ReadError::NotUtf8 => std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
        }
    }
}

/// The bytes of `path`, at most `limit` of them.
pub fn read_capped(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit });
    }
    Ok(bytes)
}

/// The text of `path`, at most `limit` bytes of UTF-8.
pub fn read_text_capped(path: &Path, limit: u64) -> Result<String, ReadError> {
    String::from_utf8(read_capped(path, limit)?).map_err(|_| ReadError::NotUtf8)
}

/// The text of the source file `path` as the compiler reads it (`cutec build`, the Python package): at most
/// [`MAX_SOURCE_BYTES`] of UTF-8. A longer file (or an endless one, such as `/dev/zero`) is E0008, one that cannot
/// be read (missing, a folder, not UTF-8) E0400, both anchored on its path in the returned map.
pub fn read_source(path: &Path) -> Result<String, Box<(SourceMap, Diagnostic)>> {
    let mut map = SourceMap::new();
    let d = match read_text_capped(path, MAX_SOURCE_BYTES) {
        Ok(s) => return Ok(s),
        Err(ReadError::TooLarge { limit }) => {
            let message = format!("`{}` has more than the limit of {limit} bytes of a source file", path.display());
            path_error(&mut map, codes::SOURCE_TOO_LARGE, message, path, "longer than the limit")
                .with_help("split the file, or generate loops instead of repeated code")
        }
        Err(e) => {
            let message = format!("cannot read `{}`: {e}", path.display());
            path_error(&mut map, codes::READ_FAILED, message, path, "cannot be read")
        }
    };
    Err(Box::new((map, d)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_read_up_to_the_cap() {
        if Path::new("/dev/zero").exists() {
            assert!(matches!(read_capped(Path::new("/dev/zero"), 1000), Err(ReadError::TooLarge { limit: 1000 })));
        }
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("f");
        std::fs::write(&path, "abc").expect("written");
        assert_eq!(read_text_capped(&path, 3).expect("at the cap"), "abc");
        assert!(matches!(read_text_capped(&path, 2), Err(ReadError::TooLarge { limit: 2 })));
        std::fs::write(&path, [0xff, 0xfe]).expect("written");
        assert!(matches!(read_text_capped(&path, 10), Err(ReadError::NotUtf8)));
    }
}
