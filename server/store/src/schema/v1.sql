-- Schema version 1: tasks, turns (model calls), the op log, checkpoints.
--
-- FROZEN. Databases written by the first release were built by exactly this
-- script; every later change is a new script (v2.sql, ...). Editing this one
-- would give old and new databases different schemas under the same version.

-- "REIN" (0x5245494E): marks the file as ours, so that another program's
-- SQLite database is refused instead of being migrated.
PRAGMA application_id = 1380272462;

-- `seq` is the insertion order ("newest first" without trusting clocks);
-- `id` is the agent's task id. The JSON columns are the agent's records,
-- stored as given; the other columns are what queries need.
CREATE TABLE tasks (
    seq          INTEGER PRIMARY KEY,
    id           TEXT    NOT NULL UNIQUE,
    kind         TEXT    NOT NULL,
    goal         TEXT    NOT NULL,
    spec_json    TEXT    NOT NULL,
    state        TEXT    NOT NULL,
    reason       TEXT,
    budgets_json TEXT    NOT NULL,
    spent_json   TEXT    NOT NULL,
    created_ms   INTEGER NOT NULL,
    updated_ms   INTEGER NOT NULL
) STRICT;

CREATE INDEX tasks_by_state ON tasks (state, seq);

-- One row per model call. A turn re-run after a crash, or a compaction call,
-- adds a row: what was spent is never overwritten.
CREATE TABLE turns (
    id            INTEGER PRIMARY KEY,
    task_id       TEXT    NOT NULL REFERENCES tasks (id),
    turn          INTEGER NOT NULL CHECK (turn >= 0),
    request_ref   TEXT    NOT NULL,
    response_json TEXT    NOT NULL,
    usage_json    TEXT    NOT NULL,
    cost_usd      REAL,
    latency_ms    INTEGER NOT NULL CHECK (latency_ms >= 0),
    created_ms    INTEGER NOT NULL
) STRICT;

CREATE INDEX turns_by_task ON turns (task_id, id);

-- The op log. Each tool call moves requested -> started -> finished (or to
-- recovered when a crash left it requested or started), one committed step
-- each; the CHECK keeps the states to the store's own vocabulary. `pre_json`
-- and `post_json` are JSON arrays of {path, hash}.
CREATE TABLE ops (
    id           INTEGER PRIMARY KEY,
    task_id      TEXT    NOT NULL REFERENCES tasks (id),
    turn         INTEGER NOT NULL CHECK (turn >= 0),
    call_id      TEXT    NOT NULL,
    tool         TEXT    NOT NULL,
    args_json    TEXT    NOT NULL,
    state        TEXT    NOT NULL
        CHECK (state IN ('requested', 'started', 'finished', 'recovered')),
    pre_json     TEXT    NOT NULL,
    post_json    TEXT    NOT NULL DEFAULT '[]',
    result_json  TEXT,
    outcome      TEXT,
    requested_ms INTEGER NOT NULL,
    started_ms   INTEGER,
    finished_ms  INTEGER
) STRICT;

CREATE INDEX ops_by_task ON ops (task_id, id);
CREATE INDEX ops_by_call ON ops (task_id, turn, call_id);

-- Enough, per turn, to rebuild the next request. Every checkpoint is kept
-- (the trace shows them); the last one by `id` is the one to resume from.
CREATE TABLE checkpoints (
    id         INTEGER PRIMARY KEY,
    task_id    TEXT    NOT NULL REFERENCES tasks (id),
    turn       INTEGER NOT NULL CHECK (turn >= 0),
    phase      TEXT    NOT NULL CHECK (phase IN ('after_model', 'after_tools')),
    data_json  TEXT    NOT NULL,
    created_ms INTEGER NOT NULL
) STRICT;

CREATE INDEX checkpoints_by_task ON checkpoints (task_id, id);

PRAGMA user_version = 1;
