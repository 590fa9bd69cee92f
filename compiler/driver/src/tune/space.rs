//! The search space of `cutec tune`: `--space NAME=V1,V2` and `--shape M=4096,N=4096` as typed, checked against
//! the kernel's const generic parameters and dynamic dimensions, and the configurations they make.
//!
//! The configurations are the cartesian product of the `--space` values, in the order the options were given
//! (the last option varies fastest), with the kernel's default configuration first: the values the source (or a
//! `-D`) gives each swept parameter. The default is always measured, since it is the reference every other
//! configuration's output is compared with and the time each is measured against.

use crate::codes;
use crate::command_line::command_line_error;
use crate::{DefineValue, parse_const_define, parse_define};
use cutec_diagnostics::{Diagnostic, SourceMap};
use cutec_sema::{FunctionInfo, Scalar};

/// The most configurations one sweep takes: a typo like `BN=64,128,...` repeated over five parameters should be a
/// usage error, not hours of compiling.
pub const MAX_CONFIGURATIONS: usize = 4096;

/// `--space NAME=V1,V2,...` as parsed: the parameter and its values, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpaceArg {
    pub name: String,
    pub values: Vec<DefineValue>,
}

impl SpaceArg {
    /// The option as typed, for diagnostics.
    pub fn spelled(&self) -> String {
        let values: Vec<String> = self.values.iter().map(ToString::to_string).collect();
        format!("--space {}={}", self.name, values.join(","))
    }
}

/// Parses `NAME=V1,V2,...`: integers (as `-D` reads them) or `true`/`false`.
pub fn parse_space(s: &str) -> Result<SpaceArg, String> {
    let (name, values) = s.split_once('=').ok_or_else(|| format!("expected NAME=V1,V2,..., found `{s}`"))?;
    let mut parsed = Vec::new();
    for v in values.split(',') {
        if v.trim().is_empty() {
            return Err(format!("`{s}` has an empty value; separate values with single commas"));
        }
        let (n, value) = parse_const_define(&format!("{name}={v}"))?;
        if parsed.contains(&value) {
            return Err(format!("`{value}` is given twice for `{n}`"));
        }
        parsed.push(value);
    }
    Ok(SpaceArg { name: name.trim().to_owned(), values: parsed })
}

/// One shape: the values of the kernel's dynamic dimensions, in the order given (`--shape M=4096,N=4096,K=4096`).
pub type Shape = Vec<(String, i64)>;

/// Parses `M=4096,N=4096,K=4096`.
pub fn parse_shape(s: &str) -> Result<Shape, String> {
    let mut shape: Shape = Vec::new();
    for part in s.split(',') {
        let (name, value) = parse_define(part)?;
        if shape.iter().any(|(n, _)| *n == name) {
            return Err(format!("`{name}` is given twice in `{s}`"));
        }
        shape.push((name, value));
    }
    Ok(shape)
}

/// `M=4096,N=4096` for messages and tables.
pub fn spell_shape(shape: &[(String, i64)]) -> String {
    shape.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join(",")
}

/// `--flops 2*M*N*K`: a product of integers and dimension names, the work of one launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flops {
    pub text: String,
    pub factors: Vec<Factor>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Factor {
    Int(i64),
    Dim(String),
}

pub fn parse_flops(s: &str) -> Result<Flops, String> {
    let mut factors = Vec::new();
    for f in s.split('*').map(str::trim) {
        if f.is_empty() {
            return Err(format!("`{s}` is not a product such as 2*M*N*K"));
        }
        factors.push(match f.replace('_', "").parse::<i64>() {
            Ok(v) => Factor::Int(v),
            Err(_) if f.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => Factor::Dim(f.to_owned()),
            Err(_) => return Err(format!("`{f}` is neither an integer nor a dimension name")),
        });
    }
    Ok(Flops { text: s.to_owned(), factors })
}

