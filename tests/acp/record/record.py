#!/usr/bin/env python3
"""Runs an ACP agent and records every line between it and the client, in
the order this proxy sees them: `record.py LOG -- AGENT ARGS...`."""
import json, subprocess, sys, threading, time

log_path = sys.argv[1]
agent = sys.argv[sys.argv.index("--") + 1:]
child = subprocess.Popen(agent, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
lock = threading.Lock()
log = open(log_path, "a", buffering=1)
t0 = time.monotonic()

def record(direction, raw):
    line = raw.rstrip(b"\n")
    try:
        entry = {"dir": direction, "msg": json.loads(line)}
    except ValueError:
        entry = {"dir": direction, "raw": line.decode("utf-8", "replace")}
    entry["ms"] = int((time.monotonic() - t0) * 1000)
    entry["agent"] = child.pid
    with lock:
        log.write(json.dumps(entry) + "\n")

def pump_in():
    for raw in sys.stdin.buffer:
        record("to_agent", raw)
        try:
            child.stdin.write(raw); child.stdin.flush()
        except BrokenPipeError:
            break
    try:
        child.stdin.close()
    except Exception:
        pass

threading.Thread(target=pump_in, daemon=True).start()
for raw in child.stdout:
    record("from_agent", raw)
    sys.stdout.buffer.write(raw); sys.stdout.buffer.flush()
child.wait()
with lock:
    log.write(json.dumps({"event": "agent_exit", "code": child.returncode, "agent": child.pid}) + "\n")
