#!/usr/bin/env bash
# Cold start, proven (issue 14): the test suite's first-use installs work on
# a machine where nothing is cached, with several test processes setting up
# at once, as `cargo nextest` runs them.
#
#   tests/cold-start.sh [--jobs N] [--no-apt] [--cargo "nvim vscode run_cmd"] [--keep]
#
# Everything runs with a fresh, empty HOME, XDG_CACHE_HOME and npm cache in
# one temporary folder (removed at the end unless --keep); CARGO_HOME and
# RUSTUP_HOME stay the real ones (a toolchain is not re-downloaded).
#
# 1. VS Code set-up (tests/vscode/setup.sh), on a copy of editors/vscode
#    without node_modules (so the checkout is left alone and npm ci runs
#    cold): 2×N processes at once, half doing `vsix` then `code-server` (what
#    each end-to-end test does), half `code-server` then `extension` (what
#    the type-check and unit tests do, in the order that races the most).
#    Each must succeed and print the same path as the others; code-server
#    and npm ci must each have been installed exactly once; the installed
#    code-server must run and the package hold the extension.
# 2. tests/prerequisites.sh (what tests/run.sh installs), N at once. With
#    the toolchain already there this only proves the checks and the lock;
#    a cold rustup/cargo-nextest install is not repeated here.
# 3. apt (root on Debian only; --no-apt skips it): the Debian packages of the
#    suite cannot be uninstalled from this machine to install them again, so
#    what is proven is the part that failed on a fresh machine, the waiting:
#    while another process holds apt's lists lock and dpkg's frontend lock
#    (as another apt-get, unattended-upgrades or cloud-init would), the
#    suite's apt_get (tests/install-lib.sh) runs `apt-get update` and
#    `apt-get install --no-upgrade ripgrep` (installed already: no change),
#    and both must wait and then succeed. In the set-ups above, apt_install
#    finds every package installed and installs nothing.
# 4. Neovim (a wheel into a venv, tests/nvim.rs) and pytest (pip, tests/
#    run_cmd.rs) are installed by the Rust suites themselves: --cargo runs
#    those suites with another fresh HOME and cache, e.g.
#      tests/cold-start.sh --cargo "nvim run_cmd vscode"
#    which is
#      HOME=<fresh> XDG_CACHE_HOME=<fresh>/.cache npm_config_cache=<fresh>/npm \
#        CARGO_HOME=~/.cargo RUSTUP_HOME=~/.rustup \
#        cargo nextest run --locked -p rein-e2e --test nvim --test run_cmd --test vscode
#    (needs the `rein` binary built: cargo build --workspace --bins). The
#    VS Code suite there installs code-server cold again, from its 6 tests at
#    once: the exact failure of issue 14.
#
# Needs what the suite needs (Node 20, npm, python3, network to the npm
# registry and PyPI). Exit code 0 only if every check passed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

