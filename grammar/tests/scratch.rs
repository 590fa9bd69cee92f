//! Developer aid: `SCRATCH='source' cargo test --test main scratch -- --nocapture` renders the diagnostics of a
//! snippet. Does nothing without the variable.

use cutec_diagnostics::{SourceMap, render_plain};
use cutec_grammar::parse;

#[test]
fn scratch() {
    let Some(src) = std::env::var_os("SCRATCH") else { return };
    for src in src.to_string_lossy().split("\n===\n") {
        let (_, errors) = parse(src);
        let mut map = SourceMap::new();
        let file = map.add("scratch.cute", src.to_string());
        let diags: Vec<_> = errors.iter().map(|e| e.to_diagnostic(file)).collect();
        println!("{}", render_plain(&map, &diags));
    }
}
