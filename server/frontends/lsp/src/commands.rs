//! `workspace/executeCommand`: each command answers at once; tasks run in
//! the background.

use std::sync::Arc;

use rein_core::task::{TaskId, TaskSpec};
use rein_core::testfind;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tower_lsp_server::Client;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};

use crate::ext::{
    AnswerArgs, FixErrorArgs, FixTestArgs, RunTaskArgs, TaskIdArgs, TrustArgs, commands,
};
use crate::session::Session;
use crate::tasks;

pub async fn execute(
    session: &Arc<Session>,
    client: &Client,
    command: &str,
    arguments: Vec<Value>,
) -> Result<Option<Value>> {
    match command {
        commands::FIX_TEST => {
            let args: FixTestArgs = argument(command, arguments)?;
            let spec = fix_test_spec(session, &args).await?;
            Ok(Some(json!({"taskId": tasks::start(session, client, spec)})))
        }
        commands::FIX_ERROR => {
            let args: FixErrorArgs = argument(command, arguments)?;
            let spec = fix_error_spec(session, &args)?;
            Ok(Some(json!({"taskId": tasks::start(session, client, spec)})))
        }
        commands::RUN_TASK => {
            let args: RunTaskArgs = argument(command, arguments)?;
            let spec = run_task_spec(session, &args)?;
            Ok(Some(json!({"taskId": tasks::start(session, client, spec)})))
        }
        commands::CANCEL_TASK => {
            let args: TaskIdArgs = argument(command, arguments)?;
            Ok(Some(
                json!({"cancelled": session.tasks.cancel(&args.task_id)}),
            ))
        }
        commands::ANSWER => {
            let args: AnswerArgs = argument(command, arguments)?;
            session
                .tasks
                .answer(&args.task_id, args.text)
                .map_err(invalid)?;
            Ok(Some(json!({"answered": true})))
        }
        commands::RESUME_TASK => {
            let args: TaskIdArgs = argument(command, arguments)?;
            check_resumable(session, &args.task_id)?;
            adopt(session, &args.task_id)?;
            Ok(Some(
                json!({"taskId": tasks::resume(session, client, TaskId(args.task_id))}),
            ))
        }
        commands::UNDO_TASK => {
            let args: TaskIdArgs = argument(command, arguments)?;
            crate::undo::start(session, client, TaskId(args.task_id.clone()));
            Ok(Some(json!({"taskId": args.task_id, "undoing": true})))
        }
        commands::TRUST_WORKSPACE => {
            let args: TrustArgs = argument(command, arguments)?;
            crate::lsp_trust::set_trust(session, args.trusted)
                .map(Some)
                .map_err(invalid)
        }
        other => Err(invalid(format!(
            "unknown command {other:?}; Rein's commands are {}",
            commands::ALL.join(", ")
        ))),
    }
}

/// A task can be resumed if it exists, is not running here, and did not end.
fn check_resumable(session: &Session, id: &str) -> Result<()> {
    if session.tasks.is_running(id) {
        return Err(invalid(format!("task {id} is already running")));
    }
    let store = session.store().map_err(invalid)?;
    let record = store
        .task(id)
        .map_err(|e| invalid(e.to_string()))?
        .ok_or_else(|| invalid(format!("there is no task {id} in this workspace")))?;
    if record
        .state
        .parse::<rein_core::task::TaskState>()
        .is_ok_and(|state| state.is_end())
    {
        return Err(invalid(format!(
            "task {id} already ended ({}: {}); start a new one",
            record.state,
            record.reason.unwrap_or_default()
        )));
    }
    Ok(())
}

/// The user resumes this task by hand: from now on it is this
/// installation's, resumed unasked after a crash like its own.
fn adopt(session: &Session, id: &str) -> Result<()> {
    let Some(installation) = session.installation.as_deref() else {
        return Ok(());
    };
    let store = session.store().map_err(invalid)?;
    store
        .adopt_task(id, installation)
        .map_err(|e| invalid(e.to_string()))
}

fn invalid(message: impl Into<String>) -> Error {
    Error {
        code: ErrorCode::InvalidParams,
        message: message.into().into(),
        data: None,
    }
}

/// Every command takes exactly one object argument.
fn argument<T: DeserializeOwned>(command: &str, arguments: Vec<Value>) -> Result<T> {
    let [argument]: [Value; 1] = arguments.try_into().map_err(|a: Vec<Value>| {
        invalid(format!(
            "{command} takes exactly one object argument, got {}",
            a.len()
        ))
    })?;
    serde_json::from_value(argument)
        .map_err(|e| invalid(format!("invalid argument for {command}: {e}")))
}

async fn fix_test_spec(session: &Session, args: &FixTestArgs) -> Result<TaskSpec> {
    let path = session.relative_path(&args.uri).ok_or_else(|| {
        invalid(format!(
            "{} is not inside the workspace folder",
            args.uri.as_str()
        ))
    })?;
    let lang = testfind::lang_for_path(&path)
        .ok_or_else(|| invalid(format!("Rein does not know how to find tests in {path}")))?;
    let text = match session.docs.snapshot(args.uri.as_str()) {
        Some(snapshot) => snapshot.text(),
        None => {
            let root = session
                .root
                .get()
                .ok_or_else(|| invalid("no workspace folder is open"))?;
            tokio::fs::read_to_string(root.join(&path))
                .await
                .map_err(|e| invalid(format!("cannot read {path}: {e}")))?
        }
    };
    // The name the client sent, else the test at the position.
    let test = testfind::find(&text, lang, &args.test_name)
        .or_else(|| testfind::test_at(&text, lang, args.position.line as usize))
        .ok_or_else(|| {
            invalid(format!(
                "there is no test named {} in {path}",
                args.test_name
            ))
        })?;
    Ok(TaskSpec::fix_test(
        TaskId::generate(),
        &path,
        &test.qualified,
    ))
}

/// The task of "Fix this error with Rein": whether its checker can run
/// is the task's set-up's to say (it fails at once, saying why).
fn fix_error_spec(session: &Session, args: &FixErrorArgs) -> Result<TaskSpec> {
    let path = session.relative_path(&args.uri).ok_or_else(|| {
        invalid(format!(
            "{} is not inside the workspace folder",
            args.uri.as_str()
        ))
    })?;
    let diagnostic = crate::fix_error::diagnostic(&path, &args.diagnostic).ok_or_else(|| {
        invalid("Rein fixes errors and warnings with a message, in a file of the workspace folder")
    })?;
    Ok(TaskSpec::fix_diagnostic(TaskId::generate(), diagnostic))
}

fn run_task_spec(session: &Session, args: &RunTaskArgs) -> Result<TaskSpec> {
    let instruction = args.instruction.trim();
    if instruction.is_empty() {
        return Err(invalid(
            "rein.runTask needs an instruction: say what Rein should do",
        ));
    }
    let location = match (&args.uri, &args.range) {
        (Some(uri), range) => session.relative_path(uri).map(|path| match range {
            Some(r) if r.start.line != r.end.line => format!(
                " (about {path}, lines {}-{})",
                r.start.line + 1,
                r.end.line + 1
            ),
            Some(r) => format!(" (about {path}, line {})", r.start.line + 1),
            None => format!(" (about {path})"),
        }),
        _ => None,
    };
    let mut goal = format!("{instruction}{}", location.unwrap_or_default());
    if let Some(about) = args.about.as_deref().map(rein_core::inert::line) {
        goal.push_str(&format!("\nIt is about this diagnostic: {about}"));
    }
    Ok(TaskSpec::instruction(TaskId::generate(), &goal))
}
