//! `cutec run`'s errors as diagnostics: each [`RunError`] (and each [`RuntimeError`] inside one) has its code, and
//! through the code its exit class ([`crate::codes::exit_status`]). Errors about a file are anchored on its path,
//! errors about options on the options as typed (`--dim N=0`); errors of the GPU are about no text and have no
//! label.

use super::RunError;
use crate::codes;
use crate::command_line::{command_line_error, path_error};
use cutec_diagnostics::{Diagnostic, SourceMap};
use cutec_runtime::RuntimeError;

impl RunError {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            RunError::Io { .. } => codes::READ_FAILED,
            RunError::Write { .. } | RunError::Report(_) => codes::WRITE_FAILED,
            RunError::Manifest { .. } => codes::MANIFEST_INVALID,
            RunError::Npy { .. } => codes::NPY_INVALID,
            RunError::UnknownKernel { .. } => codes::UNKNOWN_KERNEL,
            RunError::Module { .. } => codes::MODULE_LOAD,
            RunError::Usage { .. } => codes::RUN_OPTIONS,
            RunError::Rejected { .. } => codes::ARGUMENT_REJECTED,
            RunError::Internal(_) => codes::INTERNAL,
            RunError::Runtime(e) => runtime_code(e),
            RunError::Interp(e) => cutec_interp::diag::to_diagnostic(e).code,
        }
    }

    /// The diagnostic to report; a pseudo-file spelling out the path or option it is about is added to `map`.
    pub fn to_diagnostic(&self, map: &mut SourceMap) -> Diagnostic {
        let code = self.code();
        let message = self.to_string();
        match self {
            RunError::Io { path, .. } => path_error(map, code, message, path, "cannot be read"),
            RunError::Write { path, .. } => path_error(map, code, message, path, "cannot be written"),
            RunError::Manifest { path, .. } => path_error(map, code, message, path, "not a valid manifest")
                .with_help("rebuild the module and its manifest together with `cutec build`"),
            RunError::Npy { path, .. } => path_error(map, code, message, path, "not usable for this parameter"),
            RunError::Module { path, .. } => path_error(map, code, message, path, "not a module"),
            RunError::UnknownKernel { name, available } => {
                let d = command_line_error(map, code, message, &[(&format!("--kernel {name}"), "no such kernel")]);
                match cutec_diagnostics::suggest(name, available.iter().map(String::as_str)) {
                    Some(s) => d.with_help(format!("did you mean `{s}`?")),
                    None => d,
                }
            }
            // Anchored on the options they are about, like an unusable `--input` file on its path.
            RunError::Usage { options, .. } | RunError::Rejected { options, .. } => {
                let parts: Vec<(&str, &str)> = options.iter().map(|(o, l)| (o.as_str(), l.as_str())).collect();
                command_line_error(map, code, message, &parts)
            }
            // About no text: standard output, or cutec itself.
            RunError::Report(_) | RunError::Internal(_) => Diagnostic::unlocated(code, message),
            RunError::Interp(e) => cutec_interp::diag::to_diagnostic(e),
            RunError::Runtime(e) => {
                let d = Diagnostic::unlocated(code, message);
                match e {
                    RuntimeError::DriverNotFound => d.with_help("`cutec run` needs an NVIDIA GPU and its driver"),
                    RuntimeError::Cuda(c) if c.name.contains("ILLEGAL_ADDRESS") => d.with_help(
                        "an access out of bounds is the usual cause; run under `compute-sanitizer` to find it",
                    ),
                    _ => d,
                }
            }
        }
    }
}

/// The code of an error of the runtime (an exhaustive match: a new kind of error needs its code).
fn runtime_code(e: &RuntimeError) -> &'static str {
    match e {
        RuntimeError::DriverNotFound
        | RuntimeError::Cuda(_)
        | RuntimeError::SharedMemory { .. }
        | RuntimeError::Tensor { .. } => codes::GPU_ERROR,
        RuntimeError::ModuleLoad { .. }
        | RuntimeError::PtxNul { .. }
        | RuntimeError::NotABinary { .. }
        | RuntimeError::TargetMismatch { .. }
        | RuntimeError::KernelNotInModule { .. } => codes::MODULE_LOAD,
        RuntimeError::UnknownKernel { .. } => codes::UNKNOWN_KERNEL,
        RuntimeError::Argument { .. } => codes::ARGUMENT_REJECTED,
        RuntimeError::Manifest(_) => codes::MANIFEST_INVALID,
        // What the runtime cannot do with these options (the launch overhead of a cluster launch).
        RuntimeError::Unsupported(_) => codes::RUN_OPTIONS,
        RuntimeError::OutOfDeviceMemory { .. } => codes::OUT_OF_DEVICE_MEMORY,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn every_error_has_an_explained_code_and_a_class() {
        let io = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let path = PathBuf::from("m/nothere.ptx");
        let cases = [
            (RunError::Io { path: path.clone(), source: io() }, "E0400", 1),
            (RunError::Write { path: path.clone(), source: io() }, "E0408", 1),
            (RunError::Npy { path: path.clone(), message: "bad".into() }, "E0421", 1),
            (RunError::UnknownKernel { name: "cpy".into(), available: vec!["copy".into()] }, "E0405", 2),
            (
                RunError::Usage { message: "no dimension `Q`".into(), options: vec![("--dim Q=4".into(), "".into())] },
                "E0422",
                2,
            ),
            (
                RunError::Rejected { message: "rank".into(), options: vec![("--input x=x.npy".into(), "".into())] },
                "E0424",
                1,
            ),
            (RunError::Internal("count".into()), "E0402", 1),
            (RunError::Runtime(RuntimeError::DriverNotFound), "E0425", 1),
            (RunError::Runtime(RuntimeError::PtxNul { offset: 3 }), "E0423", 1),
        ];
        let tables = crate::code_tables();
        for (e, code, class) in cases {
            let mut map = SourceMap::new();
            let d = e.to_diagnostic(&mut map);
            assert_eq!(d.code, code, "{e}");
            assert!(cutec_diagnostics::explain(&tables, code).is_some(), "{code} is explained");
            assert_eq!(codes::exit_status(std::slice::from_ref(&d)), class, "{e}");
            if let Some(l) = d.primary() {
                assert!(l.span.end as usize <= map.source(l.file).len());
            }
        }
        // An error about options points at the first one, labelled.
        let mut map = SourceMap::new();
        let options = vec![("--dim M=4".into(), "contradicts".into()), ("--input x=x.npy".into(), "x.shape[0]".into())];
        let d = RunError::Usage { message: "m".into(), options }.to_diagnostic(&mut map);
        let l = d.primary().expect("a usage error is anchored on its option");
        assert_eq!((&map.source(l.file)[l.span.range()], l.message.as_str()), ("--dim M=4", "contradicts"));
        assert_eq!(&map.source(d.labels[1].file)[d.labels[1].span.range()], "--input x=x.npy");
        let mut map = SourceMap::new();
        let d = RunError::Io { path: path.clone(), source: io() }.to_diagnostic(&mut map);
        let l = d.primary().expect("a file error is anchored on its path");
        assert_eq!(&map.source(l.file)[l.span.range()], "m/nothere.ptx");
        let d = RunError::UnknownKernel { name: "cpy".into(), available: vec!["copy".into()] }.to_diagnostic(&mut map);
        assert_eq!(d.help, ["did you mean `copy`?"]);
    }
}
