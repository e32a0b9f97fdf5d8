#!/usr/bin/env bash
# Idempotent set-up for the VS Code suites (tests/vscode.rs), one part at a
# time. Prints the path of what it made on its last line of stdout;
# everything else goes to stderr.
#
#   setup.sh extension    npm ci in editors/vscode (skipped while package-lock.json is unchanged)
#   setup.sh vsix         the above, then build and package the extension -> target/vscode/rein.vsix
#   setup.sh vsix-with-server BINARY OUT   the README's package command, BINARY inside -> OUT
#   setup.sh code-server  code-server 4.100.3 (VS Code 1.100.3) with its native modules, cached in
#                         ${REIN_TEST_CACHE:-${XDG_CACHE_HOME:-~/.cache}/rein-tests}/code-server-4.100.3;
#                         and headless Chromium
#
# The suite's tests run it several at once, on a fresh machine too: every
# check-then-install runs under the suite's one install lock, taken before
# the check, and apt waits for dpkg's lock (tests/install-lib.sh).
# tests/cold-start.sh proves it from an empty HOME and cache.
#
# Needs Node 20 with npm, and the npm registry and Debian's packages
# (the first run only). Any failure exits non-zero with the reason.
set -euo pipefail

CODE_SERVER_VERSION=4.100.3
root="$(cd "$(dirname "$0")/../.." && pwd)"
ext="$root/editors/vscode"
state="$root/target/vscode"
# shellcheck source=../install-lib.sh
. "$root/tests/install-lib.sh"
cache="$(rein_test_cache)"
mkdir -p "$state"
# The install lock is released however the script ends.
trap install_unlock EXIT

say() { printf '[vscode setup] %s\n' "$*" >&2; }
die() { printf '[vscode setup] error: %s\n' "$*" >&2; exit 1; }

need_node() {
  command -v node >/dev/null || die "node is not installed (Node 20 is needed: apt-get install nodejs npm, or nodesource)"
  command -v npm >/dev/null || die "npm is not installed"
  local major
  major="$(node -p 'process.versions.node.split(".")[0]')"
  # code-server 4.100 runs on Node 20 only; vsce 3.9 and playwright-core need >= 20.
  [ "$major" = 20 ] || die "Node $major found; code-server $CODE_SERVER_VERSION and this suite need Node 20"
}

# node-gyp builds code-server's native modules against Node's headers. It
# downloads them from nodejs.org (into ~/.cache/node-gyp) unless told where
# they are: the ones installed with this Node (Debian's and NodeSource's
# nodejs ship them in /usr/include/node, nvm's in its prefix) when they are
# this version's. A user's ~/.npmrc may say `nodedir`, a fresh machine's has
# nothing, and nodejs.org may be out of reach.
node_headers() {
  [ -z "${npm_config_nodedir:-}" ] || return 0
  local prefix version
  prefix="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
  [ -f "$prefix/include/node/node_version.h" ] || return 0
  version="$(awk '/^#define NODE_(MAJOR|MINOR|PATCH)_VERSION / { v = v (v == "" ? "" : ".") $3 } END { print "v" v }' \
    "$prefix/include/node/node_version.h")"
  if [ "$version" = "$(node --version)" ]; then
    export npm_config_nodedir="$prefix"
  fi
}

# npm ci in editors/vscode unless node_modules matches package-lock.json.
# The caller holds extension.lock (fd 8): nobody packages from node_modules
# while it is replaced.
npm_ci() {
  install_lock || die "cannot take the install lock"
  local want have=""
  want="$(sha256sum "$ext/package-lock.json" | cut -d' ' -f1)"
  [ -f "$ext/node_modules/.rein-lock-sha256" ] && have="$(cat "$ext/node_modules/.rein-lock-sha256")"
  if [ "$want" != "$have" ]; then
    say "npm ci in editors/vscode"
    # No install scripts: nothing here needs a native build (keytar is
    # vsce's optional credential store, unused for packaging).
    (cd "$ext" && npm ci --ignore-scripts --no-audit --no-fund >&2 7>&- 8>&-) \
      || die "npm ci in editors/vscode failed (no network to the npm registry?)"
    echo "$want" >"$ext/node_modules/.rein-lock-sha256"
  fi
  install_unlock
}

extension() {
  need_node
  exec 8>>"$state/extension.lock"
  flock 8
  npm_ci
  echo "$ext"
}

