//! An ACP session: one workspace folder (the client's `cwd`), its
//! configuration under the workspace-trust rules, the MCP servers the
//! client passed, the session's rules ("allow always") and the prompt
//! running now. Each prompt is a Rein task.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::McpServer as AcpMcpServer;
use rein_core::config::Config;
use rein_core::config::mcp::{self, McpServerSettings};
use rein_core::trust::{Trust, TrustSource};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::approve::SessionRules;
use crate::settings;

pub struct AcpSession {
    pub id: String,
    pub root: PathBuf,
    pub config: Config,
    /// What the user should know at the first prompt (settings ignored in
    /// an untrusted workspace, a client MCP server left out).
    pub notices: Mutex<Vec<String>>,
    pub mcp: rein_mcp::McpPool,
    pub rules: Arc<SessionRules>,
    /// The running prompt's cancel token.
    pub running: Mutex<Option<CancellationToken>>,
    /// How the session's earlier prompts ended, one line each: a later
    /// instruction ("now rename it") is read with them.
    pub earlier: Mutex<Vec<String>>,
    /// A task of this session a crash left unfinished (found when the
    /// session was loaded): `/resume` goes on with it.
    pub interrupted: Mutex<Option<rein_core::task::TaskId>>,
}

impl AcpSession {
    /// A session in `cwd`: the workspace's own settings count only when the
    /// user trusts them already (`rein trust`, or an earlier answer); ACP
    /// has no way to ask, so until then they only tighten, and the first
    /// prompt says what was ignored.
    pub fn open(cwd: &Path, servers: &[AcpMcpServer]) -> Result<Self, String> {
        let id = rein_core::task::TaskId::generate()
            .0
            .replacen("t-", "s-", 1);
        Self::open_as(id, cwd, servers)
    }

    /// The session `id` (new, or loaded again) in `cwd`.
    pub fn open_as(id: String, cwd: &Path, servers: &[AcpMcpServer]) -> Result<Self, String> {
        if !cwd.is_absolute() {
            return Err(format!(
                "cwd must be an absolute path, got {}",
                cwd.display()
            ));
        }
        let root = cwd
            .canonicalize()
            .map_err(|e| format!("the folder {}: {e}", cwd.display()))?;
        if !root.is_dir() {
            return Err(format!("{} is not a folder", root.display()));
        }
        let assessment = settings::Assessment::of(&root, &Value::Null)?;
        let trust = assessment
            .known_trust(&root, None, settings::user_state().as_ref())
            .unwrap_or(Trust {
                trusted: false,
                why: TrustSource::NoAnswer,
            });
        let mut config = assessment.config(&trust)?;
        let mut notices = Vec::new();
        if !config.ignored.is_empty() {
            let mut text = format!(
                "This folder's own settings ({}) are not trusted, so Rein ignores:",
                assessment.files
            );
            for grant in &config.ignored {
                text.push_str(&format!("\n  • {grant}"));
            }
            text.push_str("\nRun `rein trust` in the folder to trust them as they are now.");
            notices.push(text);
        }
        for server in servers {
            match client_server(server) {
                Ok(server) if config.mcp_servers.iter().any(|s| s.name == server.name) => {
                    notices.push(format!(
                        "The MCP server `{}` is in Rein's settings too: those are used.",
                        server.name
                    ));
                }
                Ok(server) => config.mcp_servers.push(server),
                Err(why) => notices.push(format!(
                    "An MCP server the editor passed is left out: {why}"
                )),
            }
        }
        Ok(Self {
            id,
            root,
            config,
            notices: Mutex::new(notices),
            mcp: rein_mcp::McpPool::new(),
            rules: Arc::default(),
            running: Mutex::new(None),
            earlier: Mutex::new(Vec::new()),
            interrupted: Mutex::new(None),
        })
    }

    /// Remembers how a prompt ended, for the next ones.
    pub fn remember(&self, goal: &str, state: &str, reason: &str) {
        if let Ok(mut earlier) = self.earlier.lock() {
            earlier.push(format!("{goal} → {state}: {reason}"));
        }
    }

    /// The earlier prompts of this session, as context for an instruction.
    pub fn earlier_context(&self) -> Option<String> {
        let earlier = self.earlier.lock().ok()?;
        if earlier.is_empty() {
            return None;
        }
        // The last few: a long session does not grow every prompt.
        const KEPT: usize = 5;
        let lines: Vec<String> = earlier
            .iter()
            .rev()
            .take(KEPT)
            .rev()
            .map(|l| format!("- {l}"))
            .collect();
        Some(format!(
            "Earlier in this session (how each request ended):\n{}",
            lines.join("\n")
        ))
    }

    /// The interrupted task, taken (resuming it is the one use).
    pub fn take_interrupted(&self) -> Option<rein_core::task::TaskId> {
        self.interrupted.lock().ok().and_then(|mut i| i.take())
    }

    pub fn set_interrupted(&self, task: Option<rein_core::task::TaskId>) {
        if let Ok(mut interrupted) = self.interrupted.lock() {
            *interrupted = task;
        }
    }

    pub fn take_notices(&self) -> Vec<String> {
        self.notices
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default()
    }
}

/// A server the client passed, as Rein's settings would define it: the
/// user's own (the editor's settings), run in the sandbox as every server.
/// (`${NAME}` in its values is filled in from Rein's environment, as in
/// the settings: the editor is the user's.)
fn client_server(server: &AcpMcpServer) -> Result<mcp::McpServer, String> {
    let (name, settings) = match server {
        AcpMcpServer::Stdio(stdio) => (
            stdio.name.clone(),
            McpServerSettings {
                command: Some(stdio.command.display().to_string()),
                args: stdio.args.clone(),
                env: stdio
                    .env
                    .iter()
                    .map(|v| (v.name.clone(), v.value.clone()))
                    .collect(),
                ..McpServerSettings::default()
            },
        ),
        AcpMcpServer::Http(http) => (
            http.name.clone(),
            McpServerSettings {
                url: Some(http.url.clone()),
                headers: http
                    .headers
                    .iter()
                    .map(|h| (h.name.clone(), h.value.clone()))
                    .collect(),
                ..McpServerSettings::default()
            },
        ),
        _ => return Err("only stdio and Streamable HTTP servers are supported".into()),
    };
    let layer: BTreeMap<String, McpServerSettings> = [(name, settings)].into();
    mcp::resolve(&[(&layer, false)])
        .map_err(|e| e.to_string())?
        .pop()
        .ok_or_else(|| "the entry is disabled".to_owned())
}
