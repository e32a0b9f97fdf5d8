//! One prompt, run: the trust question first, then a new task (or the
//! interrupted one, for `/resume`) on the client's files or the disk,
//! through the task host, with the panel's permissions, terminal and
//! updates; how it ended, as ACP's stop reason and the final message.

use std::sync::Arc;

use agent_client_protocol::v1::schema::{PromptRequest, StopReason};
use rein_app::fix_error::ErrorTarget;
use rein_core::agent::{Outcome, StopCause};
use rein_core::cancel::CancelReason;
use rein_core::os::disk::DiskWorkspace;
use rein_core::task::{TaskId, TaskSpec};
use rein_core::task_host::{FrontEnd, RunningTasks};
use tokio_util::sync::CancellationToken;

use super::approve::{AcpApprover, AcpConfirm, CurrentCall, Permissions};
use super::read_cache::ReadCache;
use super::session::AcpSession;
use super::updates::AcpProgress;
use super::verdict::{Checks, final_message};
use super::writes::Writes;
use super::{Connection, prompt, saved, terminal, undo, workspace};
use rein_app::service::{Launch, Notice, Resumed, ServiceOptions, TaskService};
use rein_app::setup as launch;

/// What the client offers to do for Rein.
#[derive(Clone, Copy)]
pub struct ClientOffers {
    pub fs: bool,
    pub terminal: bool,
}

/// What a prompt does: start a task, go on with one a crash stopped, or
/// take back the last one's changes.
enum Start {
    New(rein_core::task::TaskSpec),
    /// A new task on the diagnostic at this place.
    FixError(ErrorTarget),
    Resume(TaskId),
    Undo,
}

