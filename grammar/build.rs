//! Generates the parser from `src/grammar.lalrpop` into `$OUT_DIR`.
fn main() {
    if let Err(e) = lalrpop::Configuration::new().use_cargo_dir_conventions().emit_rerun_directives(true).process() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
