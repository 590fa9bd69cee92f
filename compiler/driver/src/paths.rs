//! Whether two paths name one file: what keeps an output from overwriting an input (`build -o`, `run --output`).

use std::path::{Path, PathBuf};

/// Whether `a` and `b` name the same file. When both exist, by the file's identity (device and inode on Unix), so
/// that a hard link, a symbolic link or another spelling of the input is seen as the input; otherwise by their
/// absolute, normalized text (a file that does not exist yet is the same as a path only when they are spelled
/// alike once `.` and `..` are applied).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => same_identity(&x, &y, a, b),
        _ => match (std::path::absolute(a), std::path::absolute(b)) {
            (Ok(x), Ok(y)) => normalized(&x) == normalized(&y),
            _ => a == b,
        },
    }
}

#[cfg(unix)]
fn same_identity(x: &std::fs::Metadata, y: &std::fs::Metadata, _: &Path, _: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    x.dev() == y.dev() && x.ino() == y.ino()
}

/// Without inode numbers, the resolved paths (hard links are then not recognised).
#[cfg(not(unix))]
fn same_identity(_: &std::fs::Metadata, _: &std::fs::Metadata, a: &Path, b: &Path) -> bool {
    matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
}

/// `p` without `.` and with each `..` applied to the component before it (lexically: symbolic links are resolved
/// only for files that exist, by their identity).
fn normalized(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::same_file;

    #[test]
    fn a_hard_link_a_symbolic_link_and_another_spelling_are_the_same_file() {
        let dir = std::env::temp_dir().join(format!("cutec-same-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let input = dir.join("k.cute");
        std::fs::write(&input, "kernel").expect("write");
        let hard = dir.join("alias.ptx");
        std::fs::hard_link(&input, &hard).expect("hard link");
        assert!(same_file(&hard, &input), "a hard link is the input");
        #[cfg(unix)]
        {
            let soft = dir.join("soft.ptx");
            std::os::unix::fs::symlink(&input, &soft).expect("symlink");
            assert!(same_file(&soft, &input), "a symbolic link is the input");
        }
        assert!(same_file(&dir.join("sub/../k.cute"), &input));
        assert!(same_file(&dir.join("./k.cute"), &input));
        let other = dir.join("other.cute");
        std::fs::write(&other, "kernel").expect("write");
        assert!(!same_file(&other, &input), "equal contents are not the same file");
        assert!(!same_file(&dir.join("new.ptx"), &input), "a file not yet written is not the input");
        assert!(same_file(&dir.join("new.ptx"), &dir.join("./new.ptx")), "nor is it another name for itself");
        std::fs::remove_dir_all(&dir).ok();
    }
}
