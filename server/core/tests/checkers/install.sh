#!/usr/bin/env bash
# The real checkers the diagnostic tests run (server/core/tests/fix_error*.rs),
# pinned: pyright and TypeScript from the npm registry, mypy from PyPI.
#
#   server/core/tests/checkers/install.sh   # installs (or reuses); prints the folder
#
# The last (only) line on stdout is the absolute path of a folder holding
#   node_modules/.bin/pyright, node_modules/.bin/tsc   (npm, --ignore-scripts)
#   mypy/bin/mypy                                      (pip --target mypy, with a
#                                                       small launcher script)
# Progress and errors go to stderr. Everything lives in
# $(rein_test_cache)/checkers (tests/install-lib.sh), npm's cache included.
#
# Idempotent and safe to run concurrently: the suite's one install lock, a
# temporary folder inside the cache renamed into place once complete and
# checked (tests/npm-lib.sh), so a killed run never leaves a half install.
# cargo is the toolchain's own (rustup), not installed here.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../../.." && pwd)"
# shellcheck source=../../../../tests/install-lib.sh
. "$REPO/tests/install-lib.sh"
# shellcheck source=../../../../tests/npm-lib.sh
. "$REPO/tests/npm-lib.sh"

# --- pins ---------------------------------------------------------------------
PACKAGES=(
  "pyright@1.1.414"
  "typescript@5.9.3"
)
MYPY="mypy==2.4.1"
NPM_FLAGS=(--no-audit --no-fund --ignore-scripts --no-update-notifier --loglevel=warn)
ENTRY_POINTS=(
  node_modules/pyright/index.js
  node_modules/typescript/bin/tsc
)

say() { printf '[checkers] %s\n' "$*" >&2; }
die() {
  printf '[checkers] error: %s\n' "$*" >&2
  exit 1
}

CACHE="$(rein_test_cache)/checkers"
mkdir -p "$CACHE/tmp"
KEY="$(printf '%s\n' "$(npm_pin_key)" "$MYPY" | sha256sum | cut -c1-16)"
DIR="$CACHE/$KEY"

WORK=""
cleanup() {
  [ -z "$WORK" ] || rm -rf "$WORK"
  install_unlock
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mypy_ok() { [ -x "$1/mypy/bin/mypy" ] && "$1/mypy/bin/mypy" --version >/dev/null 2>&1 7>&-; }

[ "$#" -eq 0 ] || { echo "usage: $0   (installs or reuses the pinned checkers; prints their folder)" >&2; exit 2; }
if npm_installed_ok "$DIR" && mypy_ok "$DIR"; then printf '%s\n' "$DIR"; exit 0; fi

# npm first (its own lock and rename), then mypy into the same folder, under
# the lock again: a folder without a working mypy is completed, not reused.
npm_install rein-test-checkers >/dev/null
install_lock || die "cannot take the install lock"
if ! mypy_ok "$DIR"; then
  command -v python3 >/dev/null || die "python3 is missing"
  WORK="$(mktemp -d "$CACHE/tmp/mypy.XXXXXX")"
  say "installing $MYPY with pip; log: $CACHE/install.log"
  run_logged "pip install of $MYPY (PyPI reachable?)" "$CACHE/install.log" \
    python3 -m pip install --quiet --disable-pip-version-check --target "$WORK/mypy/lib" "$MYPY"
  mkdir -p "$WORK/mypy/bin"
  # A launcher that finds its own copy, whatever the working directory.
  cat >"$WORK/mypy/bin/mypy" <<'LAUNCHER'
#!/bin/sh
here="$(cd "$(dirname "$0")/.." && pwd)"
PYTHONPATH="$here/lib${PYTHONPATH:+:$PYTHONPATH}" exec python3 -P -m mypy "$@"
LAUNCHER
  chmod +x "$WORK/mypy/bin/mypy"
  rm -rf "$DIR/mypy"
  mv "$WORK/mypy" "$DIR/mypy"
  mypy_ok "$DIR" || die "the installed mypy does not run ($DIR/mypy)"
fi
printf '%s\n' "$DIR"
