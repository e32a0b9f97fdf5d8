# shellcheck shell=bash
# The pinned npm installs of the end-to-end suite (tests/mcp-servers and
# tests/acp), sourced after tests/install-lib.sh. The caller sets PACKAGES
# (name@version), NPM_FLAGS, ENTRY_POINTS (files the install must hold),
# CACHE, KEY (`npm_pin_key`) and DIR ($CACHE/$KEY), defines say and die, and
# a cleanup trap that removes $WORK and unlocks. `npm_install NAME` installs
# (or reuses) them under the install lock, in a temporary folder inside the
# cache renamed into place when complete and checked; prints DIR.

# The install's key: the pins and how they are installed. Other pins, other
# folder (an older one stays until removed by hand).
npm_pin_key() {
  { printf '%s\n' "${PACKAGES[@]}" "${NPM_FLAGS[@]}"; } | sha256sum | cut -c1-16
}

# A complete install: the stamp written last, before the rename, and every
# entry point. Cheap: no process is started.
npm_installed_ok() {
  local dir="$1" entry
  [ "$(cat "$dir/pins.key" 2>/dev/null)" = "$KEY" ] || return 1
  for entry in "${ENTRY_POINTS[@]}"; do
    [ -f "$dir/$entry" ] || return 1
  done
}

npm_install() {
  local package_name="$1"
  if npm_installed_ok "$DIR"; then printf '%s\n' "$DIR"; return 0; fi
  command -v node >/dev/null || die "node is missing (Debian: apt-get install -y nodejs npm)"
  command -v npm >/dev/null || die "npm is missing (Debian: apt-get install -y npm)"

  say "waiting for the install lock ($(rein_test_cache)/install.lock)"
  install_lock || die "cannot take the install lock"
  if npm_installed_ok "$DIR"; then printf '%s\n' "$DIR"; return 0; fi # another process installed it
  # No other install can be using them while we hold the lock.
  rm -rf "${CACHE:?}/tmp/"*
  WORK="$(mktemp -d "$CACHE/tmp/run.XXXXXX")"

  local start=$SECONDS log="$CACHE/install.log" out="$WORK/out" spec name version got deps=""
  mkdir -p "$out"
  : >"$log" # the last install's log, kept after a failure
  # A package.json of exact versions: `npm install` in the folder installs
  # those, and nothing above it (a package.json in a parent) is touched.
  for spec in "${PACKAGES[@]}"; do
    name="${spec%@*}"
    version="${spec##*@}"
    deps="${deps:+$deps,
}    \"$name\": \"$version\""
  done
  printf '{\n  "name": "%s",\n  "private": true,\n  "dependencies": {\n%s\n  }\n}\n' \
    "$package_name" "$deps" >"$out/package.json"

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
  npm_installed_ok "$DIR" || die "the installed $DIR does not pass its own check"
  printf '%s\n' "$DIR"
}
