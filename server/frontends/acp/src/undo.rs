//! `/undo`: takes back the session's last task's changes, keeping what the
//! user changed since (the task service's undo, on the client's files or
//! the disk); a file where the user changed what the task changed is left
//! as it is and said so. Advertised as an available command once a task of
//! the session changed files.

use agent_client_protocol::v1::schema::{AvailableCommand, AvailableCommandsUpdate, SessionUpdate};
use rein_app::service::TaskService;
use rein_app::undo::Undone;
use rein_core::task::TaskId;
use rein_core::workspace::Workspace;

/// The command's name.
pub const UNDO: &str = "undo";

/// The `/undo` command, as the client lists it.
pub fn undo_command() -> SessionUpdate {
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(vec![
        AvailableCommand::new(
            UNDO,
            "Take back the last task's changes, keeping yours since",
        ),
    ]))
}

/// Undoes the last task of `session`; what to say, as Markdown.
pub async fn undo_last(service: &TaskService, session: &str, workspace: &dyn Workspace) -> String {
    let last = match service.store().session_tasks(session) {
        Ok(tasks) => tasks.into_iter().last(),
        Err(e) => return format!("Rein cannot read this session's tasks: {e}\n"),
    };
    let Some(last) = last else {
        return "There is nothing to undo in this session.\n".into();
    };
    let report = match service.undo(&TaskId(last.task_id), workspace).await {
        Ok(report) => report,
        Err(reason) => return format!("Rein did not undo the last task: {reason}\n"),
    };
    let mut out = format!("**{}**\n", report.summary());
    for file in &report.files {
        out.push_str(&format!("- {}\n", file.line()));
        if let Undone::Conflict { clashes } = &file.result {
            for clash in clashes {
                out.push_str(&format!(
                    "  - line {}: now `{}`, before the task `{}`\n",
                    clash.ours_line,
                    first_line(&clash.ours),
                    first_line(&clash.theirs)
                ));
            }
        }
    }
    out
}

/// A region's first line, for a one-line mention.
fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default().trim();
    let more = if text.lines().nth(1).is_some() {
        " …"
    } else {
        ""
    };
    format!("{}{more}", line.replace('`', "'"))
}
