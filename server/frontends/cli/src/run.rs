//! `rein run`: the agent of the editor, with a terminal instead of an
//! editor. The workspace is the disk (`DiskWorkspace`, edits confirmed on
//! the terminal with a diff, or approved by `--yes`), commands run with
//! `ProcessExec`; the task's life (its record, set-up, trace) is the task
//! host's, set up by the task service (`rein_app::service`), exactly as for the editor.
//!
//! stderr carries the progress and the questions; stdout only the result:
//! the state, the reason, a diff of every file changed, the evidence and
//! the spend. The exit code is 0 only for a verified success; 3 for a fix
//! the tests could not confirm (`unverified`); 1 for any other end (failed,
//! budget exhausted, waiting for an answer); 2 for a bad invocation
//! (target, workspace, configuration); 130 after Ctrl-C.
//!
//! What is printed is inert (`terminal::inert`): names, paths, commands,
//! test names and diffs come from the repository and the model.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write as _};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rein_core::agent::Outcome;
use rein_core::cancel::CancelReason;
use rein_core::os::disk::DiskWorkspace;
use rein_core::os::user_state::UserState;
use rein_core::ports::Evidence;
use rein_core::task::{TaskId, TaskSpec, TaskState};
use rein_core::task_host::FrontEnd;
use rein_core::trust::{self, Trust, TrustSource};
use rein_core::workspace::Workspace;
use serde_json::Value;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio_util::sync::CancellationToken;

use crate::args::RunArgs;
use crate::run_result::RunResult;
use crate::terminal::{
    Before, Terminal, TerminalApprover, TerminalConfirm, TerminalProgress, TrackedWorkspace,
    deletion_diff, fmt_duration_ms, fmt_tokens, inert, paint_diff, unified_diff,
};
use rein_app::fix_error::ErrorTarget;
use rein_app::service::{Launch, Notice, ServiceOptions, TaskService};
use rein_app::settings;

/// A bad invocation: the target, the workspace or the configuration.
const EXIT_USAGE: u8 = 2;
/// The task ran to the end and the tests exited 0, but Rein could not see
/// the target pass: not "fixed", and not a failure either.
const EXIT_UNVERIFIED: u8 = 3;
/// Cancelled with Ctrl-C (128 + SIGINT, as shells report it).
const EXIT_INTERRUPTED: u8 = 130;

