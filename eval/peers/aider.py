#!/usr/bin/env python3
"""Aider on tasks of a `rein eval` suite, judged as `rein eval` judges Rein:
the suite's test files put back, the held-out tests added, the task's check
run; a task is fixed only if the check passes.

    AIDER=/path/to/aider OPENAI_BASE_URL=http://127.0.0.1:18432/v1 \
      [AIDER_TASK_TIMEOUT=300] eval/peers/aider.py MODEL OUT TASK... [--suite eval/suites/quixbugs]

Aider exits 0 whatever happened, so a *claim* is read from its output with a
regular expression (it says the change should fix the test, or that tests
pass): a heuristic; read the logs in OUT/<task>/aider.log. The check runs
without Rein's sandbox: run this only on suites you trust.
"""
import argparse, json, os, re, shutil, subprocess, time, tomllib

CLAIM = re.compile(r"(should (now )?(pass|resolve|fix|work)|now pass|tests? pass|is fixed|fixed the)", re.I)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser()
    parser.add_argument("model", help="the model as Aider names it, e.g. openai/qwen2.5-coder-1.5b")
    parser.add_argument("out")
    parser.add_argument("tasks", nargs="+")
    parser.add_argument("--suite", default=os.path.join(here, "..", "suites", "quixbugs"))
    args = parser.parse_args()
    aider = os.environ.get("AIDER", "aider")
    # Wall time per task; 300 matches `rein eval` with max_minutes = 5.
    task_timeout = float(os.environ.get("AIDER_TASK_TIMEOUT", "900"))
    base = os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:18432/v1")
    results = []
    for tid in args.tasks:
        tdir = os.path.join(args.suite, "tasks", tid)
        with open(os.path.join(tdir, "task.toml"), "rb") as f:
            task = tomllib.load(f)
        work = os.path.join(args.out, tid)
        proj = os.path.join(work, "project")
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(os.path.join(tdir, "project"), proj)
        test_path, name = task["fix_test"].split("::", 1)
        module = test_path[:-3].replace("/", ".")
        message = (f"The test {name.replace('::', '.')} in {test_path} fails. "
                   f"Fix the bug in {task['program']} so that it passes. Do not change the test.")
        command = [aider, "--model", args.model, "--openai-api-base", base, "--openai-api-key", "none",
                   "--no-git", "--yes-always", "--edit-format", "whole", "--map-tokens", "0",
                   "--auto-test", "--test-cmd", f"python3 -m unittest {module}",
                   "--no-show-model-warnings", "--no-check-update", "--analytics-disable",
                   "--no-pretty", "--no-stream", "--timeout", "600",
                   "--message", message, task["program"], test_path]
        started = time.time()
        env = dict(os.environ, HOME=os.path.join(work, "home"))
        try:
            run = subprocess.run(command, cwd=proj, capture_output=True, text=True, timeout=task_timeout, env=env)
            output = run.stdout + run.stderr
        except subprocess.TimeoutExpired as e:
            output = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            output += "\n[timed out]"
        wall = time.time() - started
        with open(os.path.join(work, "aider.log"), "w") as f:
            f.write(output)
        tokens_in = tokens_out = 0.0
        for m in re.finditer(r"Tokens: ([\d.]+)(k?) sent, ([\d.]+)(k?) received", output):
            tokens_in += float(m.group(1)) * (1000 if m.group(2) else 1)
            tokens_out += float(m.group(3)) * (1000 if m.group(4) else 1)
        # Judged as rein eval does: the tests as the suite wrote them, plus the held-out ones.
        shutil.rmtree(os.path.join(proj, "tests"))
        shutil.copytree(os.path.join(tdir, "project", "tests"), os.path.join(proj, "tests"))
        shutil.copytree(os.path.join(tdir, "heldout"), proj, dirs_exist_ok=True)
        check = subprocess.run(task["check"], shell=True, cwd=proj, capture_output=True, text=True, timeout=300)
        fixed = check.returncode == 0
        claimed = bool(CLAIM.search(output))
        results.append({"id": tid, "split": task.get("split", "dev"), "fixed": fixed, "claimed": claimed,
                        "false_claim": claimed and not fixed, "input_tokens": int(tokens_in),
                        "output_tokens": int(tokens_out), "wall_s": round(wall, 1)})
        print(json.dumps(results[-1]), flush=True)
    with open(os.path.join(args.out, "aider-results.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(f"aider: fixed {sum(r['fixed'] for r in results)} of {len(results)}; "
          f"false claims {sum(r['false_claim'] for r in results)}; "
          f"tokens in {sum(r['input_tokens'] for r in results)}, out {sum(r['output_tokens'] for r in results)}; "
          f"wall {sum(r['wall_s'] for r in results):.0f} s")


if __name__ == "__main__":
    main()
