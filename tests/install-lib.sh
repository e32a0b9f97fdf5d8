# Sourced (not run) by the test suite's set-up scripts: tests/prerequisites.sh
# (what tests/run.sh installs), tests/vscode/setup.sh and tests/cold-start.sh.
#
# Every first-use install the suite does happens under ONE lock, taken before
# anything is checked: `install.lock` in the suite's cache folder,
#
#   $REIN_TEST_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/rein-tests
#
# (the folder tests/nvim.rs and tests/run_cmd.rs cache Neovim and pytest in).
# It is a flock(2) lock, so a killed installer never leaves it held. Debian's
# packages are installed under it too, and apt's and dpkg's own locks, which
# another program may hold (unattended-upgrades, another checkout's suite),
# are waited for.

# Runs a command with its output in a log file (long tools stay off the
# terminal; on failure the log's tail is shown, through the caller's `die`).
# fd 7 (the lock) is not passed on, so a child left running after we are
# killed does not hold the lock.
run_logged() {
  local what="$1" log="$2"
  shift 2
  if ! "$@" >>"$log" 2>&1 7>&-; then
    tail -n 40 "$log" >&2 || true
    die "$what failed (full log: $log)"
  fi
}

# The suite's cache folder (made if missing).
rein_test_cache() {
  local base="${XDG_CACHE_HOME:-}"
  case "$base" in /*) ;; *) base="$HOME/.cache" ;; esac
  local dir="${REIN_TEST_CACHE:-$base/rein-tests}"
  mkdir -p "$dir"
  printf '%s\n' "$dir"
}

# Takes the install lock on file descriptor 7 (waits for it, up to 30
# minutes: a cold code-server install takes a few). Released by
# install_unlock, or when the process exits.
install_lock() {
  local lock
  lock="$(rein_test_cache)/install.lock"
  exec 7>>"$lock"
  if ! flock -w 1800 7; then
    printf 'another process has held %s for 30 minutes\n' "$lock" >&2
    return 1
  fi
}

# Releases it. flock -u releases it even if a child (a daemon an apt
# package started) inherited the descriptor.
install_unlock() {
  flock -u 7 2>/dev/null || true
  exec 7>&-
}

# apt-get, waiting for apt's and dpkg's locks while another program holds
# them. DPkg::Lock::Timeout makes `install` wait for dpkg's lock, but apt
# 2.6's `update` (the lists' lock) and the archives' lock fail at once
# ("Could not get lock /var/lib/apt/lists/lock"), so a lock failure is
# retried, for 10 minutes in all. The lock's descriptor is not passed on.
apt_get() {
  local deadline=$((SECONDS + 600)) out status
  while :; do
    status=0
    out="$(LC_ALL=C DEBIAN_FRONTEND=noninteractive \
      apt-get -o DPkg::Lock::Timeout=600 "$@" 2>&1 7>&-)" || status=$?
    [ -z "$out" ] || printf '%s\n' "$out" >&2
    [ "$status" -eq 0 ] && return 0
    case "$out" in
      *"Could not get lock"* | *"Unable to lock"* | *"Unable to acquire the dpkg frontend lock"*) ;;
      *) return "$status" ;;
    esac
    [ "$SECONDS" -lt "$deadline" ] || return "$status"
    printf 'apt-get %s: another program holds apt'"'"'s lock; waiting\n' "$1" >&2
    sleep 3
  done
}

# Whether a Debian package is installed (`dpkg -s` also says yes for one
# removed with its configuration files left).
deb_installed() {
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ]
}

# Installs the Debian packages of the list that are missing. Call it with
# the install lock held. Fails, naming the command to run, when some are
# missing and this is not root (or not Debian).
apt_install() {
  local missing=() p
  for p in "$@"; do deb_installed "$p" || missing+=("$p"); done
  [ "${#missing[@]}" -eq 0 ] && return 0
  if ! command -v apt-get >/dev/null || [ "$(id -u)" != 0 ]; then
    printf 'missing Debian packages: %s (run: sudo apt-get install -y %s)\n' \
      "${missing[*]}" "${missing[*]}" >&2
    return 1
  fi
  printf 'installing Debian packages: %s\n' "${missing[*]}" >&2
  apt_get update -qq || {
    echo "apt-get update failed (no network to Debian's mirrors?)" >&2
    return 1
  }
  apt_get install -y -qq "${missing[@]}" || {
    printf 'apt-get install %s failed\n' "${missing[*]}" >&2
    return 1
  }
}