jobs=3
apt=1
cargo_tests=""
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs="$2"; shift 2 ;;
    --no-apt) apt=0; shift ;;
    --cargo) cargo_tests="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "usage: $0 [--jobs N] [--no-apt] [--cargo \"nvim vscode run_cmd\"] [--keep]" >&2; exit 2 ;;
  esac
done

tmp="$(mktemp -d "${TMPDIR:-/tmp}/rein-cold-start.XXXXXX")"
cleanup() {
  if [ "$keep" = 1 ]; then
    echo "kept $tmp" >&2
  else
    chmod -R u+w "$tmp" 2>/dev/null || true
    rm -rf "$tmp"
  fi
}
trap cleanup EXIT

failures=0
ok() { printf '  ok    %s\n' "$*"; }
bad() { printf '  FAIL  %s\n' "$*"; failures=$((failures + 1)); }
step() { printf '\n== %s\n' "$*"; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# The toolchain stays the real one; everything else starts empty.
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
unset REIN_TEST_CACHE PIP_CACHE_DIR REIN_TEST_NVIM
fresh_env() { # name → env assignments for a fresh home under $tmp/name
  local h="$tmp/$1/home"
  mkdir -p "$h" "$tmp/$1/cache" "$tmp/$1/npm"
  printf '%s\n' "HOME=$h" "XDG_CACHE_HOME=$tmp/$1/cache" "npm_config_cache=$tmp/$1/npm"
}
mapfile -t env1 < <(fresh_env scripts)
cache1="$tmp/scripts/cache/rein-tests"

printf 'cold start: %s (jobs=%s)\n' "$tmp" "$jobs"
printf 'HOME, XDG_CACHE_HOME and the npm cache start empty (%s entries)\n' \
  "$(find "$tmp/scripts" -mindepth 2 | wc -l)"

# ---------------------------------------------------------------- 1. VS Code
step "1. tests/vscode/setup.sh, $((2 * jobs)) at once"
copy="$tmp/repo"
mkdir -p "$copy"
tar -C "$root" \
  --exclude=node_modules --exclude=dist --exclude=out --exclude='*.vsix' --exclude=editors/vscode/server \
  -cf - editors/vscode tests/vscode tests/install-lib.sh | tar -C "$copy" -xf -
logs="$tmp/logs"
mkdir -p "$logs"
worker() { # id part... : runs the parts in order; one "part path seconds" line each
  local id="$1" part start
  shift
  for part in "$@"; do
    start="$(now)"
    if env "${env1[@]}" bash "$copy/tests/vscode/setup.sh" "$part" \
      >"$logs/$id.$part.out" 2>"$logs/$id.$part.err"; then
      printf '%s %s %s\n' "$part" "$(tail -n 1 "$logs/$id.$part.out")" "$(secs "$start" "$(now)")" >>"$logs/$id.result"
    else
      printf '%s FAILED(%s) %s\n' "$part" "$?" "$(secs "$start" "$(now)")" >>"$logs/$id.result"
      return 1
    fi
  done
}
started="$(now)"
pids=()
for i in $(seq 1 "$jobs"); do
  worker "a$i" vsix code-server & pids+=($!)
  worker "b$i" code-server extension & pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
printf '  %s processes ended after %s s\n' "${#pids[@]}" "$(secs "$started" "$(now)")"
for f in "$logs"/*.result; do printf '    %-4s %s\n' "$(basename "$f" .result)" "$(tr '\n' ';' <"$f")"; done
if [ "$status" = 0 ]; then ok "every invocation succeeded"; else
  bad "some invocation failed:"
  for f in "$logs"/*.err; do printf '\n--- %s\n' "$f"; tail -n 30 "$f"; done
fi
for part in extension vsix code-server; do
  paths="$(for f in "$logs"/*."$part".out; do tail -n 1 "$f"; done | sort -u)"
  n="$(printf '%s\n' "$paths" | grep -c . || true)"
  if [ "$n" = 1 ]; then ok "$part: every invocation printed $paths"; else bad "$part: invocations printed $n different paths: $paths"; fi
done
n="$(cat "$logs"/*.err | grep -c 'installing code-server' || true)"
[ "$n" = 1 ] && ok "code-server installed once" || bad "code-server installed $n times"
n="$(cat "$logs"/*.err | grep -c 'npm ci in editors/vscode' || true)"
[ "$n" = 1 ] && ok "npm ci ran once" || bad "npm ci ran $n times"
code_server="$cache1/code-server-4.100.3/node_modules/.bin/code-server"
# (its first run also says it wrote a config file)
if v="$(env "${env1[@]}" XDG_CONFIG_HOME="$tmp/scripts/config" "$code_server" --version 2>/dev/null | grep -m 1 '^4\.100\.3 ')"; then
  ok "the installed code-server runs: $v"
else
  bad "the installed code-server does not run (${v:-no output})"
fi
if unzip -l "$copy/target/vscode/rein.vsix" 2>/dev/null | grep -q 'extension/dist/main.js'; then
  ok "rein.vsix holds extension/dist/main.js"
else
  bad "rein.vsix is missing or holds no extension/dist/main.js"
fi
leftovers="$(find "$cache1" "$copy/target/vscode" -maxdepth 1 \( -name '*.tmp' -o -name 'rein-*.vsix' \) 2>/dev/null)"
[ -z "$leftovers" ] && ok "no half-made install left" || bad "left behind: $leftovers"
printf '  cache: %s\n' "$(du -sh "$tmp/scripts" | cut -f1)"

# --------------------------------------------------------- 2. prerequisites
step "2. tests/prerequisites.sh, $jobs at once (toolchain already installed)"
# It runs from the checkout (it only reads it): the copy has no Cargo.toml.
started="$(now)"
pids=()
for i in $(seq 1 "$jobs"); do
  env "${env1[@]}" bash "$root/tests/prerequisites.sh" >"$logs/prereq$i.log" 2>&1 & pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
if [ "$status" = 0 ]; then ok "all $jobs succeeded in $(secs "$started" "$(now)") s"; else
  bad "some failed:"; tail -n 20 "$logs"/prereq*.log
fi

# ------------------------------------------------------------------ 3. apt
step "3. apt waits for apt's and dpkg's locks"
if [ "$apt" = 0 ]; then
  echo "  skipped (--no-apt)"
elif [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "  skipped (needs root on Debian; the set-up scripts only install Debian packages as root)"
else
  hold=8
  # Another program holding apt's locks the way apt does (fcntl locks).
  python3 - "$hold" /var/lib/apt/lists/lock /var/lib/dpkg/lock-frontend >"$tmp/held" <<'EOF' &
import fcntl, sys, time
files = [open(p, "a") for p in sys.argv[2:]]
for f in files:
    fcntl.lockf(f, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(float(sys.argv[1]))
EOF
  holder=$!
  for _ in $(seq 1 100); do grep -q held "$tmp/held" 2>/dev/null && break; sleep 0.1; done
  started="$(now)"
  if (. "$root/tests/install-lib.sh" && apt_get update -qq && apt_get install -y -qq --no-upgrade ripgrep) \
    >"$logs/apt.log" 2>&1; then
    took="$(secs "$started" "$(now)")"
    if awk -v t="$took" -v h="$hold" 'BEGIN { exit !(t >= h - 1) }'; then
      ok "apt-get update and install waited for the locks (held ${hold} s) and succeeded after $took s"
    else
      bad "apt-get finished after $took s while the locks were held for $hold s"
    fi
  else
    bad "apt-get failed while another process held its locks:"; tail -n 20 "$logs/apt.log"
  fi
  wait "$holder" || true
  grep -q "waiting" "$logs/apt.log" && ok "update was retried while the lists lock was held" \
    || bad "no retry seen (is the lists lock not held?)"
fi

# ---------------------------------------------------- 4. the Rust suites' installs
step "4. Neovim and pytest (tests/nvim.rs, tests/run_cmd.rs)"
if [ -z "$cargo_tests" ]; then
  echo "  not run: they install from Rust; add --cargo \"nvim run_cmd vscode\" (builds with cargo)"
else
  mapfile -t env2 < <(fresh_env cargo)
  args=()
  for t in $cargo_tests; do args+=(--test "$t"); done
  started="$(now)"
  if (cd "$root" && env "${env2[@]}" cargo nextest run --locked -p rein-e2e "${args[@]}") >"$logs/cargo.log" 2>&1; then
    ok "cargo nextest run -p rein-e2e ${args[*]} passed in $(secs "$started" "$(now)") s from an empty HOME"
  else
    bad "cargo nextest run -p rein-e2e ${args[*]} failed from an empty HOME (after $(secs "$started" "$(now)") s):"
    tail -n 60 "$logs/cargo.log"
  fi
  grep -E '^ +(PASS|FAIL|SIGKILL|TIMEOUT)|Summary' "$logs/cargo.log" | sed 's/^/    /' || true
  for d in nvim-0.11 pytest-9.0.3 code-server-4.100.3; do
    [ -e "$tmp/cargo/cache/rein-tests/$d" ] && echo "    installed cold: $d"
  done
  printf '  cache: %s\n' "$(du -sh "$tmp/cargo" | cut -f1)"
fi

echo
if [ "$failures" = 0 ]; then echo "cold start: all checks passed"; else echo "cold start: $failures check(s) FAILED"; fi
[ "$failures" = 0 ]
