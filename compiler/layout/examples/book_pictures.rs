//! Regenerates the layout pictures of the book, `book/src/img/layout-*.svg`, from `doc::BOOK_PICTURES`.
//! Run from anywhere: `cargo run -p cutec-layout --example book_pictures`. The test `book::pictures_are_fresh`
//! fails when a committed picture differs from what this writes.

use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../book/src/img");
    std::fs::create_dir_all(&dir)?;
    for (file, svg) in cutec_layout::book_pictures()? {
        std::fs::write(dir.join(&file), svg)?;
        println!("wrote book/src/img/{file}");
    }
    Ok(())
}
