//! Rein's approvals over ACP: every command and edit Rein would ask about
//! is put to the user with `session/request_permission` (allow once, allow
//! always, reject). "Allow always" is a session rule: the same command, or
//! any edit, is not asked again in this session. No answer — the client
//! cancelled the request, the prompt was cancelled, the connection broke —
//! is a no. Deny rules never get here: the policy refuses first.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, Diff, PermissionOption, PermissionOptionKind, RequestPermissionOutcome,
    RequestPermissionRequest, SessionUpdate, TextContent, ToolCall, ToolCallContent,
    ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use async_trait::async_trait;
use rein_core::os::disk::ConfirmChange;
use rein_core::ports::{ApprovalDecision, Approver, CallShown, CommandApproval};

use rein_core::task::TaskId;
use rein_models::Redactor;

use super::writes::Writes;

const ALLOW_ONCE: &str = "allow_once";
const ALLOW_ALWAYS: &str = "allow_always";
const REJECT: &str = "reject_once";

/// What the user allowed for the rest of the session.
#[derive(Default)]
pub struct SessionRules {
    commands: Mutex<HashSet<String>>,
    edits: std::sync::atomic::AtomicBool,
}

/// The tool call a permission is about: the last one that started, which
/// is the one waiting (calls with effects run one at a time).
#[derive(Default)]
pub struct CurrentCall(Mutex<Option<String>>);

impl CurrentCall {
    pub fn set(&self, id: &str) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Some(id.to_owned());
        }
    }

    pub fn get(&self) -> String {
        self.0
            .lock()
            .ok()
            .and_then(|slot| slot.clone())
            .unwrap_or_else(|| "rein-permission".to_owned())
    }
}

/// Asks the client's user.
#[derive(Clone)]
pub struct Permissions {
    pub cx: ConnectionTo<Client>,
    pub session_id: String,
    pub rules: Arc<SessionRules>,
    pub call: Arc<CurrentCall>,
    pub redactor: Redactor,
    /// The prompt's cancel token: a cancelled prompt's open question is a no.
    pub cancel: tokio_util::sync::CancellationToken,
    /// Commands run in the panel's terminal, outside Rein's sandbox: the
    /// question says so.
    pub outside_sandbox: bool,
}

/// The user's answer.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    Once,
    Always,
    No,
}

impl Permissions {
    /// `always`: what "allow always" allows, as its label says.
    async fn ask(&self, fields: ToolCallUpdateFields, always: &str) -> Answer {
        let options = vec![
            PermissionOption::new(ALLOW_ONCE, "Allow once", PermissionOptionKind::AllowOnce),
            PermissionOption::new(ALLOW_ALWAYS, always, PermissionOptionKind::AllowAlways),
            PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
        ];
        self.request(RequestPermissionRequest::new(
            self.session_id.clone(),
            ToolCallUpdate::new(self.call.get(), fields),
            options,
        ))
        .await
    }

    /// Puts `request` to the user; anything but an allow is a no.
    async fn request(&self, request: RequestPermissionRequest) -> Answer {
        let Some(request) = super::redact::redacted(&self.redactor, &request) else {
            tracing::warn!("a permission request could not be redacted: taken as a no");
            return Answer::No;
        };
        let answer = tokio::select! {
            () = self.cancel.cancelled() => return Answer::No,
            answer = self.cx.send_request(request).block_task() => answer,
        };
        match answer {
            Ok(response) => match response.outcome {
                RequestPermissionOutcome::Selected(selected) => match &*selected.option_id.0 {
                    ALLOW_ONCE => Answer::Once,
                    ALLOW_ALWAYS => Answer::Always,
                    _ => Answer::No,
                },
                _ => Answer::No,
            },
            Err(error) => {
                tracing::warn!(%error, "session/request_permission failed: taken as a no");
                Answer::No
            }
        }
    }
}

impl Permissions {
    /// The trust question (the folder's settings would grant something),
    /// shown as a call of its own: trust and remember, trust for this
    /// session, or not (no answer is a no, asked again next session).
    pub async fn ask_trust(&self, question: &str) -> TrustAnswer {
        const CALL: &str = "rein-workspace-trust";
        let send = |update: SessionUpdate| {
            super::redact::send_update(&self.cx, &self.redactor, &self.session_id, update);
        };
        send(SessionUpdate::ToolCall(
            ToolCall::new(CALL, "Trust this folder's Rein settings?")
                .kind(ToolKind::Other)
                .status(ToolCallStatus::Pending)
                .content(vec![ToolCallContent::from(ContentBlock::Text(
                    TextContent::new(question.to_owned()),
                ))]),
        ));
        let options = vec![
            PermissionOption::new(
                ALLOW_ALWAYS,
                "Trust them (remembered for this file as it is now)",
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new(
                ALLOW_ONCE,
                "Trust them for this session",
                PermissionOptionKind::AllowOnce,
            ),
            PermissionOption::new(REJECT, "Don't trust", PermissionOptionKind::RejectOnce),
        ];
        let fields = ToolCallUpdateFields::new().status(ToolCallStatus::Pending);
        let answer = match self
            .request(RequestPermissionRequest::new(
                self.session_id.clone(),
                ToolCallUpdate::new(CALL, fields),
                options,
            ))
            .await
        {
            Answer::Always => TrustAnswer::Remember,
            Answer::Once => TrustAnswer::ThisSession,
            Answer::No => TrustAnswer::No,
        };
        let status = if answer == TrustAnswer::No {
            ToolCallStatus::Failed
        } else {
            ToolCallStatus::Completed
        };
        send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            CALL,
            ToolCallUpdateFields::new().status(status),
        )));
        answer
    }
}

