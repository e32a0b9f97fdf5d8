-- Schema version 2: one owner per running task, and the artifacts index.

-- The lease: who runs the task and until when, renewed by a heartbeat. Both
-- NULL when nobody holds it.
ALTER TABLE tasks ADD COLUMN owner TEXT;
ALTER TABLE tasks ADD COLUMN lease_until_ms INTEGER;

-- The files live under .rein/artifacts/<task>/; `rel_path` is relative to
-- that directory. Recording a path again updates its row.
CREATE TABLE artifacts (
    id         INTEGER PRIMARY KEY,
    task_id    TEXT    NOT NULL REFERENCES tasks (id),
    rel_path   TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    bytes      INTEGER NOT NULL CHECK (bytes >= 0),
    created_ms INTEGER NOT NULL,
    UNIQUE (task_id, rel_path)
) STRICT;

PRAGMA user_version = 2;
