//! `--tuning FILE` of `cutec build` and `cutec run`: the const values `cutec tune` found for this source, kernel,
//! device and shape, as `-D` values, with a note saying which entry is used or that none matches.

use crate::cli::{Reporter, read};
use cutec::codes;
use cutec::command_line::{command_line_error, path_error};
use cutec::tune::file::{Selection, TuningFile, source_hash};
use cutec::{DefineValue, check_source};
use cutec_diagnostics::{Severity, SourceMap};
use std::path::Path;
use std::process::ExitCode;

/// What to look up.
pub(crate) struct Request<'a> {
    pub file: &'a Path,
    pub kernel: Option<&'a str>,
    /// The values of the kernel's dynamic dimensions.
    pub shape: &'a [(String, i64)],
    /// The device's name; `None` when unknown (a build without a GPU): then entries for several devices are
    /// ambiguous unless `device_known` says the user chose.
    pub device: Option<&'a str>,
    pub device_known: bool,
}

/// The `-D` values to compile `source_path` with: the entry's consts for `request`, then `explicit` over them.
/// Without a matching entry, `explicit` alone (with a warning saying why). Errors are reported: the exit status.
pub(crate) fn tuned_defines(
    reporter: &Reporter,
    source_path: &Path,
    request: &Request<'_>,
    explicit: &[(String, DefineValue)],
) -> Result<Vec<(String, DefineValue)>, ExitCode> {
    let Some(source) = read(reporter, source_path) else { return Err(ExitCode::from(1)) };
    let option = format!("--tuning {}", request.file.display());
    let mut map = SourceMap::new();
    let file = TuningFile::read(request.file).map_err(|e| {
        let message = format!("cannot use the tuning file `{}`: {e}", request.file.display());
        let d = path_error(&mut map, codes::TUNING_FILE, message, request.file, "not a usable tuning file");
        reporter.fail(&map, &[d])
    })?;
    let kernel = match request.kernel {
        Some(k) => k.to_owned(),
        None => {
            // The file's kernels, to name the one the entry is for. A file that does not check is left to the
            // build, which reports its errors.
            let checked = check_source(&source_path.display().to_string(), &source, explicit);
            let names: Vec<String> = checked
                .output
                .program
                .kernels()
                .filter(|k| k.module == cutec_sema::ModuleId::ROOT)
                .map(|k| k.name.clone())
                .collect();
            match names.as_slice() {
                [one] => one.clone(),
                [] => return Ok(explicit.to_vec()),
                several => {
                    return Err(reporter.usage(
                        codes::CONFLICTING_OPTIONS,
                        format!(
                            "the file has several kernels ({}); say which one is tuned with --kernel",
                            several.join(", ")
                        ),
                        &[(&option, "tunes one kernel")],
                    ));
                }
            }
        }
    };
    let shape_text: Vec<String> = request.shape.iter().map(|(n, v)| format!("{n}={v}")).collect();
    let shape_text = shape_text.join(",");
    let device_text = request.device.map_or_else(String::new, |d| format!(" on {d}"));
    let hash = source_hash(&source);
    let mut note = |message: String, severity: Severity, notes: Vec<String>| {
        let mut d = command_line_error(&mut map, codes::TUNING_USED, message, &[(&option, "")]);
        d.severity = severity;
        d.labels.iter_mut().for_each(|l| l.message = "from this file".into());
        d.notes = notes;
        reporter.report(&map, &[d]);
    };
    match file.select(&hash, &kernel, request.device, request.shape) {
        Selection::Found(entry) => {
            let mut defines = entry.defines();
            let mut overridden = Vec::new();
            for (n, v) in explicit {
                match defines.iter_mut().find(|(m, _)| m == n) {
                    Some(slot) => {
                        overridden.push(format!("-D {n}={v} overrides the file's {n}={}", slot.1));
                        slot.1 = *v;
                    }
                    None => defines.push((n.clone(), *v)),
                }
            }
            note(
                format!(
                    "tuning: `{kernel}` at {shape_text} on {}: {} ({:.1} us; the default {:.1} us)",
                    entry.device,
                    entry.label(),
                    entry.time_us,
                    entry.default_time_us
                ),
                Severity::Note,
                overridden,
            );
            Ok(defines)
        }
        Selection::None { tuned, other_sources } => {
            let mut notes = Vec::new();
            if !tuned.is_empty() {
                notes.push(format!("the file has `{kernel}` of this source at: {}", tuned.join("; ")));
            }
            if other_sources {
                notes.push(format!("the file has entries for `{kernel}` of another text of its source: edited since tuned?"));
            }
            note(
                format!(
                    "tuning: no entry for `{kernel}` at {shape_text}{device_text} in `{}`: the source's defaults are used",
                    request.file.display()
                ),
                Severity::Warning,
                notes,
            );
            Ok(explicit.to_vec())
        }
        Selection::Ambiguous(devices) if !request.device_known => Err(reporter.usage(
            codes::TUNE_OPTIONS,
            format!("the tuning file has `{kernel}` at {shape_text} for several devices ({}); choose one with --tuning-device", devices.join(", ")),
            &[(&option, "several devices")],
        )),
        // Two entries of one key: only a hand-edited file has them; the first is what a merge would have replaced.
        Selection::Ambiguous(_) => Ok(explicit.to_vec()),
    }
}
