#!/usr/bin/env python3
"""Sums a round of eval/peers/round.sh over the tasks all three harnesses
finished, as the markdown table of BENCHMARKS.md figure 9, then one line a
task. Rein's columns include the search with the verifier: candidates
tried (from each task's trace, `rein eval`'s `candidates`) and which one
won ("won #2"); reports from before the search read as none.

    eval/peers/table.py OUT
"""
import json, os, sys


def rein(out, kind):
    r = {}
    base = os.path.join(out, "out", kind)
    for t in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        p = os.path.join(base, t, "report.json")
        if os.path.exists(p):
            with open(p) as f:
                for x in json.load(f)["tasks"]:
                    r[x["id"]] = dict(fixed=x["fixed"], false_claim=x["false_claim"], turns=x["turns"],
                                      tin=x["input_tokens"], tout=x["output_tokens"], wall=x["wall_ms"] / 1000,
                                      split=x["split"], reason=x["reason"],
                                      candidates=x.get("candidates", 0), won=x.get("candidate_won"))
    return r


def aider(out):
    r = {}
    base = os.path.join(out, "out", "aider")
    for t in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        p = os.path.join(base, t, "aider-results.json")
        if os.path.exists(p):
            with open(p) as f:
                for x in json.load(f):
                    r[x["id"]] = dict(fixed=x["fixed"], false_claim=x["false_claim"], turns=None,
                                      tin=x["input_tokens"], tout=x["output_tokens"], wall=x["wall_s"],
                                      split=x["split"], reason="", candidates=None, won=None)
    return r


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: table.py OUT")
    out = sys.argv[1]
    runs = {"Rein, full harness": rein(out, "full"), "Rein, naive loop": rein(out, "naive"),
            "Aider 0.86.2": aider(out)}
    # A round may leave a harness out (round.sh's HARNESSES).
    runs = {name: r for name, r in runs.items() if r}
    if not runs:
        sys.exit(f"{out}: no finished task")
    common = sorted(set.intersection(*[set(v) for v in runs.values()]))
    print(f"{len(common)} tasks: {' '.join(common)}\n")
    print("| harness | fixed | false claims | turns | candidates tried (won) | tokens in | tokens out | wall time |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in runs.items():
        rs = [r[t] for t in common]
        fixed = [t for t in common if r[t]["fixed"]]
        claims = [t for t in common if r[t]["false_claim"]]
        turns = "—" if any(x["turns"] is None for x in rs) else sum(x["turns"] for x in rs)
        said = f" ({', '.join(claims)})" if claims else ""
        if any(x["candidates"] is None for x in rs):
            searched = "—"
        else:
            searched = f"{sum(x['candidates'] for x in rs)} ({sum(x['won'] is not None for x in rs)})"
        print(f"| {name} | {len(fixed)} of {len(common)} | {len(claims)}{said} | {turns} | {searched} | "
              f"{sum(x['tin'] for x in rs):,} | {sum(x['tout'] for x in rs):,} | {sum(x['wall'] for x in rs):,.0f} s |")
    print()
    print("| task | " + " | ".join(runs) + " | Rein (full): how it ended |")
    print("|---|" + "---|" * len(runs) + "---|")
    for t in common:
        cells = []
        for r in runs.values():
            x = r[t]
            verdict = "**fixed**" if x["fixed"] else ("false claim" if x["false_claim"] else "—")
            searched = ""
            if x["candidates"]:
                won = f", won #{x['won']}" if x["won"] is not None else ""
                searched = f", {x['candidates']} candidates{won}"
            cells.append(f"{verdict} ({x['wall']:.0f} s{searched})")
        print(f"| {t} | " + " | ".join(cells) + f" | {runs.get('Rein, full harness', {}).get(t, {}).get('reason', '')[:110]} |")


if __name__ == "__main__":
    main()
