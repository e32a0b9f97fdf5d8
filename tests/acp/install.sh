#!/usr/bin/env bash
# The official ACP TypeScript SDK, from the npm registry, pinned, for the
# Node test client (tests/acp/client.mjs) that drives `rein acp`:
#
#   @agentclientprotocol/sdk   (dist/v1/stable/acp.js: client(), ndJsonStream;
#                               dist/v1/schema/zod.gen.js: the protocol's zod
#                               schemas client.mjs validates the agent with)
#   zod                        (the SDK's peer dependency, pinned too: npm
#                               would otherwise pick the newest 4.x of the day)
#
#   tests/acp/install.sh   # installs (or reuses) it; prints the folder
#
# The last (only) line on stdout is the absolute path of a folder holding
# `node_modules/` with the package (and its dependencies); progress and
# errors go to stderr. Pass that folder to client.mjs:
#
#   node tests/acp/client.mjs "$(tests/acp/install.sh)" script.json
#
# Everything lives in $(rein_test_cache)/acp-client (see tests/install-lib.sh),
# npm's own cache included, so nothing depends on ~/.npm. A cold install takes
# a few seconds with the registry reachable; a warm call returns at once.
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
  "@agentclientprotocol/sdk@2.4.0"
  "zod@4.6.7"
)
NPM_FLAGS=(--no-audit --no-fund --ignore-scripts --no-update-notifier --loglevel=warn)
# What each package must provide (relative to the install folder): what
# client.mjs imports.
ENTRY_POINTS=(
  node_modules/@agentclientprotocol/sdk/dist/v1/stable/acp.js
  node_modules/@agentclientprotocol/sdk/dist/v1/schema/zod.gen.js
  node_modules/zod/package.json
)

say() { printf '[acp-client] %s\n' "$*" >&2; }
die() {
  printf '[acp-client] error: %s\n' "$*" >&2
  exit 1
}

CACHE="$(rein_test_cache)/acp-client"
mkdir -p "$CACHE/tmp"

KEY="$(npm_pin_key)"
DIR="$CACHE/$KEY"

WORK="" # this run's temporary folder (inside the cache, for atomic renames)
cleanup() {
  [ -z "$WORK" ] || rm -rf "$WORK"
  install_unlock
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

usage() {
  echo "usage: $0   (installs or reuses the pinned ACP SDK; prints its folder)" >&2
  exit 2
}
case "$#" in
  0) npm_install rein-test-acp-client ;;
  *) usage ;;
esac
