-- Schema version 4: the history of a task, one row per item.
--
-- A checkpoint used to hold the whole history, so persisting a turn cost
-- more the longer the task (5.3 MB and 65 ms a turn at 1,000 turns,
-- BENCHMARKS.md figure 3). Now each item is written once, when it is new;
-- a checkpoint names how many items of which epoch it stands on. The epoch
-- changes when the history is rewritten (a compaction): the new epoch's
-- items are written whole and the old epoch's deleted, in the same
-- transaction as the checkpoint that refers to them.
CREATE TABLE history_items (
    task_id   TEXT    NOT NULL REFERENCES tasks (id),
    epoch     INTEGER NOT NULL CHECK (epoch >= 0),
    seq       INTEGER NOT NULL CHECK (seq >= 0),
    data_json TEXT    NOT NULL,
    PRIMARY KEY (task_id, epoch, seq)
) STRICT, WITHOUT ROWID;

PRAGMA user_version = 4;
