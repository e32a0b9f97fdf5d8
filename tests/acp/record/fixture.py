#!/usr/bin/env python3
"""Turns a recording of record.py into a replay fixture (tests/acp_replay.rs):

    fixture.py RAW.jsonl OUT.jsonl --root /the/recorded/project --header '{"client": ...}'

Keeps, per agent process, every line the client sent and every answer the
agent gave to the client's requests, in the order the proxy saw them; drops
the agent's session/update notifications (Rein's output, not the client's
behaviour: the replay checks its own). The recorded project folder becomes
$ROOT. The first line is the header: what was recorded, how and when."""
import argparse, json

ap = argparse.ArgumentParser()
ap.add_argument("raw")
ap.add_argument("out")
ap.add_argument("--root", required=True)
ap.add_argument("--header", required=True)
a = ap.parse_args()

out = [json.dumps({"fixture": json.loads(a.header)})]
for line in open(a.raw):
    entry = json.loads(line)
    msg = entry.get("msg")
    if msg is None:
        continue
    if entry["dir"] == "from_agent" and msg.get("method") == "session/update":
        continue
    text = json.dumps({"agent": entry["agent"], "dir": entry["dir"], "msg": msg})
    out.append(text.replace(a.root, "$ROOT"))
open(a.out, "w").write("\n".join(out) + "\n")
