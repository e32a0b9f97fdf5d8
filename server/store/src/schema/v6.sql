-- Schema version 6: what a task did to each file, so it can be undone.
-- One row per file a task changed: its text before the task's first edit
-- of it (kept from the first record on) and after the last (updated at
-- each edit). `*_kind` says whether there was a text: 'text', 'absent'
-- (no such file), 'too_large' (over what the caller keeps) or 'secret'
-- (it held a secret, which no state is written with); the text is NULL
-- but for 'text'. These are the user's own files, kept in `.rein/` like the
-- rest of the task's state.
CREATE TABLE task_files (
    id          INTEGER PRIMARY KEY,
    task_id     TEXT    NOT NULL REFERENCES tasks (id),
    path        TEXT    NOT NULL CHECK (path <> ''),
    before_kind TEXT    NOT NULL CHECK (before_kind IN ('text', 'absent', 'too_large', 'secret')),
    before_text TEXT    CHECK ((before_kind = 'text') = (before_text IS NOT NULL)),
    after_kind  TEXT    NOT NULL CHECK (after_kind IN ('text', 'absent', 'too_large', 'secret')),
    after_text  TEXT    CHECK ((after_kind = 'text') = (after_text IS NOT NULL)),
    changed_ms  INTEGER NOT NULL,
    UNIQUE (task_id, path)
) STRICT;

PRAGMA user_version = 6;
