//! `rein.undoTask {taskId}`: takes back an ended task's changes through
//! the editor's live buffers (`workspace/applyEdit`, minimal hunks, each
//! confirmed by the editor's `didChange`), keeping what the user typed
//! since; a file where the user changed what the task changed is left as
//! it is. The command answers at once (no handler awaits the editor);
//! the undo runs in the background and ends with `rein/undone` and a
//! message in the user's words.

use std::sync::Arc;

use rein_app::undo::{UndoReport, Undone};
use rein_core::inert;
use rein_core::task::TaskId;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::MessageType;

use crate::ext::{UNDONE, UndoneFile, UndoneParams};
use crate::lsp_workspace::LspWorkspace;
use crate::session::Session;

/// Starts undoing `task` in the background.
pub fn start(session: &Arc<Session>, client: &Client, task: TaskId) {
    let (session, client) = (Arc::clone(session), client.clone());
    tokio::spawn(async move {
        let params = match undo(&session, &client, &task).await {
            Ok(report) => params(&report),
            Err(reason) => UndoneParams {
                task_id: task.0.clone(),
                summary: format!("Rein did not undo the task: {reason}"),
                incomplete: true,
                refused: true,
                files: Vec::new(),
            },
        };
        let kind = if params.refused {
            MessageType::ERROR
        } else if params.incomplete {
            MessageType::WARNING
        } else {
            MessageType::INFO
        };
        client.show_message(kind, message(&params)).await;
        client.send_notification::<UndoneNotification>(params).await;
    });
}

async fn undo(
    session: &Arc<Session>,
    client: &Client,
    task: &TaskId,
) -> Result<UndoReport, String> {
    if session.tasks.is_running(&task.0) {
        return Err("the task is still running; cancel it first, then undo its changes".into());
    }
    let root = session
        .root
        .get()
        .cloned()
        .ok_or("no workspace folder is open in the editor")?;
    let service = session.service()?;
    let workspace = LspWorkspace::for_undo(root, client.clone(), Arc::clone(session), task.clone())
        .map_err(|e| e.to_string())?;
    service.undo(task, &workspace).await
}

fn params(report: &UndoReport) -> UndoneParams {
    UndoneParams {
        task_id: report.task.0.clone(),
        summary: report.summary(),
        incomplete: report.incomplete(),
        refused: false,
        files: report
            .files
            .iter()
            .map(|file| UndoneFile {
                path: file.path.clone(),
                result: match &file.result {
                    Undone::Restored => "restored",
                    Undone::Removed => "removed",
                    Undone::AsBefore => "asBefore",
                    Undone::AlreadyUndone => "alreadyUndone",
                    Undone::Conflict { .. } => "conflict",
                    Undone::Cannot { .. } => "cannot",
                }
                .to_owned(),
                message: inert::line(&file.line()).into_owned(),
                conflict_lines: match &file.result {
                    Undone::Conflict { clashes } => clashes.iter().map(|c| c.ours_line).collect(),
                    _ => Vec::new(),
                },
            })
            .collect(),
    }
}

/// The message shown: the summary, then the files not undone (the others
/// are what the user asked for).
fn message(params: &UndoneParams) -> String {
    let mut out = params.summary.clone();
    for file in params
        .files
        .iter()
        .filter(|f| f.result == "conflict" || f.result == "cannot")
    {
        out.push('\n');
        out.push_str(&file.message);
    }
    out
}

/// `rein/undone` as a typed notification.
enum UndoneNotification {}

impl tower_lsp_server::ls_types::notification::Notification for UndoneNotification {
    type Params = UndoneParams;
    const METHOD: &'static str = UNDONE;
}
