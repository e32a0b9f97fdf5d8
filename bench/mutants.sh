#!/usr/bin/env bash
# Mutation check: how many deliberate bugs in the modules behind Rein's
# promises ("fixed" only when seen to pass; nothing done twice after a
# crash) the tests catch. A benchmark, not a test: it takes most of an hour
# on two cores, so CI does not run it. BENCHMARKS.md §8 has the figures.
#
#   bench/mutants.sh                  # every module below
#   bench/mutants.sh verify passes    # some of them
#
# Each module is mutated by cargo-mutants in a copy of the tree (the
# working tree is never touched) and judged by the tests named next to it.
# Results: target/mutants/<module>/mutants.out/{caught,missed,timeout,unviable}.txt
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

version=27.1.0
tools="${REIN_BENCH_TOOLS:-$root/target/bench-tools}"
mutants="$tools/bin/cargo-mutants"
# Compared as strings (`| grep -q` fails under pipefail when grep exits
# early); a binary installed with --root wants the `mutants` subcommand first.
installed() { [[ "$("$1" --version 2>/dev/null || "$1" mutants --version 2>/dev/null)" == *"$version"* ]]; }
if ! installed "$mutants"; then
    if installed cargo-mutants; then
        mutants=cargo-mutants
    else
        echo "installing cargo-mutants $version into $tools (several minutes, once)" >&2
        cargo install cargo-mutants --version "$version" --locked --root "$tools"
    fi
fi

# module → file and the test targets that judge it.
declare -A file=(
    [verify]=server/core/src/verify.rs
    [passes]=server/core/src/testing/passes.rs
    [resume]=server/core/src/resume.rs
)
declare -A judged_by=(
    [verify]="--lib --test=verifier"
    [passes]="--lib"
    [resume]="--lib --test=recovery"
)
order=(verify passes resume)
selected=("$@")
[ ${#selected[@]} -eq 0 ] && selected=("${order[@]}")

summary=()
for module in "${selected[@]}"; do
    [ -n "${file[$module]:-}" ] || { echo "unknown module: $module (one of: ${order[*]})" >&2; exit 2; }
    out="target/mutants/$module"
    mkdir -p "$out"
    args=()
    for a in ${judged_by[$module]}; do args+=(--cargo-test-arg="$a"); done
    # cargo-mutants exits 2 when some mutants are missed and 3 when some
    # time out: that is the figure, not a failure of this script.
    status=0
    "$mutants" mutants -p rein-core --file "${file[$module]}" "${args[@]}" \
        --jobs 1 --timeout 180 --build-timeout 900 --output "$out" --no-shuffle \
        || status=$?
    case $status in 0 | 2 | 3) ;; *) echo "cargo-mutants failed ($status) on $module" >&2; exit "$status" ;; esac
    count() { wc -l < "$out/mutants.out/$1.txt" 2>/dev/null | tr -d ' ' || echo 0; }
    caught=$(count caught) missed=$(count missed) timeout=$(count timeout) unviable=$(count unviable)
    viable=$((caught + missed + timeout))
    score=$(awk -v c="$caught" -v t="$timeout" -v v="$viable" 'BEGIN { if (v) printf "%.0f%%", 100 * (c + t) / v; else print "n/a" }')
    summary+=("| \`${file[$module]}\` | ${judged_by[$module]} | $viable | $caught | $timeout | $missed | $unviable | $score |")
done

echo
echo "| module | judged by | viable mutants | caught | timed out | missed | unviable | killed |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${summary[@]}"