impl Flops {
    /// The value at `shape` (as a float: 2*8192^3 is over 2^40 and the product of more names could overflow).
    pub fn at(&self, shape: &[(String, i64)]) -> Option<f64> {
        self.factors.iter().try_fold(1.0, |acc, f| match f {
            Factor::Int(v) => Some(acc * *v as f64),
            Factor::Dim(d) => shape.iter().find(|(n, _)| n == d).map(|(_, v)| acc * *v as f64),
        })
    }
}

/// The checked space: each swept parameter with its values and its default, and the shapes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Space {
    pub params: Vec<SpaceArg>,
    /// The default value of each swept parameter (`None` when the source gives none).
    pub defaults: Vec<Option<DefineValue>>,
    pub shapes: Vec<Shape>,
}

/// One configuration: a value for each swept parameter, in the order of [`Space::params`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub values: Vec<(String, DefineValue)>,
    /// The source's defaults (the reference of every other configuration).
    pub is_default: bool,
}

impl Config {
    /// `BN=256 STAGES=3`, or `(default)` for a sweep of no parameter.
    pub fn label(&self) -> String {
        if self.values.is_empty() {
            return "(default)".into();
        }
        self.values.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join(" ")
    }
}

impl Space {
    /// The configurations: the default first (when every swept parameter has one; otherwise the first of the
    /// product is the baseline), then the rest of the product in order.
    pub fn configurations(&self) -> Vec<Config> {
        let names: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
        let default: Option<Vec<DefineValue>> = self.defaults.iter().copied().collect();
        let mut out: Vec<Config> = Vec::new();
        if let Some(d) = &default {
            let values = names.iter().map(|n| n.to_string()).zip(d.iter().copied()).collect();
            out.push(Config { values, is_default: true });
        }
        let mut index = vec![0usize; self.params.len()];
        if self.params.iter().all(|p| !p.values.is_empty()) {
            loop {
                let values: Vec<DefineValue> = index.iter().zip(&self.params).map(|(&i, p)| p.values[i]).collect();
                if default.as_ref() != Some(&values) {
                    let values = names.iter().map(|n| n.to_string()).zip(values).collect();
                    out.push(Config { values, is_default: false });
                }
                // The last parameter varies fastest, like nested loops written in the options' order.
                let Some(k) = (0..index.len()).rev().find(|&k| index[k] + 1 < self.params[k].values.len()) else {
                    break;
                };
                index[k] += 1;
                index[k + 1..].iter_mut().for_each(|i| *i = 0);
            }
        }
        out
    }

    /// The number of configurations, without making them (saturating).
    pub fn count(&self) -> usize {
        self.params.iter().fold(1usize, |acc, p| acc.saturating_mul(p.values.len()))
    }
}

