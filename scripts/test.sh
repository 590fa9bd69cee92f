#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what is missing, then formatting, lints and every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
. scripts/env.sh
export INSTA_UPDATE=no CARGO_TERM_COLOR=never
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
