#!/usr/bin/env bash
# The MCP reference servers the end-to-end suite (tests/mcp.rs) runs Rein
# against, from the npm registry, pinned:
#
#   @modelcontextprotocol/server-everything   (stdio: dist/index.js stdio)
#   @modelcontextprotocol/server-filesystem   (dist/index.js <allowed dir>)
#   @modelcontextprotocol/server-memory       (dist/index.js: a knowledge graph
#                                              kept in a file beside its code
#                                              unless MEMORY_FILE_PATH says)
#
#   tests/mcp-servers/install.sh   # installs (or reuses) them; prints the folder
#
# The last (only) line on stdout is the absolute path of a folder holding
# `node_modules/` with the packages; progress and errors go to stderr.
#
# And, for the Streamable HTTP tests (server/mcp/tests/http.rs), the Python
# MCP SDK from PyPI, pinned, in a virtual environment:
#
#   tests/mcp-servers/install.sh python   # prints the venv's python
#
# The last (only) line on stdout is then the absolute path of the venv's
# `bin/python`, which imports `mcp` (with `MCPServer`, 2.x's FastMCP), in
# $(rein_test_cache)/mcp-servers/py-<key>, pip's cache beside it. Needs
# python3 (3.10 or later) with its venv module (Debian: apt-get install -y
# python3-venv).
# Everything lives in $(rein_test_cache)/mcp-servers (see
# tests/install-lib.sh), npm's own cache included, so nothing depends on
# ~/.npm. A cold install takes a few seconds with the registry reachable; a
# warm call returns at once.
#
# Idempotent and safe to run concurrently: installing happens under the
# suite's one install lock, in a temporary folder inside the cache, and the
# result is renamed into place only when complete and checked, so a killed
# run never leaves a half install that would be reused. Because installs
# appear atomically, the reuse check runs first without the lock, and again
# under it.
#
# Needs node and npm (Debian: apt-get install -y nodejs npm). Packages are
# installed with --ignore-scripts: nothing of theirs runs at install time.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../install-lib.sh
. "$HERE/../install-lib.sh"
# shellcheck source=../npm-lib.sh
. "$HERE/../npm-lib.sh"

# --- pins ---------------------------------------------------------------------
PACKAGES=(
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/server-memory@2026.8.31"
)
NPM_FLAGS=(--no-audit --no-fund --ignore-scripts --no-update-notifier --loglevel=warn)
# The `python` mode's pin, and how it is installed.
PY_PACKAGE="mcp==2.3.0"
PIP_FLAGS=(--no-input --disable-pip-version-check --only-binary=:all: --quiet)
# What each package must provide (relative to the install folder).
ENTRY_POINTS=(
  node_modules/@modelcontextprotocol/server-everything/dist/index.js
  node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
  node_modules/@modelcontextprotocol/server-memory/dist/index.js
)

say() { printf '[mcp-servers] %s\n' "$*" >&2; }
die() {
  printf '[mcp-servers] error: %s\n' "$*" >&2
  exit 1
}

CACHE="$(rein_test_cache)/mcp-servers"
mkdir -p "$CACHE/tmp"

KEY="$(npm_pin_key)"
DIR="$CACHE/$KEY"
py_pin_key() {
  { printf '%s\n' python "$PY_PACKAGE" "${PIP_FLAGS[@]}"; } | sha256sum | cut -c1-16
}

WORK="" # this run's temporary folder (inside the cache, for atomic renames)
cleanup() {
  [ -z "$WORK" ] || rm -rf "$WORK"
  install_unlock
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- python mode ---------------------------------------------------------------
# A venv with the pinned `mcp`, in $CACHE/py-<key>: made in a temporary folder
# of the cache and renamed into place (a venv's bin/python and site-packages
# work after a move; only the scripts' #! lines point at the old place, and
# none is used: everything runs as `bin/python ...`).
py_installed_ok() {
  local dir="$1"
  [ "$(cat "$dir/pins.key" 2>/dev/null)" = "$PY_KEY" ] && [ -x "$dir/bin/python" ]
}

install_python() {
  PY_KEY="$(py_pin_key)"
  local dir="$CACHE/py-$PY_KEY"
  if py_installed_ok "$dir"; then printf '%s\n' "$dir/bin/python"; return 0; fi
  command -v python3 >/dev/null || die "python3 is missing (Debian: apt-get install -y python3 python3-venv)"
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' 7>&- \
    || die "python3 is $(python3 --version 2>&1 7>&-); $PY_PACKAGE needs 3.10 or later"

  say "waiting for the install lock ($(rein_test_cache)/install.lock)"
  install_lock || die "cannot take the install lock"
  if py_installed_ok "$dir"; then printf '%s\n' "$dir/bin/python"; return 0; fi
  rm -rf "${CACHE:?}/tmp/"*
  WORK="$(mktemp -d "$CACHE/tmp/run.XXXXXX")"

  local start=$SECONDS log="$CACHE/install-python.log" out="$WORK/out" name version got
  : >"$log"
  say "making a venv with $PY_PACKAGE ($(python3 --version 2>&1 7>&-)); log: $log"
  run_logged "python3 -m venv (Debian: apt-get install -y python3-venv)" "$log" \
    python3 -m venv "$out"
  run_logged "pip install $PY_PACKAGE (PyPI reachable?)" "$log" \
    "$out/bin/python" -m pip install --cache-dir "$CACHE/pip-cache" "${PIP_FLAGS[@]}" "$PY_PACKAGE"
  name="${PY_PACKAGE%%==*}"
  version="${PY_PACKAGE##*==}"
  got="$("$out/bin/python" -c "import importlib.metadata as m; print(m.version('$name'))" 2>>"$log" 7>&-)" \
    || die "cannot read the version of $name (log: $log)"
  [ "$got" = "$version" ] || die "pip installed $name $got, $version pinned"
  "$out/bin/python" -c 'from mcp.server.mcpserver import MCPServer' >>"$log" 2>&1 7>&- \
    || die "the installed $name has no mcp.server.mcpserver.MCPServer (log: $log)"
  cp "$log" "$out/pip.log"
  printf '%s\n' "$PY_KEY" >"$out/pins.key"

  [ ! -e "$dir" ] || mv "$dir" "$WORK/old"
  mv "$out" "$dir"
  say "installed in $((SECONDS - start)) s: $dir"
  py_installed_ok "$dir" || die "the installed $dir does not pass its own check"
  "$dir/bin/python" -c 'import mcp' 7>&- || die "the venv does not work after its move: $dir"
  printf '%s\n' "$dir/bin/python"
}

usage() {
  echo "usage: $0           (installs or reuses the pinned MCP servers; prints their folder)" >&2
  echo "       $0 python    (installs or reuses a venv with $PY_PACKAGE; prints its python)" >&2
  exit 2
}
case "$#:${1:-}" in
  0:) npm_install rein-test-mcp-servers ;;
  1:python) install_python ;;
  *) usage ;;
esac
