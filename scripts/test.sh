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
mdbook build book -d ../target/book >/dev/null
missing=0
for img in $(grep -ohE 'img/[A-Za-z0-9_.-]+\.svg' target/book/*.html | sort -u); do
    [ -f "target/book/$img" ] || { echo "book: missing picture $img"; missing=1; }
done
[ "$missing" = 0 ]
echo "book: rendered to target/book"
cargo test --workspace --locked