/// Checks `space` and `shapes` against `kernel`: every `--space` name is a const generic parameter of it and its
/// values have the parameter's type; every shape gives each dynamic dimension once; `fixed` (`-D`) sets no swept
/// parameter. Each error is a usage error located on the option as typed.
pub fn check_space(
    map: &mut SourceMap,
    kernel: &FunctionInfo,
    space: &[SpaceArg],
    fixed: &[(String, DefineValue)],
    shapes: &[Shape],
) -> Result<Space, Diagnostic> {
    let const_names: Vec<&str> = kernel.const_generics.iter().map(|c| c.name.as_str()).collect();
    let dims: Vec<&str> = kernel.dyn_dims.iter().map(|d| d.name.as_str()).collect();
    let mut defaults = Vec::new();
    for (k, arg) in space.iter().enumerate() {
        let option = arg.spelled();
        let error = |map: &mut SourceMap, message: String, label: &str| {
            command_line_error(map, codes::TUNE_OPTIONS, message, &[(&option, label)])
        };
        if space[..k].iter().any(|p| p.name == arg.name) {
            let d = command_line_error(
                map,
                codes::GIVEN_TWICE,
                format!("--space {} is given twice; give all its values in one option", arg.name),
                &[(&option, "given again here")],
            );
            return Err(d);
        }
        if let Some((_, v)) = fixed.iter().find(|(n, _)| *n == arg.name) {
            let define = format!("-D {}={v}", arg.name);
            return Err(command_line_error(
                map,
                codes::CONFLICTING_OPTIONS,
                format!("`{}` is both swept (--space) and fixed (-D); give one", arg.name),
                &[(&option, "sweeps it"), (&define, "fixes it")],
            ));
        }
        let Some(c) = kernel.const_generics.iter().find(|c| c.name == arg.name) else {
            let (message, label) = if dims.contains(&arg.name.as_str()) {
                (
                    format!(
                        "`{}` is a dynamic dimension of `{}`, not a const parameter: give its values with --shape",
                        arg.name, kernel.name
                    ),
                    "a dynamic dimension",
                )
            } else if kernel.params.iter().any(|p| p.name == arg.name) {
                (format!("`{}` is a parameter of `{}`, not a const parameter", arg.name, kernel.name), "a parameter")
            } else {
                (format!("kernel `{}` has no const parameter `{}`", kernel.name, arg.name), "no such const parameter")
            };
            let mut d = error(map, message, label);
            let suggestion = cutec_diagnostics::suggest(&arg.name, const_names.iter().copied());
            if !dims.contains(&arg.name.as_str())
                && let Some(s) = suggestion
            {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            return Err(if const_names.is_empty() {
                d.with_note(format!("`{}` has no const parameter to tune", kernel.name))
            } else {
                d.with_note(format!("the const parameters of `{}` are: {}", kernel.name, const_names.join(", ")))
            });
        };
        let is_bool = c.ty == Scalar::Bool;
        if let Some(bad) = arg.values.iter().find(|v| matches!(v, DefineValue::Bool(_)) != is_bool) {
            let ty = if is_bool { "bool" } else { "int" };
            return Err(error(map, format!("`{}` is an {ty}; `{bad}` is not", arg.name), "a value of another type"));
        }
        defaults.push(c.value.map(|v| if is_bool { DefineValue::Bool(v != 0) } else { DefineValue::Int(v) }));
    }
    let mut ordered = Vec::new();
    for (k, shape) in shapes.iter().enumerate() {
        let option = format!("--shape {}", spell_shape(shape));
        let error = |map: &mut SourceMap, message: String, label: &str| {
            command_line_error(map, codes::TUNE_OPTIONS, message, &[(&option, label)])
        };
        if let Some((name, _)) = shape.iter().find(|(n, _)| !dims.contains(&n.as_str())) {
            let what = if const_names.contains(&name.as_str()) {
                format!("`{name}` is a const parameter of `{}`: sweep it with --space {name}=...", kernel.name)
            } else {
                format!("kernel `{}` has no dynamic dimension `{name}`", kernel.name)
            };
            let mut d = error(map, what, "no such dimension");
            if let Some(s) = cutec_diagnostics::suggest(name, dims.iter().copied()) {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            return Err(d.with_note(format!("the dimensions of `{}` are: {}", kernel.name, dims.join(", "))));
        }
        let missing: Vec<&str> = dims.iter().copied().filter(|d| !shape.iter().any(|(n, _)| n == d)).collect();
        if !missing.is_empty() {
            return Err(error(
                map,
                format!(
                    "this shape gives no value of {}",
                    missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
                ),
                "incomplete",
            )
            .with_note(format!("a shape gives every dimension of `{}`: {}", kernel.name, dims.join(", "))));
        }
        // The same shape typed in another order is the same key.
        let sorted = |s: &Shape| {
            let mut s = s.clone();
            s.sort();
            s
        };
        if ordered[..k.min(ordered.len())].iter().any(|o: &Shape| sorted(o) == sorted(shape)) {
            let d = command_line_error(
                map,
                codes::GIVEN_TWICE,
                format!("--shape {} is given twice", spell_shape(shape)),
                &[(&option, "given again here")],
            );
            return Err(d);
        }
        ordered.push(shape.clone());
    }
    let space = Space { params: space.to_vec(), defaults, shapes: ordered };
    if space.count() > MAX_CONFIGURATIONS {
        let spelled: Vec<String> = space.params.iter().map(SpaceArg::spelled).collect();
        let parts: Vec<(&str, &str)> = spelled.iter().map(|s| (s.as_str(), "")).collect();
        let d = command_line_error(
            map,
            codes::TUNE_OPTIONS,
            format!(
                "the space has {} configurations; a sweep takes at most {MAX_CONFIGURATIONS}",
                space.params.iter().map(|p| p.values.len().to_string()).collect::<Vec<_>>().join(" x ")
            ),
            &parts,
        );
        return Err(d.with_help("sweep fewer values, or tune in stages (fix the parameters found with -D)"));
    }
    Ok(space)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space(args: &[&str], defaults: &[Option<i64>]) -> Space {
        Space {
            params: args.iter().map(|a| parse_space(a).expect("valid")).collect(),
            defaults: defaults.iter().map(|d| d.map(DefineValue::Int)).collect(),
            shapes: Vec::new(),
        }
    }

    fn labels(s: &Space) -> Vec<String> {
        s.configurations().iter().map(|c| format!("{}{}", c.label(), if c.is_default { " *" } else { "" })).collect()
    }

    #[test]
    fn parses_spaces_shapes_and_flops() {
        assert_eq!(
            parse_space("BN=128, 0x100").map(|s| s.values),
            Ok(vec![DefineValue::Int(128), DefineValue::Int(256)])
        );
        assert_eq!(parse_space("FAST=true,false").map(|s| s.spelled()), Ok("--space FAST=true,false".into()));
        assert_eq!(parse_space("BN"), Err("expected NAME=V1,V2,..., found `BN`".into()));
        assert_eq!(
            parse_space("BN=128,,256"),
            Err("`BN=128,,256` has an empty value; separate values with single commas".into())
        );
        assert_eq!(parse_space("BN=128,128"), Err("`128` is given twice for `BN`".into()));
        assert_eq!(parse_space("BN=big"), Err("`big` is not an integer".into()));
        assert_eq!(parse_shape("M=4096,N=2_048"), Ok(vec![("M".into(), 4096), ("N".into(), 2048)]));
        assert_eq!(parse_shape("M=1,M=2"), Err("`M` is given twice in `M=1,M=2`".into()));
        let f = parse_flops("2*M*N*K").expect("a product");
        assert_eq!(f.at(&parse_shape("M=2,N=3,K=4").expect("shape")), Some(48.0));
        assert_eq!(f.at(&parse_shape("M=2,N=3").expect("shape")), None);
        assert!(parse_flops("2*M+N").is_err());
        assert!(parse_flops("2**M").is_err());
    }

    #[test]
    fn the_default_comes_first_and_once() {
        // The default (256, 3) is inside the product: measured once, first.
        let s = space(&["BN=128,256", "STAGES=3,4"], &[Some(256), Some(3)]);
        assert_eq!(labels(&s), ["BN=256 STAGES=3 *", "BN=128 STAGES=3", "BN=128 STAGES=4", "BN=256 STAGES=4"]);
        // Outside the product: added.
        let s = space(&["BN=128", "STAGES=4,5"], &[Some(256), Some(3)]);
        assert_eq!(labels(&s), ["BN=256 STAGES=3 *", "BN=128 STAGES=4", "BN=128 STAGES=5"]);
        assert_eq!(s.count(), 2);
        // No default for a swept parameter: the product alone, its first configuration the baseline.
        let s = space(&["BN=128,256"], &[None]);
        assert_eq!(labels(&s), ["BN=128", "BN=256"]);
        // No space: the default alone.
        assert_eq!(labels(&space(&[], &[])), ["(default) *"]);
    }

    #[test]
    fn products_are_in_option_order() {
        let s = space(&["A=1,2,3", "B=1,2", "C=7"], &[Some(9), Some(9), Some(9)]);
        let l = labels(&s);
        assert_eq!(l.len(), 7);
        assert_eq!(l[1..], ["A=1 B=1 C=7", "A=1 B=2 C=7", "A=2 B=1 C=7", "A=2 B=2 C=7", "A=3 B=1 C=7", "A=3 B=2 C=7"]);
    }
}
