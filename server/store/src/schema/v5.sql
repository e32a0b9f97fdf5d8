-- Schema version 5: conversations. A front end that keeps a conversation
-- across requests (an Agent Client Protocol session) records it here, and
-- which of its tasks each request became, in order: the session is listed
-- and loaded again after the agent restarted, and a task a crash
-- interrupted is found from it.
CREATE TABLE sessions (
    id         TEXT    PRIMARY KEY NOT NULL CHECK (id <> ''),
    front_end  TEXT    NOT NULL,
    cwd        TEXT    NOT NULL,
    title      TEXT,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL
) STRICT;

CREATE TABLE session_tasks (
    session_id TEXT    NOT NULL REFERENCES sessions (id),
    seq        INTEGER NOT NULL CHECK (seq >= 0),
    task_id    TEXT    NOT NULL REFERENCES tasks (id),
    prompt     TEXT    NOT NULL,
    PRIMARY KEY (session_id, seq)
) STRICT;

PRAGMA user_version = 5;
