#!/usr/bin/env bash
# The project's test command: formatting, lints, then every test of the workspace (unit tests and
# integration tests over ../shared/data). Python reference tools come from .venv (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
# Examples are type-checked by clippy above; building and linking them for the tests (17
# binaries, ~40 CPU-seconds) would test nothing more, so the test run leaves them out.
cargo test --workspace --lib --bins --tests
cargo test --workspace --doc
