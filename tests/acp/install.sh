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

# The install's key: the pins and how they are installed. Other pins, other
# folder (an older one stays until removed by hand).
pin_key() {
  { printf '%s\n' "${PACKAGES[@]}" "${NPM_FLAGS[@]}"; } | sha256sum | cut -c1-16
}
KEY="$(pin_key)"
DIR="$CACHE/$KEY"

WORK="" # this run's temporary folder (inside the cache, for atomic renames)
cleanup() {
  [ -z "$WORK" ] || rm -rf "$WORK"
  install_unlock
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A complete install: the stamp written last, before the rename, and every
# entry point. Cheap: no process is started.
installed_ok() {
  local dir="$1" entry
  [ "$(cat "$dir/pins.key" 2>/dev/null)" = "$KEY" ] || return 1
  for entry in "${ENTRY_POINTS[@]}"; do
    [ -f "$dir/$entry" ] || return 1
  done
}

# Runs a command with its output in a log file (on failure the log's tail
# is shown). fd 7 (the lock) is not passed on, so a child left running
# after we are killed does not hold the lock.
run_logged() {
  local what="$1" log="$2"
  shift 2
  if ! "$@" >>"$log" 2>&1 7>&-; then
    tail -n 40 "$log" >&2 || true
    die "$what failed (full log: $log)"
  fi
}

install() {
  if installed_ok "$DIR"; then printf '%s\n' "$DIR"; return 0; fi
  command -v node >/dev/null || die "node is missing (Debian: apt-get install -y nodejs npm)"
  command -v npm >/dev/null || die "npm is missing (Debian: apt-get install -y npm)"

  say "waiting for the install lock ($(rein_test_cache)/install.lock)"
  install_lock || die "cannot take the install lock"
  if installed_ok "$DIR"; then printf '%s\n' "$DIR"; return 0; fi # another process installed it
  # No other install can be using them while we hold the lock.
  rm -rf "${CACHE:?}/tmp/"*
  WORK="$(mktemp -d "$CACHE/tmp/run.XXXXXX")"

  local start=$SECONDS log="$CACHE/install.log" out="$WORK/out" spec name version got deps=""
  mkdir -p "$out"
  : >"$log" # the last install's log, kept after a failure
  # A package.json of exact versions: `npm install` in the folder installs
  # those, and nothing above it (a package.json in a parent) is touched.
  # "type": "module" is not needed: client.mjs imports by file URL.
  for spec in "${PACKAGES[@]}"; do
    name="${spec%@*}"
    version="${spec##*@}"
    deps="${deps:+$deps,
}    \"$name\": \"$version\""
  done
  printf '{\n  "name": "rein-test-acp-client",\n  "private": true,\n  "dependencies": {\n%s\n  }\n}\n' \
    "$deps" >"$out/package.json"

  say "installing ${PACKAGES[*]} with npm $(npm --version 2>/dev/null 7>&-) (node $(node --version 2>/dev/null 7>&-)); log: $log"
  run_logged "npm install of ${PACKAGES[*]} (the npm registry reachable?)" "$log" \
    npm install --prefix "$out" --cache "$CACHE/npm-cache" "${NPM_FLAGS[@]}"

  local entry
  for entry in "${ENTRY_POINTS[@]}"; do
    [ -f "$out/$entry" ] || die "npm installed no $entry (the package's layout changed? log: $log)"
  done
  # The versions npm resolved are the pinned ones.
  for spec in "${PACKAGES[@]}"; do
    name="${spec%@*}"
    version="${spec##*@}"
    got="$(cd "$out" && node -p "require('./node_modules/$name/package.json').version" 2>>"$log" 7>&-)" \
      || die "cannot read the version of $name (log: $log)"
    [ "$got" = "$version" ] || die "npm installed $name $got, $version pinned"
  done
  cp "$log" "$out/npm.log"
  printf '%s\n' "$KEY" >"$out/pins.key"

  # Into place by rename; a broken copy left before is moved aside first.
  [ ! -e "$DIR" ] || mv "$DIR" "$WORK/old"
  mv "$out" "$DIR"
  say "installed in $((SECONDS - start)) s: $DIR"
  installed_ok "$DIR" || die "the installed $DIR does not pass its own check"
  printf '%s\n' "$DIR"
}

usage() {
  echo "usage: $0   (installs or reuses the pinned ACP SDK; prints its folder)" >&2
  exit 2
}
case "$#" in
  0) install ;;
  *) usage ;;
esac