/// Runs one prompt as a task; how it ended, as ACP's stop reason (the
/// final message, with the verdict and its evidence, is sent before).
pub async fn run_prompt(
    session: &Arc<AcpSession>,
    request: &PromptRequest,
    cx: Connection,
    (cancel, reason): (CancellationToken, CancelReason),
    running: &Arc<RunningTasks>,
    client: ClientOffers,
) -> StopReason {
    let call = Arc::new(CurrentCall::default());
    let permissions = |redactor: &rein_models::Redactor, outside_sandbox: bool| Permissions {
        cx: cx.clone(),
        session_id: session.id.clone(),
        rules: Arc::clone(&session.rules),
        call: Arc::clone(&call),
        redactor: redactor.clone(),
        cancel: cancel.clone(),
        outside_sandbox,
    };
    // The answer decides the settings the task runs with.
    if let Some(question) = session.take_trust_question() {
        let redactor = session
            .config()
            .map(|c| launch::redactor(&c))
            .unwrap_or_default();
        let answer = permissions(&redactor, false)
            .ask_trust(&question.text)
            .await;
        if let Err(e) = session.decide_trust(question, answer) {
            tracing::warn!(error = %e, "the trust answer could not be applied");
        }
    }
    let config = match session.config() {
        Ok(config) => config,
        Err(e) => {
            tracing::error!(error = %e, "no settings for the prompt");
            return StopReason::EndTurn;
        }
    };
    let config = &config;
    let redactor = launch::redactor(config);
    let in_terminal = config.client_terminal && client.terminal;
    let permissions = permissions(&redactor, in_terminal);
    // Until the task is prepared (and its window known), messages go out
    // through a progress sink of its own.
    let say = |text: &str| {
        AcpProgress::new(
            cx.clone(),
            session.id.clone(),
            session.root.clone(),
            redactor.clone(),
            Arc::clone(&call),
            0,
            false,
        )
        .say(text)
    };
    for notice in session.take_notices() {
        say(&format!("{notice}\n\n"));
    }
    let disk = match DiskWorkspace::new(&session.root) {
        Ok(disk) => disk,
        Err(e) => {
            say(&format!(
                "Rein cannot work in {}: {e}\n",
                session.root.display()
            ));
            return StopReason::EndTurn;
        }
    };
    let start = if saved::is_command(&request.prompt, undo::UNDO) {
        Start::Undo
    } else if saved::is_command(&request.prompt, saved::RESUME) {
        match session.take_interrupted() {
            Some(task) => Start::Resume(task),
            None => {
                say("There is nothing to resume in this session.\n");
                return StopReason::EndTurn;
            }
        }
    } else {
        match prompt::task_spec(&disk, &request.prompt, session.earlier_context()).await {
            Ok(prompt::Asked::Task(spec)) => Start::New(spec),
            Ok(prompt::Asked::FixError(target)) => Start::FixError(target),
            Err(why) => {
                say(&format!("{why}\n"));
                return StopReason::EndTurn;
            }
        }
    };
    let confirm = Arc::new(AcpConfirm {
        permissions: permissions.clone(),
        root: session.root.clone(),
    });
    let disk = disk.with_confirm(confirm.clone());
    let cache = Arc::new(ReadCache::default());
    let (workspace, client_files): (Arc<dyn rein_core::workspace::Workspace>, _) = if client.fs {
        let files = workspace::ClientFiles {
            cx: cx.clone(),
            session_id: session.id.clone(),
        };
        let live = Arc::new(workspace::AcpWorkspace::new(
            disk,
            files,
            confirm,
            Arc::clone(&cache),
        ));
        (Arc::clone(&live) as _, Some(live))
    } else {
        (Arc::new(disk), None)
    };
    let service = match TaskService::open(
        &session.root,
        ServiceOptions {
            mcp: Arc::clone(&session.mcp),
            running: Arc::clone(running),
            ..ServiceOptions::this_process()
        },
    ) {
        Ok(service) => service,
        Err(e) => {
            say(&format!("Rein could not start the task: {e}\n"));
            return StopReason::EndTurn;
        }
    };
    let launch = Launch {
        config,
        // ACP has no way to put the model's questions to the user.
        answers_questions: false,
    };
    let start = match start {
        Start::FixError(target) => {
            say(&format!(
                "Asking the project's checker about {}…\n",
                rein_core::inert::line(&target.to_string())
            ));
            match service.find_diagnostic(&target, config, &cancel).await {
                Ok(diagnostic) => {
                    Start::New(TaskSpec::fix_diagnostic(TaskId::generate(), diagnostic))
                }
                Err(e) => {
                    say(&format!("Rein could not start the task: {e}\n"));
                    return StopReason::EndTurn;
                }
            }
        }
        other => other,
    };
    let started = match start {
        Start::Undo => {
            say(&undo::undo_last(&service, &session.id, workspace.as_ref()).await);
            return StopReason::EndTurn;
        }
        Start::New(spec) => {
            let task = spec.id.clone();
            let started = service
                .start(spec, &launch, workspace.as_ref(), &cancel)
                .await;
            if started.is_ok() {
                let words = redactor
                    .redact(&prompt::prompt_words(&request.prompt))
                    .into_owned();
                if let Err(e) =
                    saved::record(service.store(), &session.id, &session.root, &task, &words)
                {
                    // The task runs; only `session/load` will not find it.
                    tracing::warn!(error = %e, "the session's task was not recorded");
                }
            }
            started
        }
        Start::FixError(_) => return StopReason::EndTurn, // made New above
        Start::Resume(task) => {
            let adopt = |paths: &[String]| {
                if let Some(files) = &client_files {
                    files.adopt_written(paths);
                }
            };
            match service
                .resume(&task, &launch, workspace.as_ref(), adopt, &cancel)
                .await
            {
                Ok(Resumed::Started(started)) => Ok(*started),
                Ok(Resumed::NeedsUser { reason }) => {
                    // Reality is unknown: the user looks first, then says go on.
                    session.set_interrupted(Some(task));
                    say(&format!(
                        "{reason}\nSend /{} when you have.\n",
                        saved::RESUME
                    ));
                    return StopReason::EndTurn;
                }
                Err(e) => Err(e),
            }
        }
    };
    let started = match started {
        Ok(started) => started,
        Err(e) => {
            say(&format!("Rein could not start the task: {e}\n"));
            return StopReason::EndTurn;
        }
    };
    for notice in &started.notices {
        match notice {
            Notice::SetUp(notice) => say(&format!("Warning: {notice}\n")),
            // The permission requests say it for each command.
            Notice::SandboxIncomplete { .. } => {}
        }
    }
    let ready = started.ready;
    let ready = if in_terminal {
        ready.route_commands(|inner| {
            Arc::new(terminal::ClientTerminal {
                inner,
                cx: cx.clone(),
                session_id: session.id.clone(),
                call: Arc::clone(&call),
            })
        })
    } else {
        if config.client_terminal {
            say(
                "Warning: client_terminal is set, but this panel offers no terminal: commands run in Rein's sandbox.\n",
            );
        }
        ready
    };
    let mut progress = AcpProgress::new(
        cx.clone(),
        session.id.clone(),
        session.root.clone(),
        redactor,
        Arc::clone(&call),
        ready.prepared().config.context.window_tokens,
        !ready.spec().acceptance.is_empty(),
    );
    progress.cache = Some(cache);
    let progress = Arc::new(progress);
    let writes = Writes {
        root: session.root.clone(),
        mode: config.sandbox.mode,
        writable: config.sandbox.writable_roots.clone(),
        confinement: ready.prepared().exec.confinement(),
    };
    let front = FrontEnd {
        workspace,
        approver: Arc::new(AcpApprover {
            permissions,
            writes,
        }),
        events: Arc::clone(&progress) as _,
    };
    let task = ready.spec().id.clone();
    let goal = ready.spec().goal.clone();
    let outcome = ready.run(front, cancel, reason).await;
    let mut reason = outcome.reason.clone();
    let interrupted = progress.interrupted();
    if !interrupted.is_empty() {
        // The next prompt must not take them for calls that never ran.
        reason.push_str(&format!(
            "; interrupted while under way, so they may have run in part: {}",
            interrupted.join(", ")
        ));
    }
    session.remember(
        goal.lines().next().unwrap_or_default(),
        &outcome.state.to_string(),
        &reason,
    );
    tracing::info!(%task, state = %outcome.state, reason = %outcome.reason, "ACP prompt ended");
    let checks = if progress.checks {
        Checks::Ran
    } else {
        Checks::None {
            changed: Some(progress.changed()),
        }
    };
    progress.say(&final_message(&outcome, &progress.last_evidence(), &checks));
    if !progress.changed().is_empty() {
        super::redact::send_update(
            &cx,
            &launch::redactor(config),
            &session.id,
            undo::undo_command(),
        );
    }
    stop_reason(&outcome)
}

/// How a task's end reads in ACP's terms: `end_turn` once the task has a
/// verdict (good or bad: the final message says which), `cancelled`,
/// `max_turn_requests` for a budget, `refusal` for a model that refused.
fn stop_reason(outcome: &Outcome) -> StopReason {
    match outcome.cause {
        StopCause::Cancelled => StopReason::Cancelled,
        StopCause::Budget => StopReason::MaxTurnRequests,
        StopCause::Refused => StopReason::Refusal,
        _ => StopReason::EndTurn,
    }
}
