#!/usr/bin/env bash
# The project's test command: formatting, lints, then every test of the workspace (unit tests and
# integration tests over ../shared/data). Python reference tools come from .venv (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
# The developer tools (precedent-tools) are type-checked by clippy above; linking their nine
# binaries for the test run would test nothing more, so it leaves that crate out.
cargo test --workspace --exclude precedent-tools --lib --bins --tests
cargo test --workspace --doc
