//! "Fix this error with Rein": a diagnostic the editor shows (a type
//! error from pyright or mypy, a rustc error, a `tsc` error, a lint),
//! fixed, and shown fixed by the checker that reports it. Never "fixed" on
//! the model's word: the checker runs before the first edit (it must
//! report the diagnostic) and again on the exact text at the claim.
//!
//! # The API for front ends
//!
//! 1. **The diagnostic.** Convert the editor's diagnostic (LSP
//!    `codeAction` context, `vim.diagnostic`, a `FILE:LINE[:MESSAGE]`
//!    argument matched against a checker run) into a [`Diagnostic`] —
//!    workspace-relative path, 0-based range, severity, source, code as
//!    text, message — and call [`Diagnostic::cleaned`] on it (a path
//!    outside the workspace is refused; texts are bounded and stripped of
//!    control characters).
//! 2. **Can Rein check it?** `let project =
//!    os::checkers::scan(root, &diagnostic.path, std::env::var_os("PATH").as_deref(), trusted)`,
//!    then [`checker_for`]`(&diagnostic, &project, config.check_command.as_ref())`:
//!    `Ok(checker)` → offer "Fix this error with Rein" (or "…this
//!    warning"); `Err(NotCheckable)` → offer "Ask Rein…" with the
//!    diagnostic quoted, and show the reason (`Display`). `trusted`: the
//!    workspace trust decision; a checker installed inside the workspace
//!    (`node_modules/.bin`, `.venv/bin`) is the repository's code, used
//!    only when it is trusted.
//! 3. **The task.** [`TaskSpec::fix_diagnostic`]`(id, diagnostic)`, then
//!    [`TaskSpec::with_suppressions`]`(config.allow_suppressions)`.
//!    The task's kind is [`TaskKind::FixDiagnostic`]; its title is
//!    "Fix error in app.py:7".
//! 4. **The verifier**, in the front end's `Setup::prepare`, for a
//!    `FixDiagnostic` task instead of `TestVerifier` (the same executor:
//!    the checker runs in the sandbox as kind [`CommandKind::Check`]):
//!    ```ignore
//!    let setup = CheckSetup {
//!        checker,                       // step 2, again
//!        timeout: agent.budgets.test_timeout,
//!        test_command,                  // as for TestVerifier
//!        test_timeout: agent.budgets.test_timeout,
//!        allow_suppressions: config.allow_suppressions,
//!    };
//!    let verifier = match baseline {
//!        Some(b) => DiagnosticVerifier::with_baseline(setup, b),
//!        None => DiagnosticVerifier::prepare(task, workspace, exec.as_ref(), setup, &artifacts_dir, cancel).await,
//!    }
//!    .map_err(|e| e.to_string())?;   // the task fails at once, saying why
//!    ```
//!    `prepare` runs the checker before any change: an `Err(CannotCheck)`
//!    says the checker did not run, or did not report the diagnostic (it
//!    may be fixed already, or the checker sees the project otherwise
//!    than the editor's server).
//! 5. **The verdict** comes as for tests (`Verdict`, `Evidence`): verified
//!    only when the checker no longer reports the diagnostic, reports no
//!    new problem in the files the task touched, nothing was silenced, and
//!    the tests that passed before still pass (with a test command).
//!
//! # Parts
//! [`diagnostic`] (the types), [`checker`] (which command confirms a
//! diagnostic), [`parse`] (one reader per output format), [`matching`]
//! (finding it, following its line through the edits, new problems),
//! [`silencing`] (suppression comments and the checker's configuration),
//! [`run`] (a checker run through the task's `Exec`). The verifier is
//! `verify::DiagnosticVerifier`.
//!
//! [`TaskSpec::fix_diagnostic`]: crate::task::TaskSpec::fix_diagnostic
//! [`TaskSpec::with_suppressions`]: crate::task::TaskSpec::with_suppressions
//! [`TaskKind::FixDiagnostic`]: crate::task::TaskKind::FixDiagnostic
//! [`CommandKind::Check`]: crate::exec::CommandKind::Check

pub mod checker;
pub mod diagnostic;
pub mod matching;
pub mod parse;
pub mod run;
pub mod silencing;

pub use crate::verify::diagnostic::{CannotCheck, CheckSetup, DiagnosticVerifier};
pub use checker::{CheckCommand, Checker, NotCheckable, Project, Tool, checker_for};
pub use diagnostic::{BadDiagnostic, Diagnostic, Position, Range, Reported, Severity};
pub use parse::Format;
