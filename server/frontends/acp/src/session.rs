//! An ACP session: one workspace folder (the client's `cwd`), its
//! configuration under the workspace-trust rules, the MCP servers the
//! client passed, the session's rules ("allow always") and the prompt
//! running now. Each prompt is a Rein task.
//!
//! Trust as in the editor: a folder whose own settings would grant
//! something (a command allowed, a server started, a budget raised) is
//! asked about at the first prompt — as a permission, ACP having no other
//! question — unless the user decided about that very file before (`rein
//! trust`, an earlier answer). Until then, and after a no, the file only
//! tightens, and the first prompt says what was ignored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::McpServer as AcpMcpServer;
use rein_core::config::Config;
use rein_core::config::mcp::{self, McpServerSettings};
use rein_core::trust::{self, Trust, TrustSource};
use serde_json::Value;

use super::approve::{SessionRules, TrustAnswer};
use rein_app::settings;

pub struct AcpSession {
    pub id: String,
    pub root: PathBuf,
    /// Changes once, when the user answers the trust question.
    config: Mutex<Config>,
    trust_question: Mutex<Option<TrustQuestion>>,
    /// What the user should know at the first prompt (settings ignored in
    /// an untrusted workspace, a client MCP server left out).
    pub notices: Mutex<Vec<String>>,
    pub mcp: Arc<rein_mcp::McpPool>,
    pub rules: Arc<SessionRules>,
    /// How the session's earlier prompts ended, one line each: a later
    /// instruction ("now rename it") is read with them.
    pub earlier: Mutex<Vec<String>>,
    /// A task of this session a crash left unfinished (found when the
    /// session was loaded): `/resume` goes on with it.
    pub interrupted: Mutex<Option<rein_core::task::TaskId>>,
}

impl AcpSession {
    /// A new session in `cwd`.
    pub fn open(cwd: &Path, servers: &[AcpMcpServer]) -> Result<Self, String> {
        let id = rein_core::task::TaskId::generate()
            .0
            .replacen("t-", "s-", 1);
        Self::open_as(id, cwd, servers)
    }

    /// The session `id` (new, or loaded again) in `cwd`.
    pub fn open_as(id: String, cwd: &Path, servers: &[AcpMcpServer]) -> Result<Self, String> {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let root = super::folder::project_folder(cwd, home.as_deref())?;
        let assessment = settings::Assessment::of(&root, &Value::Null)?;
        let known = assessment.known_trust(&root, None, settings::user_state().as_ref());
        // Until the user answers, only what tightens counts.
        let trust = known.clone().unwrap_or(Trust {
            trusted: false,
            why: TrustSource::NoAnswer,
        });
        let (config, notices) = configured(&assessment, &trust, servers)?;
        let question = match (known, assessment.fingerprint()) {
            (None, Some(fingerprint)) => Some(TrustQuestion {
                text: trust::question(assessment.files, &assessment.grants),
                fingerprint: fingerprint.to_owned(),
                assessment,
                servers: servers.to_vec(),
            }),
            _ => None,
        };
        Ok(Self {
            id,
            root,
            config: Mutex::new(config),
            trust_question: Mutex::new(question),
            notices: Mutex::new(notices),
            mcp: Arc::default(),
            rules: Arc::default(),
            earlier: Mutex::new(Vec::new()),
            interrupted: Mutex::new(None),
        })
    }

    /// The session's configuration now.
    pub fn config(&self) -> Result<Config, String> {
        self.config
            .lock()
            .map(|c| c.clone())
            .map_err(|_| "the session's settings are unusable after a crash in Rein".to_owned())
    }

    /// The trust question this session still has to ask, taken: it is
    /// asked once, at the first prompt.
    pub fn take_trust_question(&self) -> Option<TrustQuestion> {
        self.trust_question.lock().ok().and_then(|mut q| q.take())
    }

    /// Applies the user's answer to `question`: the configuration under
    /// it, remembered for this very file when the user said so.
    pub fn decide_trust(&self, question: TrustQuestion, answer: TrustAnswer) -> Result<(), String> {
        let trusted = answer != TrustAnswer::No;
        if answer == TrustAnswer::Remember
            && let Some(state) = settings::user_state()
            && let Err(error) = state.record(&self.root, &question.fingerprint, true)
        {
            tracing::warn!(%error, "cannot remember the trust decision; it holds for this session");
        }
        let trust = Trust {
            trusted,
            why: TrustSource::Answered,
        };
        tracing::info!(trust = trust.describe(), "workspace trust decided");
        let (config, notices) = configured(&question.assessment, &trust, &question.servers)?;
        if let Ok(mut slot) = self.config.lock() {
            *slot = config;
        }
        if let Ok(mut slot) = self.notices.lock() {
            *slot = notices;
        }
        Ok(())
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

/// The workspace's settings waiting for the user's word: they would grant
/// something (`text` says what), and nobody has decided about this very
/// file. ACP has no question of its own: it is put as a permission.
pub struct TrustQuestion {
    pub text: String,
    fingerprint: String,
    assessment: settings::Assessment,
    servers: Vec<AcpMcpServer>,
}

/// The configuration under `trust`, with the client's MCP servers, and
/// what the user should know about it.
fn configured(
    assessment: &settings::Assessment,
    trust: &Trust,
    servers: &[AcpMcpServer],
) -> Result<(Config, Vec<String>), String> {
    let mut config = assessment.config(trust)?;
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
    Ok((config, notices))
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
