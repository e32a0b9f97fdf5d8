//! `rein-core` is the harness: the agent loop, the tools the model may call,
//! allow/ask/deny permissions, budgets and loop guards, the context manager,
//! the verifier and the task state machine. The model decides; this crate
//! does, and checks.
//!
//! It must never know LSP or any model wire format, and never touch the
//! editor or the disk directly: it reaches them only through the traits it
//! owns (`Workspace`, `Approver`, `ProgressSink`), implemented by the LSP
//! adapter and by the headless CLI.
//!
//! Not built yet: see the open issue "The harness core".
