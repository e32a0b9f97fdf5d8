#!/usr/bin/env bash
# The whole test suite, exactly as CI runs it, from a fresh clone.
# It installs what it needs (idempotently) and fails loudly on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*" >&2; }

step "prerequisites (rustfmt, clippy, cargo-nextest, python3 with venv and pip)"
# Under the suite's one install lock, like every first-use install of the
# tests (tests/install-lib.sh); tests/cold-start.sh proves they work from
# an empty HOME, several at once.
./tests/prerequisites.sh

step "format"
cargo fmt --all --check

step "lint"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "build (the end-to-end suites run the real binary)"
cargo build --workspace --locked --bins

step "tests"
cargo nextest run --workspace --locked

step "doc tests"
cargo test --workspace --locked --doc

step "all green"