pub fn main(args: RunArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("rein run: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(run(args));
    // A prompt's read of stdin may still be parked in read(2); don't wait.
    runtime.shutdown_background();
    code
}

async fn run(args: RunArgs) -> ExitCode {
    match try_run(args).await {
        Ok(code) => code,
        Err(message) => {
            // It may name a test or a path of the repository.
            eprintln!("rein run: {}", inert::block(&message));
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// `Err` is a usage error (exit 2), before the task started.
async fn try_run(args: RunArgs) -> Result<ExitCode, String> {
    let given = match &args.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?,
    };
    let disk = DiskWorkspace::new(&given)
        .map_err(|e| format!("the workspace {}: {e}", given.display()))?;
    let root = disk.root().to_path_buf();
    let error_target = args
        .fix_error
        .as_deref()
        .map(ErrorTarget::parse)
        .transpose()?;
    let spec = match &error_target {
        // Found once the settings are known: the checker is theirs.
        Some(_) => None,
        None => Some(task_spec(&disk, &args).await?),
    };
    let terminal = Terminal::stdio();
    let assessment = settings::Assessment::of(&root, &Value::Null)?;
    let trust = workspace_trust(
        &assessment,
        &root,
        args.trust_workspace,
        &terminal,
        std::io::stdin().is_terminal(),
        settings::user_state().as_ref(),
    )
    .await;
    let config = assessment.config(&trust)?;
    tell_ignored(&terminal, assessment.files, &config.ignored);

    // Ctrl-C from here on cancels the task instead of killing the process.
    let cancel = CancellationToken::new();
    let interrupted = Arc::new(AtomicBool::new(false));
    let interrupts =
        signal(SignalKind::interrupt()).map_err(|e| format!("cannot watch for Ctrl-C: {e}"))?;
    let watcher = tokio::spawn(cancel_on_ctrl_c(
        interrupts,
        cancel.clone(),
        Arc::clone(&interrupted),
        Arc::clone(&terminal),
    ));
    let disk = disk.with_confirm(Arc::new(TerminalConfirm {
        terminal: Arc::clone(&terminal),
        yes: args.yes,
    }));
    let workspace = Arc::new(TrackedWorkspace::new(disk));
    // The task's durable record (what recovery needs after a crash), taken
    // before anything runs; every sink of the task redacts with the same
    // redactor: state, trace, logs, artifacts. One task: its MCP servers
    // stop with it (when the service is dropped).
    let launch = Launch {
        config: &config,
        // With --yes nobody answers questions.
        answers_questions: !args.yes,
    };
    let service = TaskService::open(&root, ServiceOptions::this_process()).map_err(|e| {
        watcher.abort();
        format!("cannot start the task: {e}")
    })?;
    let spec = match (spec, &error_target) {
        (Some(spec), _) => spec,
        (None, Some(target)) => {
            terminal.line(&format!(
                "rein run: asking the project's checker about {}",
                inert::line(&target.to_string())
            ));
            let diagnostic = service
                .find_diagnostic(target, &config, &cancel)
                .await
                .map_err(|e| {
                    watcher.abort();
                    format!("cannot start the task: {e}")
                })?;
            TaskSpec::fix_diagnostic(TaskId::generate(), diagnostic)
        }
        (None, None) => {
            watcher.abort();
            return Err("say what to do".to_owned());
        }
    };
    let started = service
        .start(spec, &launch, workspace.as_ref(), &cancel)
        .await
        .map_err(|e| {
            watcher.abort();
            format!("cannot start the task: {e}")
        })?;
    let ready = started.ready;
    let progress = Arc::new(TerminalProgress::new(Arc::clone(&terminal)));
    let spec = ready.spec();

    terminal.line(&format!(
        "rein run · task {} · {}/{} · up to {} turns{}",
        spec.id,
        config.provider.provider.name(),
        inert::line(&config.provider.model),
        ready.prepared().config.budgets.max_turns,
        if args.yes { " · --yes" } else { "" }
    ));
    terminal.line(&format!(
        "  workspace: {}",
        inert::line(&root.display().to_string())
    ));
    terminal.line(&format!("  goal: {}", spec.goal));
    for notice in &started.notices {
        match notice {
            Notice::SetUp(notice) => terminal.line(&format!("  warning: {}", inert::line(notice))),
            Notice::SandboxIncomplete { missing } => terminal.line(&format!(
                "  warning: the sandbox is incomplete here ({}): every command, the tests included, is asked about",
                missing.join("; ")
            )),
        }
    }

    let front = FrontEnd {
        workspace: Arc::clone(&workspace) as Arc<dyn Workspace>,
        approver: Arc::new(TerminalApprover {
            terminal: Arc::clone(&terminal),
            yes: args.yes,
        }),
        events: Arc::clone(&progress) as _,
    };
    let task_id = spec.id.clone();
    let started = std::time::Instant::now();
    let outcome = ready.run(front, cancel, CancelReason::default()).await;
    let wall_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    watcher.abort();
    progress.finish(outcome.state);

    let changed = workspace.changed();
    if let Some(path) = &args.result_json {
        let result = RunResult::new(
            &task_id.0,
            &outcome,
            (config.provider.provider.name(), &config.provider.model),
            wall_ms,
            changed.keys().cloned().collect(),
        );
        if let Err(e) = result.write(path) {
            terminal.line(&format!("rein run: {e}"));
        }
    }
    let changes = changes(&root, &changed).await;
    let color = std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let report = report(
        &task_id,
        &outcome,
        &changes,
        progress.last_verification(),
        color,
    );
    // stdout is `rein run`'s result channel (unlike `rein lsp`'s).
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(report.as_bytes());
    let _ = stdout.flush();
    if !changed.is_empty() {
        terminal.line(&format!(
            "  to take these changes back (keeping yours since): rein undo {task_id}"
        ));
    }

    Ok(ExitCode::from(match outcome.state {
        TaskState::Succeeded => 0,
        TaskState::Unverified => EXIT_UNVERIFIED,
        TaskState::Cancelled if interrupted.load(Ordering::SeqCst) => EXIT_INTERRUPTED,
        _ => 1,
    }))
}

/// Whether the workspace's own settings count: `--trust-workspace`, the
/// user's stored answer about this very file, or — on a terminal — the
/// user's answer now (remembered). Piped input is never taken as consent:
/// without one of these, the file only tightens.
async fn workspace_trust(
    assessment: &settings::Assessment,
    root: &Path,
    flag: bool,
    terminal: &Terminal,
    interactive: bool,
    state: Option<&UserState>,
) -> Trust {
    if flag && !assessment.grants.is_empty() {
        return Trust {
            trusted: true,
            why: TrustSource::Flag,
        };
    }
    if let Some(trust) = assessment.known_trust(root, None, state) {
        return trust;
    }
    let untrusted = Trust {
        trusted: false,
        why: TrustSource::NoAnswer,
    };
    let (true, Some(fingerprint)) = (interactive, assessment.fingerprint()) else {
        return untrusted;
    };
    // Inert already: every value from the file went through `trust::shown`.
    terminal.line(&trust::question(assessment.files, &assessment.grants));
    let Some(answer) = terminal.ask("Trust them? [y/N] ").await else {
        return untrusted;
    };
    let trusted = matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes");
    if let Some(state) = state
        && let Err(e) = state.record(root, fingerprint, trusted)
    {
        terminal.line(&format!(
            "rein: cannot remember the answer ({e}); it holds for this run"
        ));
    }
    Trust {
        trusted,
        why: TrustSource::Answered,
    }
}

/// What an untrusted workspace's settings asked for and did not get.
fn tell_ignored(terminal: &Terminal, files: &str, ignored: &[trust::Grant]) {
    if ignored.is_empty() {
        return;
    }
    terminal.line(&format!("rein: not trusted, so ignored from {files}:"));
    for grant in ignored {
        terminal.line(&format!("  • {grant}"));
    }
    terminal.line(
        "  (trust this folder's settings with `rein trust`, or for one run with --trust-workspace)",
    );
}

/// The first Ctrl-C cancels the task (it ends cleanly, its history
/// consistent, and the result is printed); a second one quits at once.
/// (`tokio::signal::ctrl_c` is this same SIGINT stream, but it registers
/// only when first polled; this one is in place before the task starts.)
async fn cancel_on_ctrl_c(
    mut interrupts: Signal,
    cancel: CancellationToken,
    interrupted: Arc<AtomicBool>,
    terminal: Arc<Terminal>,
) {
    if interrupts.recv().await.is_none() {
        return;
    }
    interrupted.store(true, Ordering::SeqCst);
    terminal.line("\nrein: cancelling the task (Ctrl-C again to quit at once)");
    cancel.cancel();
    if interrupts.recv().await.is_some() {
        std::process::exit(i32::from(EXIT_INTERRUPTED));
    }
}

// ------------------------------------------------------------ the task

async fn task_spec(disk: &DiskWorkspace, args: &RunArgs) -> Result<TaskSpec, String> {
    if let Some(target) = &args.fix_test {
        let (path, name) = rein_app::find_test::find_test(disk, target).await?;
        return Ok(TaskSpec::fix_test(TaskId::generate(), &path, &name));
    }
    match args.instruction.as_deref().map(str::trim) {
        Some(instruction) if !instruction.is_empty() => {
            Ok(TaskSpec::instruction(TaskId::generate(), instruction))
        }
        _ => Err(
            "say what to do: `rein run \"instruction\"`, `rein run --fix-test PATH::NAME` or `rein run --fix-error FILE:LINE[:MESSAGE]`"
                .to_owned(),
        ),
    }
}

// ----------------------------------------------------------- the result

/// One file the task changed, as shown in the result.
enum Change {
    Diff(String),
    /// Changed, but one side cannot be shown.
    Note(String),
}

/// A diff of every file the task changed against its content before the
/// task (files changed back to what they were are left out).
async fn changes(root: &Path, before: &std::collections::BTreeMap<String, Before>) -> Vec<Change> {
    let mut out = Vec::new();
    // Read beneath the workspace in one step: a link swapped in since
    // cannot put another file's text in the diff.
    let fs = match rein_fsroot::Root::open(root, rein_fsroot::Links::Within) {
        Ok(fs) => fs,
        Err(e) => {
            out.push(Change::Note(format!("cannot read the workspace now: {e}")));
            return out;
        }
    };
    for (path, before) in before {
        let read = {
            let (fs, path) = (fs.clone(), path.clone());
            tokio::task::spawn_blocking(move || fs.read_to_string(&path))
                .await
                .unwrap_or_else(|e| Err(std::io::Error::other(e)))
        };
        let now = match read {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                out.push(Change::Note(format!(
                    "{path}: changed (cannot read it now: {e})"
                )));
                continue;
            }
        };
        let change = match (before, now) {
            (Before::Text(old), Some(new)) => Change::Diff(unified_diff(path, Some(old), &new)),
            (Before::Absent, Some(new)) => Change::Diff(unified_diff(path, None, &new)),
            (Before::Text(old), None) => Change::Diff(deletion_diff(path, old)),
            (Before::Absent, None) => continue,
            (Before::Unknown, _) => Change::Note(format!(
                "{path}: changed (its content before the task could not be read to compare)"
            )),
        };
        match change {
            Change::Diff(diff) if diff.is_empty() => {
                // Unchanged in the end, or created empty (no lines to diff).
                if *before == Before::Absent {
                    out.push(Change::Note(format!("{path}: created, empty")));
                }
            }
            change => out.push(change),
        }
    }
    out
}

/// What stdout says at the end. Every field is one line ([`inert::line`]):
/// a line break in a reason or a path must not fake a line of the report.
fn report(
    task: &TaskId,
    outcome: &Outcome,
    changes: &[Change],
    last_check: Option<(bool, Vec<Evidence>)>,
    color: bool,
) -> String {
    let mut out = String::new();
    let line = |text: &str| inert::line(text).into_owned();
    let _ = writeln!(out, "state:  {}", outcome.state);
    let _ = writeln!(out, "reason: {}", line(&outcome.reason));
    let _ = writeln!(out, "task:   {}", line(&task.0));

    out.push('\n');
    if changes.is_empty() {
        out.push_str("files changed: none\n");
    } else {
        out.push_str("files changed:\n");
        for change in changes {
            match change {
                Change::Diff(diff) => {
                    let mut diff = diff.clone();
                    if !diff.ends_with('\n') {
                        diff.push('\n');
                    }
                    out.push_str(paint_diff(&diff, color).as_str());
                }
                Change::Note(note) => {
                    let _ = writeln!(out, "{}", line(note));
                }
            }
        }
    }

    out.push('\n');
    // The evidence of the success, else that of the last check that failed.
    let (title, evidence) = if !outcome.evidence.is_empty() {
        ("evidence:", outcome.evidence.clone())
    } else {
        match last_check {
            Some((false, evidence)) if !evidence.is_empty() => {
                ("evidence (the last check, which did not pass):", evidence)
            }
            _ => ("evidence: none", Vec::new()),
        }
    };
    let _ = writeln!(out, "{title}");
    for e in &evidence {
        let _ = writeln!(out, "  {}", line(&e.check));
        let _ = writeln!(out, "    command:  {}", line(&e.command));
        let exit = e
            .exit_code
            .map_or_else(|| "none (killed or not run)".to_owned(), |c| c.to_string());
        let _ = writeln!(out, "    exit:     {exit}");
        let _ = writeln!(out, "    duration: {}", fmt_duration_ms(e.duration_ms));
        let _ = writeln!(out, "    log:      {}", line(&e.log_path));
        if !e.sandbox.is_empty() {
            let _ = writeln!(out, "    sandbox:  {}", line(&e.sandbox));
        }
        if !e.files.is_empty() {
            let files: Vec<String> = e
                .files
                .iter()
                .map(|(path, hash)| format!("{} #{}", line(path), &hash.to_hex()[..8]))
                .collect();
            let _ = writeln!(out, "    files:    {}", files.join(", "));
        }
        if !e.failures.is_empty() {
            let _ = writeln!(out, "    failing:  {}", line(&e.failures.join(", ")));
        }
    }

    out.push('\n');
    let spent = &outcome.spent;
    let _ = writeln!(
        out,
        "spent:  {} turn{} · {} ({} in, {} out) · {}",
        spent.turns,
        if spent.turns == 1 { "" } else { "s" },
        fmt_tokens(spent.tokens()),
        fmt_tokens(spent.usage.total_input()).trim_end_matches(" tok"),
        fmt_tokens(spent.usage.output_tokens).trim_end_matches(" tok"),
        // Never "$0.00" for a cost Rein does not know.
        rein_app::format::cost(spent.cost_usd, spent.unpriced_calls)
    );
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use rein_core::budget::Spent;

    use super::*;

    #[test]
    fn the_result_says_what_happened_and_what_proves_it() {
        let mut spent = Spent {
            turns: 4,
            cost_usd: 0.0412,
            ..Spent::default()
        };
        spent.usage.input_tokens = 17_000;
        spent.usage.output_tokens = 1_200;
        let outcome = Outcome {
            state: TaskState::Succeeded,
            cause: rein_core::agent::StopCause::Verified,
            reason: "fixed: `TestCart.test_total` passes in 4 turns".into(),
            spent,
            evidence: vec![Evidence {
                check: "test_passes tests/test_cart.py::TestCart.test_total".into(),
                command: "python3 -m unittest tests.test_cart.TestCart.test_total".into(),
                exit_code: Some(0),
                duration_ms: 120,
                files: vec![("cart.py".into(), rein_text::ContentHash::of_str("x"))],
                log_path: "/w/.rein/artifacts/t-1/verify-1.log".into(),
                failures: Vec::new(),
                sandbox: String::new(),
            }],
            final_text: None,
            history: Default::default(),
        };
        let changes = vec![
            Change::Diff(unified_diff("cart.py", Some("a\nb\n"), "a\nc\n")),
            Change::Note(
                "big.txt: changed (its content before the task could not be read to compare)"
                    .into(),
            ),
        ];
        let hash = &rein_text::ContentHash::of_str("x").to_hex()[..8];
        assert_eq!(
            report(&TaskId("t-1".into()), &outcome, &changes, None, false),
            format!(
                "state:  succeeded
reason: fixed: `TestCart.test_total` passes in 4 turns
task:   t-1

files changed:
--- a/cart.py
+++ b/cart.py
@@ -1,2 +1,2 @@
 a
-b
+c
big.txt: changed (its content before the task could not be read to compare)

evidence:
  test_passes tests/test_cart.py::TestCart.test_total
    command:  python3 -m unittest tests.test_cart.TestCart.test_total
    exit:     0
    duration: 0.12s
    log:      /w/.rein/artifacts/t-1/verify-1.log
    files:    cart.py #{hash}

spent:  4 turns · 18.2k tok (17.0k in, 1.2k out) · $0.04
"
            )
        );
    }

    /// A reason, a path or a failing test's name with a line break or an
    /// escape sequence stays on its line, escaped: it cannot add a
    /// `state:  succeeded` line to the result nor erase one.
    #[test]
    fn a_result_with_escape_sequences_cannot_fake_its_lines() {
        let outcome = Outcome {
            state: TaskState::WaitingUser,
            cause: rein_core::agent::StopCause::WaitingForUser,
            reason: "waiting for the user's answer to: ok?\nstate:  succeeded".into(),
            spent: Spent::default(),
            evidence: Vec::new(),
            final_text: None,
            history: Default::default(),
        };
        let changes = vec![Change::Note("x\x1b[1A\x1b[2K.py: created, empty".into())];
        let last_check = Evidence {
            check: "suite".into(),
            command: "pytest\r".into(),
            exit_code: Some(1),
            duration_ms: 10,
            files: Vec::new(),
            log_path: ".rein/a.log".into(),
            failures: vec!["test_a\u{202e}".into()],
            sandbox: String::new(),
        };
        assert_eq!(
            report(
                &TaskId("t-1".into()),
                &outcome,
                &changes,
                Some((false, vec![last_check])),
                false
            ),
            "state:  waiting_user
reason: waiting for the user's answer to: ok?\\nstate:  succeeded
task:   t-1

files changed:
x\\x1b[1A\\x1b[2K.py: created, empty

evidence (the last check, which did not pass):
  suite
    command:  pytest\\r
    exit:     1
    duration: 0.01s
    log:      .rein/a.log
    failing:  test_a\\u{202e}

spent:  0 turns · 0 tok (0 in, 0 out) · $0.00
"
        );
    }
}