vsix() {
  need_node
  exec 8>>"$state/extension.lock"
  flock 8
  npm_ci
  say "building and packaging the extension"
  # Packaged beside the old one and renamed over it: a concurrent test may
  # be installing the previous package, and must never read a half-written one.
  local tmp="$state/rein-$$.vsix"
  (cd "$ext" && node esbuild.mjs --production >&2 \
    && node_modules/.bin/vsce package --no-dependencies --skip-license --out "$tmp" >&2) \
    || { rm -f "$tmp"; die "packaging the extension failed"; }
  mv -f "$tmp" "$state/rein.vsix"
  echo "$state/rein.vsix"
}

# The README's package command (scripts/package.mjs) with the binary $2
# bundled, for linux-x64, to $3 — under the same lock as vsix: both build
# dist/ in the source folder, and the server/ folder it fills for the
# packaging must not end up in the other package.
vsix_with_server() {
  local binary="$1" out="$2"
  [ -n "$binary" ] && [ -n "$out" ] || die "usage: $0 vsix-with-server BINARY OUT"
  need_node
  exec 8>>"$state/extension.lock"
  flock 8
  npm_ci
  say "packaging the extension with the server inside"
  (cd "$ext" && node scripts/package.mjs --target linux-x64 --binary "$binary" --out "$out" >&2) \
    || die "packaging the extension with its server failed"
  echo "$out"
}

code_server() {
  need_node
  install_lock || die "cannot take the install lock"
  # Debian packages: native-module headers for code-server, ripgrep (VS
  # Code's search), and the browser that drives the workbench.
  apt_install libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev ripgrep chromium build-essential python3 \
    || die "the Debian packages code-server needs are missing"
  local dir="$cache/code-server-$CODE_SERVER_VERSION"
  if [ -f "$dir/.complete" ]; then
    install_unlock
    echo "$dir/node_modules/.bin/code-server"
    return
  fi
  say "installing code-server $CODE_SERVER_VERSION into $dir (once; a few minutes)"
  node_headers
  local tmp="$dir.tmp"
  rm -rf "$tmp" "$dir"
  mkdir -p "$tmp"
  cd "$tmp"
  echo '{"name":"rein-test-code-server","private":true}' >package.json
  # Its postinstall would download ripgrep from GitHub; the steps below do
  # what it does with Debian's ripgrep instead.
  npm i --ignore-scripts --no-audit --no-fund "code-server@$CODE_SERVER_VERSION" >&2 \
    || die "npm i code-server@$CODE_SERVER_VERSION failed (no network to the npm registry?)"
  npm_config_build_from_source=true npm_config_yes=true npm rebuild argon2 >&2 \
    || die "building argon2 for code-server failed"
  local vscode="$tmp/node_modules/code-server/lib/vscode"
  (cd "$vscode" && npm i --omit=dev --ignore-scripts --no-audit --no-fund >&2) \
    || die "installing VS Code's dependencies failed"
  mkdir -p "$vscode/node_modules/@vscode/ripgrep/bin"
  cp "$(command -v rg)" "$vscode/node_modules/@vscode/ripgrep/bin/rg"
  (cd "$vscode" && npm_config_yes=true npm rebuild >&2) \
    || die "building VS Code's native modules failed"
  # What code-server's postinstall.sh links.
  ln -sfn node_modules "$vscode/node_modules.asar"
  ln -sfn code-linux.sh "$vscode/bin/remote-cli/code-server"
  ln -sfn browser-linux.sh "$vscode/bin/helpers/browser.sh"
  (cd "$vscode/extensions" && npm i --omit=dev --no-audit --no-fund >&2) \
    || die "installing the built-in extensions' dependencies failed"
  touch "$tmp/.complete"
  # npm's links are relative, so the folder can move into place.
  mv "$tmp" "$dir"
  XDG_CONFIG_HOME="$state/xdg-config" "$dir/node_modules/.bin/code-server" --version >&2 \
    || { rm -f "$dir/.complete"; die "the installed code-server does not run"; }
  echo "$dir/node_modules/.bin/code-server"
}

case "${1:-}" in
  extension) extension ;;
  vsix) vsix ;;
  vsix-with-server) vsix_with_server "${2:-}" "${3:-}" ;;
  code-server) code_server ;;
  *) die "usage: $0 extension|vsix|code-server" ;;
esac