/// What the user said to the trust question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrustAnswer {
    /// Trusted, and remembered for this file's exact bytes.
    Remember,
    /// Trusted for this session.
    ThisSession,
    No,
}

/// Commands (and MCP tools, and anything else the policy asks about).
pub struct AcpApprover {
    pub permissions: Permissions,
    /// Where the task's commands may write, for the question.
    pub writes: Writes,
}

/// The most of a call's arguments a permission's title shows (its content
/// and `rawInput` carry them all).
const ARGUMENTS_IN_TITLE: usize = 200;

impl AcpApprover {
    /// The question about a command: what runs, and where it may write.
    fn command_question(&self, request: &CommandApproval) -> ToolCallUpdateFields {
        let mut title = format!("Run `{}`", request.command);
        if self.permissions.outside_sandbox {
            title.push_str(
                " in your editor's terminal, outside Rein's sandbox (it can read and change anything you can, and use the network)",
            );
        } else {
            title.push_str(&format!(
                " ({}{})",
                self.writes.describe(request.sandbox_mode),
                if request.network {
                    "; it asks for the network"
                } else {
                    ""
                }
            ));
        }
        ToolCallUpdateFields::new()
            .kind(ToolKind::Execute)
            .status(ToolCallStatus::Pending)
            .title(title)
            .raw_input(serde_json::json!({
                "command": request.command,
                "cwd": request.cwd,
                "rule": request.why_asked(),
            }))
    }

    /// The question about a tool's call (an MCP tool): its arguments are
    /// what runs, so the title shows them (a panel may show nothing else)
    /// and the content shows them whole.
    fn call_question(&self, request: &CommandApproval, call: &CallShown) -> ToolCallUpdateFields {
        let arguments = call.arguments.to_string();
        let count = arguments.chars().count();
        let brief = if count > ARGUMENTS_IN_TITLE {
            let head: String = arguments.chars().take(ARGUMENTS_IN_TITLE).collect();
            format!("{head} …")
        } else {
            arguments
        };
        let pretty = serde_json::to_string_pretty(&call.arguments).unwrap_or_default();
        let text = format!(
            "Arguments:\n```json\n{pretty}\n```\nAsked because: {}.",
            request.why_asked()
        );
        ToolCallUpdateFields::new()
            .kind(super::kind::acp_kind(call.kind))
            .status(ToolCallStatus::Pending)
            .title(format!("Call `{}` with {brief}", request.command))
            .content(vec![ToolCallContent::from(ContentBlock::Text(
                TextContent::new(text),
            ))])
            .raw_input(call.arguments.clone())
    }
}

#[async_trait]
impl Approver for AcpApprover {
    async fn approve_command(&self, request: &CommandApproval) -> ApprovalDecision {
        let rules = &self.permissions.rules;
        if rules
            .commands
            .lock()
            .is_ok_and(|allowed| allowed.contains(&request.command))
        {
            return ApprovalDecision::AllowOnce;
        }
        let (fields, always) = match &request.call {
            Some(call) => (
                self.call_question(request, call),
                "Allow this tool always (this session)",
            ),
            None => (
                self.command_question(request),
                "Allow always (this session)",
            ),
        };
        match self.permissions.ask(fields, always).await {
            Answer::Once => ApprovalDecision::AllowOnce,
            Answer::Always => {
                if let Ok(mut allowed) = rules.commands.lock() {
                    allowed.insert(request.command.clone());
                }
                ApprovalDecision::AllowOnce
            }
            Answer::No => ApprovalDecision::Deny,
        }
    }

    /// ACP has no questions to the user (outside the unstable elicitation):
    /// the model is not offered `ask_user` here.
    async fn ask_user(&self, _task: &TaskId, _question: &str) -> Option<String> {
        None
    }
}

/// Edits and new files, shown as the whole file's diff.
pub struct AcpConfirm {
    pub permissions: Permissions,
    pub root: std::path::PathBuf,
}

#[async_trait]
impl ConfirmChange for AcpConfirm {
    async fn confirm(&self, path: &str, old: Option<&str>, new: &str, description: &str) -> bool {
        let rules = &self.permissions.rules;
        if rules.edits.load(std::sync::atomic::Ordering::SeqCst) {
            return true;
        }
        let absolute = self.root.join(path);
        let mut diff = Diff::new(absolute.clone(), new);
        if let Some(old) = old {
            diff = diff.old_text(old.to_owned());
        }
        let fields = ToolCallUpdateFields::new()
            .kind(ToolKind::Edit)
            .status(ToolCallStatus::Pending)
            .title(description.to_owned())
            .locations(vec![ToolCallLocation::new(absolute)])
            .content(vec![ToolCallContent::Diff(diff)]);
        match self
            .permissions
            .ask(fields, "Allow all edits (this session)")
            .await
        {
            Answer::Once => true,
            Answer::Always => {
                rules.edits.store(true, std::sync::atomic::Ordering::SeqCst);
                true
            }
            Answer::No => false,
        }
    }
}
