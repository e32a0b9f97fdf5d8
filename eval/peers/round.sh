#!/usr/bin/env bash
# One interleaved round of the three harnesses of BENCHMARKS.md figure 9:
# for each task, Rein (full), Rein (naive), Aider, in turn, so that wherever
# the round is stopped all three have the same tasks done. Resumable: a
# harness's finished task is skipped (to pause, kill this script between
# runs; the run under way finishes).
#
#   REIN=<a rein binary copied out of target/> AIDER=<venv>/bin/aider \
#   OPENAI_BASE_URL=http://127.0.0.1:18432/v1 REIN_MODEL=qwen2.5-coder-1.5b \
#     eval/peers/round.sh OUT [holdout|dev|all]
#
# OUT gets full.toml and naive.toml (8 turns, 5 minutes; the naive loop
# with harness = "naive"), out/<harness>/<task>/ and a progress log.
# `holdout`: the suite's held-out split only; `dev`: the rest (the tasks
# the harness was tuned on); `all`: held out first, then the rest; TASKS
# (names, space-separated) runs only those, in that order.
# HARNESSES (default "full naive aider") picks which run. SEED is the
# round's seed: start the server with the same --seed; Rein gets it as
# search_seed (a request's seed overrides the server's, so without it
# every round samples the same candidates). It is logged.
# Sum it up with eval/peers/table.py OUT.
set -euo pipefail
out=${1:?usage: round.sh OUT [holdout|dev|all]}
split=${2:-holdout}
case "$split" in
  holdout | dev | all) ;;
  *) echo "round.sh: unknown split '$split' (holdout, dev or all)" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
suite=${SUITE:-$here/../suites/quixbugs}
rein=${REIN:?set REIN to a rein binary (copy it out of target/: a rebuild mid-round changes the harness)}
: "${AIDER:?set AIDER to the aider executable}"
: "${OPENAI_BASE_URL:?set OPENAI_BASE_URL to the model server}" "${REIN_MODEL:?set REIN_MODEL}"
export REIN_PROVIDER=openai OPENAI_BASE_URL REIN_MODEL AIDER AIDER_TASK_TIMEOUT=${AIDER_TASK_TIMEOUT:-300}
harnesses=${HARNESSES:-full naive aider}
mkdir -p "$out/out"
echo "$(date +%T) round: split $split${TASKS:+ (tasks: $TASKS)}, harnesses $harnesses, seed ${SEED:-unknown}, $("$rein" --version 2>/dev/null || echo rein)" >> "$out/progress"
printf 'max_turns = 8\nmax_minutes = 5\n%s' "${SEED:+search_seed = $SEED
}" > "$out/full.toml"
printf 'max_turns = 8\nmax_minutes = 5\nharness = "naive"\n' > "$out/naive.toml"

tasks() {
  if [ -n "${TASKS:-}" ]; then printf '%s\n' $TASKS; return 0; fi
  if [ "$split" != dev ]; then
    grep -l 'split = "holdout"' "$suite"/tasks/*/task.toml | xargs -n1 dirname | xargs -n1 basename
  fi
  if [ "$split" != holdout ]; then
    grep -L 'split = "holdout"' "$suite"/tasks/*/task.toml | xargs -n1 dirname | xargs -n1 basename
  fi
  return 0
}

for t in $(tasks); do
  for h in full naive; do
    case " $harnesses " in *" $h "*) ;; *) continue ;; esac
    [ -f "$out/out/$h/$t/report.json" ] && continue
    echo "$(date +%T) $t $h" >> "$out/progress"
    "$rein" eval run "$suite" --task "$t" --config "$out/$h.toml" --label "rein-$h" \
      --out "$out/out/$h/$t" > "$out/out/$h-$t.log" 2>&1 || true
  done
  case " $harnesses " in *" aider "*) ;; *) continue ;; esac
  [ -f "$out/out/aider/$t/aider-results.json" ] && continue
  echo "$(date +%T) $t aider" >> "$out/progress"
  python3 "$here/aider.py" "openai/$REIN_MODEL" "$out/out/aider/$t" "$t" --suite "$suite" \
    > "$out/out/aider-$t.log" 2>&1 || true
done
echo "$(date +%T) done" >> "$out/progress"
