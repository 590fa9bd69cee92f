//! Every example and standard-library file parses without errors.

use crate::common::{cute_files, describe};
use cutec_grammar::{parse, print_ast};

#[test]
fn examples_and_stdlib_parse_cleanly() {
    let files: Vec<_> = cute_files("examples").into_iter().chain(cute_files("stdlib")).collect();
    assert!(files.len() >= 9, "expected the examples and the stdlib, found {files:?}");
    for path in files {
        let src = std::fs::read_to_string(&path).unwrap_or_default();
        let (module, errors) = parse(&src);
        assert!(errors.is_empty(), "{}: {:#?}", path.display(), describe(&errors));
        assert!(!module.items.is_empty(), "{}: no items", path.display());
        if std::env::var_os("PRINT_AST").is_some() {
            println!("==== {}\n{}", path.display(), print_ast(&module));
        }
    }
}
