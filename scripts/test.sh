#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what is missing, then formatting, lints and every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
. scripts/env.sh
# CUTEC_REQUIRE_CPP: the differential test against C++ CuTe (compiler/layout) must run, never skip.
export INSTA_UPDATE=no CARGO_TERM_COLOR=never CUTEC_REQUIRE_CPP=1
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
# The book renders, and every picture a page links to exists.
# (`-d` is relative to the current directory: the book goes to target/book of this checkout.)
mdbook build book -d "$PWD/target/book" >/dev/null
[ -f target/book/index.html ] || { echo "book: mdbook wrote no target/book/index.html"; exit 1; }
missing=0
for img in $(grep -ohE 'img/[A-Za-z0-9_.-]+\.svg' target/book/*.html | sort -u); do
    [ -f "target/book/$img" ] || { echo "book: missing picture $img"; missing=1; }
done
[ "$missing" = 0 ]
echo "book: rendered to target/book"
cargo test --workspace --locked
# The Python package: maturin builds the native module (dev profile, in cargo's target folder: it reuses most of
# what `cargo test` built; the grammar and the crates above it build again, since the test build's dev-dependencies
# turn on more features of regex-automata) and its wheel; pip installs the wheel into a folder of its own, where
# pytest finds it.
target="${CARGO_TARGET_DIR:-target}"
rm -rf "$target/maturin" "$target/wheels" "$target/python"
maturin build --quiet --locked -m python/Cargo.toml -o "$target/wheels"
python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --target "$target/python" \
    "$target"/wheels/cutec-*.whl
PYTHONPATH="$(cd "$target/python" && pwd)" python3 -m pytest -q -p no:cacheprovider python/tests
