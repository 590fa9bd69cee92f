//! The front end never panics, on any input: lexing, parsing, both printers and checking return text, a tree and
//! diagnostics. Every error diagnostic has a primary label inside its file, and rendering them never panics.
#![no_main]

use cutec_diagnostics::SourceMap;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else { return };

    let (module, _errors) = cutec_grammar::parse(source);
    let _ = cutec_grammar::print_ast(&module);
    let _ = cutec_grammar::print_tokens(source);

    // As `cutec::check_source` does (the driver crate links LLVM, so it is not a dependency here).
    let mut map = SourceMap::new();
    let root = map.add("fuzz.cute", source);
    let output = cutec_sema::check(&mut map, root, &[]);

    for d in output.diagnostics.iter().filter(|d| d.is_error()) {
        let Some(primary) = d.primary() else {
            panic!("{} `{}` has no primary label: {d:?}", d.code, d.message);
        };
        let len = map.source(primary.file).len();
        assert!(
            primary.span.start <= primary.span.end && primary.span.end as usize <= len,
            "{} `{}`: primary label {:?} is outside its file `{}` ({len} bytes): {d:?}",
            d.code,
            d.message,
            primary.span,
            map.name(primary.file),
        );
    }
    // What `cutec check` prints; rendering never panics either.
    let _ = cutec_diagnostics::render_plain(&map, &output.diagnostics);
});
