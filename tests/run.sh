#!/usr/bin/env bash
# The whole test suite, exactly as CI runs it, from a fresh clone.
# It installs what it needs (idempotently) and fails loudly on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*" >&2; }

step "toolchain"
for component in rustfmt clippy; do
  if ! rustup component list --installed 2>/dev/null | grep -q "^$component"; then
    rustup component add "$component"
  fi
done
if ! cargo nextest --version >/dev/null 2>&1; then
  cargo install cargo-nextest --locked
fi

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
