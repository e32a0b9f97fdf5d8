//! `rein-store` makes tasks survive crashes: SQLite state (tasks, turns,
//! checkpoints, artifacts) and the op log, in `<workspace>/.rein/state.db`,
//! plus one JSONL trace per task.
//!
//! It must never decide policy or talk to the editor or a model; it records
//! and answers. Every op-log step is committed before the caller acts on it,
//! and nothing secret (API keys, matches of secret patterns) is ever written.
//!
//! Not built yet: see the open issue "Task state that survives crashes".
