//! `cutec._cutec.compile_source`: the driver's `build_source` in-process, its diagnostics rendered as the CLI
//! renders them (text without colour, and the JSON lines of `--error-format=json` for the data).

use cutec::DefineValue;
use cutec::build::{BuildOptions, build_source};
use cutec::files;
use cutec_codegen::OptLevel;
use cutec_diagnostics::{Diagnostic, SourceMap, render_json, render_plain};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt};

/// The stack of the thread that compiles: the same as the `cutec` binary's (see its `main.rs`), since the
/// compiler recurses over trees whose depth the parser and the lowering bound, and a Python thread's stack may be
/// smaller than a debug build needs at those depths.
const STACK_BYTES: usize = 64 << 20;

/// Diagnostics as the CLI prints them: the text of `--error-format=human --color=never` and the JSON lines of
/// `--error-format=json`.
struct Rendered {
    text: String,
    json: String,
}

fn render(map: &SourceMap, diags: &[Diagnostic]) -> Rendered {
    let mut json = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = render_json(map, diags, &mut json);
    Rendered { text: render_plain(map, diags), json: String::from_utf8_lossy(&json).into_owned() }
}

enum Outcome {
    Built { ptx: String, manifest: String, ir: String, warnings: Rendered },
    Failed(Rendered),
}

fn define_value(name: &str, value: &Bound<'_, PyAny>) -> PyResult<DefineValue> {
    // `bool` is a subclass of `int` in Python: test it first.
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(DefineValue::Bool(b.is_true()));
    }
    if value.cast::<PyInt>().is_ok() {
        return value.extract::<i64>().map(DefineValue::Int).map_err(|_| {
            PyValueError::new_err(format!("define `{name}` = {value}: values are 64-bit signed integers"))
        });
    }
    let ty = value.get_type().name().map(|n| n.to_string()).unwrap_or_default();
    Err(PyTypeError::new_err(format!("define `{name}`: expected an int or a bool, got {ty}")))
}

/// Compiles `source` (named `name` in diagnostics) with the const generic `defines`, only `kernel` if given, at
/// LLVM optimisation level `opt_level`. Returns a dict: `ok` (bool); on success `ptx`, `manifest` (JSON text),
/// `ir` (the scheduled IR's text form, which `NativeKernel.run_cpu` interprets),
/// `warnings` and `warnings_json`; on failure `rendered` and `diagnostics_json` (one JSON object a line, as
/// `cutec check --error-format=json` prints them).
#[pyfunction]
#[pyo3(signature = (name, source, defines, kernel=None, opt_level=3))]
pub fn compile_source<'py>(
    py: Python<'py>,
    name: &str,
    source: &str,
    defines: Vec<(String, Bound<'py, PyAny>)>,
    kernel: Option<String>,
    opt_level: u8,
) -> PyResult<Bound<'py, PyDict>> {
    let defines = defines.iter().map(|(n, v)| Ok((n.clone(), define_value(n, v)?))).collect::<PyResult<Vec<_>>>()?;
    let opt_level = match opt_level {
        0 => OptLevel::O0,
        1 => OptLevel::O1,
        2 => OptLevel::O2,
        3 => OptLevel::O3,
        other => return Err(PyValueError::new_err(format!("opt_level is 0 to 3, got {other}"))),
    };
    let module_file =
        format!("{}.ptx", std::path::Path::new(name).file_stem().map_or("module".into(), |s| s.to_string_lossy()));
    let opts = BuildOptions { defines, opt_level, kernel, module_file, ..BuildOptions::default() };
    let (name, source) = (name.to_owned(), source.to_owned());
    let outcome = py.detach(move || {
        let work = move || match build_source(&name, &source, &opts) {
            Ok((checked, art)) => Outcome::Built {
                ptx: art.ptx,
                manifest: art.manifest.to_json_pretty(),
                ir: cutec_ir::print(&art.scheduled),
                warnings: render(&checked.map, &art.warnings),
            },
            Err(f) => Outcome::Failed(render(&f.map, &f.diagnostics)),
        };
        let thread = std::thread::Builder::new().name("cutec".into()).stack_size(STACK_BYTES);
        match thread.spawn(move || std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))) {
            Ok(handle) => match handle.join() {
                Ok(Ok(outcome)) => Ok(outcome),
                Ok(Err(panic)) | Err(panic) => Err(panic_message(&*panic)),
            },
            Err(e) => Err(format!("cannot start the compiler's thread: {e}")),
        }
    });
    let outcome = outcome.map_err(|m| {
        pyo3::exceptions::PyRuntimeError::new_err(format!(
            "internal compiler error: {m} (cutec should never panic; please report this with the input that caused it)"
        ))
    })?;
    let out = PyDict::new(py);
    match outcome {
        Outcome::Built { ptx, manifest, ir, warnings } => {
            out.set_item("ok", true)?;
            out.set_item("ptx", ptx)?;
            out.set_item("ir", ir)?;
            out.set_item("manifest", manifest)?;
            out.set_item("warnings", warnings.text)?;
            out.set_item("warnings_json", warnings.json)?;
        }
        Outcome::Failed(r) => {
            out.set_item("ok", false)?;
            out.set_item("rendered", r.text)?;
            out.set_item("diagnostics_json", r.json)?;
        }
    }
    Ok(out)
}

/// Reads the source file `path` as `cutec build` does: at most the lexer's limit of bytes of UTF-8. Returns a dict:
/// `ok`; on success `text`; on failure `rendered` and `diagnostics_json` of the CLI's diagnostic (E0008 for a file
/// over the limit, endless ones such as `/dev/zero` included; E0400 for one that cannot be read: missing, a folder,
/// not UTF-8).
#[pyfunction]
pub fn read_source<'py>(py: Python<'py>, path: std::path::PathBuf) -> PyResult<Bound<'py, PyDict>> {
    let read = py.detach(|| files::read_source(&path));
    let out = PyDict::new(py);
    match read {
        Ok(text) => {
            out.set_item("ok", true)?;
            out.set_item("text", text)?;
        }
        Err(e) => {
            let (map, d) = *e;
            let r = render(&map, &[d]);
            out.set_item("ok", false)?;
            out.set_item("rendered", r.text)?;
            out.set_item("diagnostics_json", r.json)?;
        }
    }
    Ok(out)
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// What an error code means (`cutec explain CODE`): `(title, explanation)`, or None for an unknown code.
#[pyfunction]
pub fn explain(code: &str) -> Option<(String, String)> {
    let tables = cutec::code_tables();
    cutec_diagnostics::explain(&tables, code).map(|c| (c.title.to_owned(), c.explanation.to_owned()))
}
