//! `rein-mcp`: Rein's Model Context Protocol client, on the official SDK
//! (`rmcp`). Each configured server is started through the task's
//! launcher — so a stdio server runs in the command sandbox, with the
//! network its settings allow — and each of its tools becomes a registry
//! entry `mcp__<server>__<tool>` ([`tool::McpTool`]) that the dispatcher
//! runs like a built-in one: schema check, permission (default: ask),
//! loop guard, redaction, op log, crash rules.
//!
//! Never: decides policy (annotations set batching and crash recovery
//! only); lets a server's text reach the model uncapped; starts a server
//! the configuration did not resolve (a workspace's own only once it is
//! trusted: `rein_core::config`); runs a server outside the launcher it
//! was given; panics on anything a server sends.

pub mod cap;
pub mod connection;
pub mod http;
pub mod names;
pub mod output;
pub mod pool;
pub mod progress;
pub mod roots;
pub mod tool;

use std::collections::HashSet;
use std::sync::Arc;

use rein_core::config::mcp::McpServer;
use rein_core::tools::Tool;

pub use connection::{CallError, Connection, Spawner};
pub use pool::McpPool;
use tool::McpTool;

/// What one server offers once started (or why it did not start).
#[derive(Clone, Debug, PartialEq)]
pub struct ServerReport {
    pub name: String,
    /// Its command line or URL.
    pub describe: String,
    pub started: Result<Vec<ToolReport>, String>,
}

/// One tool as `rein doctor` lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolReport {
    /// The registry name (`mcp__server__tool`).
    pub name: String,
    /// The hints the server stated, in words ("read-only", "not
    /// destructive"…); empty when it stated none.
    pub annotations: Vec<&'static str>,
    /// What Rein takes its effect to be, from them.
    pub effect: rein_core::tools::Effect,
}

/// The MCP servers of one task: its own (started together, stopped
/// together) or a session's, shared ([`pool::McpPool`]).
pub struct McpServers {
    connections: Vec<Arc<Connection>>,
    /// The registry names given so far, per connection.
    given: std::sync::Mutex<Vec<Vec<String>>>,
    /// Each connection's generation when its tools were last given.
    seen: std::sync::Mutex<Vec<u64>>,
}

/// [`McpServers::start`]'s result.
pub struct Started {
    pub servers: Arc<McpServers>,
    pub tools: Vec<Arc<dyn Tool>>,
    pub reports: Vec<ServerReport>,
}

/// One configured server: connected (with its tools as listed, and the
/// generation they were listed at) or why not.
type Connected = Result<(Arc<Connection>, Vec<rmcp::model::Tool>, u64), CallError>;

impl McpServers {
    /// Starts every server in `servers` side by side, each within its own
    /// start-up timeout; one that fails is reported and left out.
    pub async fn start(servers: &[McpServer], spawner: &Spawner) -> Started {
        let started = futures::future::join_all(servers.iter().map(|server| async {
            let (connection, tools) = Connection::start(server.clone(), spawner.clone()).await?;
            let generation = connection.generation();
            Ok((connection, tools, generation))
        }))
        .await;
        Self::of(servers, started)
    }

    /// The task's servers from what connecting to each gave.
    fn of(servers: &[McpServer], connected: Vec<Connected>) -> Started {
        let mut connections = Vec::new();
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        let mut reports = Vec::new();
        let mut given = Vec::new();
        let mut seen = Vec::new();
        let mut taken = HashSet::new();
        for (server, result) in servers.iter().zip(connected) {
            let report = match result {
                Ok((connection, infos, generation)) => {
                    let made = entries(&connection, &infos, &mut taken);
                    let listed: Vec<ToolReport> = made.iter().map(|(_, r)| r.clone()).collect();
                    given.push(made.iter().map(|(t, _)| t.name().to_owned()).collect());
                    seen.push(generation);
                    tools.extend(made.into_iter().map(|(t, _)| t));
                    connections.push(connection);
                    Ok(listed)
                }
                Err(error) => {
                    tracing::warn!(server = %server.name, "{error}");
                    Err(error.to_string())
                }
            };
            reports.push(ServerReport {
                name: server.name.clone(),
                describe: server.describe(),
                started: report,
            });
        }
        Started {
            servers: Arc::new(McpServers {
                connections,
                given: std::sync::Mutex::new(given),
                seen: std::sync::Mutex::new(seen),
            }),
            tools,
            reports,
        }
    }

    /// When a server said its tools changed (or it was restarted) since
    /// the last look: the names of every MCP tool given so far, and the
    /// tools now. `None`: nothing changed.
    pub async fn changed_tools(&self) -> Option<(Vec<String>, Vec<Arc<dyn Tool>>)> {
        let changed: Vec<bool> = {
            let mut seen = self.seen.lock().ok()?;
            self.connections
                .iter()
                .zip(seen.iter_mut())
                .map(|(c, seen)| {
                    let now = c.generation();
                    std::mem::replace(seen, now) != now
                })
                .collect()
        };
        if !changed.contains(&true) {
            return None;
        }
        let mut given = self.given.lock().ok()?.clone();
        let old: Vec<String> = given.iter().flatten().cloned().collect();
        let mut taken = HashSet::new();
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        for (n, connection) in self.connections.iter().enumerate() {
            let made = if changed[n] {
                match connection.tools().await {
                    Ok(infos) => entries(connection, &infos, &mut taken),
                    Err(error) => {
                        tracing::warn!(server = %connection.server.name, "{error}");
                        Vec::new()
                    }
                }
            } else {
                Vec::new()
            };
            if changed[n] {
                given[n] = made.iter().map(|(t, _)| t.name().to_owned()).collect();
                tools.extend(made.into_iter().map(|(t, _)| t));
            }
        }
        // An unchanged server keeps its entries: hand them back as they were.
        let unchanged: Vec<String> = given
            .iter()
            .enumerate()
            .filter(|(n, _)| !changed[*n])
            .flat_map(|(_, names)| names.clone())
            .collect();
        if let Ok(mut slot) = self.given.lock() {
            *slot = given;
        }
        let removed = old.into_iter().filter(|n| !unchanged.contains(n)).collect();
        Some((removed, tools))
    }

    /// The connection to the server named `name`.
    pub fn connection(&self, name: &str) -> Option<&Arc<Connection>> {
        self.connections.iter().find(|c| c.server.name == name)
    }

    /// Stops every server (a session's too: only for a task's own).
    pub async fn shutdown(&self) {
        futures::future::join_all(self.connections.iter().map(|c| c.shutdown())).await;
    }
}

/// The registry entries for a server's tools (those it offers), with their
/// reports.
fn entries(
    connection: &Arc<Connection>,
    infos: &[rmcp::model::Tool],
    taken: &mut HashSet<String>,
) -> Vec<(Arc<dyn Tool>, ToolReport)> {
    let mut out = Vec::new();
    for info in infos {
        if !connection.server.offers(&info.name) {
            continue;
        }
        let name = names::tool_name(&connection.server.name, &info.name, taken);
        taken.insert(name.clone());
        let mut annotations = Vec::new();
        if let Some(a) = &info.annotations {
            for (set, yes, no) in [
                (a.read_only_hint, "read-only", "not read-only"),
                (a.destructive_hint, "destructive", "not destructive"),
                (a.idempotent_hint, "idempotent", "not idempotent"),
                (a.open_world_hint, "open-world", "closed-world"),
            ] {
                match set {
                    Some(true) => annotations.push(yes),
                    Some(false) => annotations.push(no),
                    None => {}
                }
            }
        }
        let tool: Arc<dyn Tool> = Arc::new(McpTool::new(name.clone(), info, connection.clone()));
        let effect = tool.effect();
        out.push((
            tool,
            ToolReport {
                name,
                annotations,
                effect,
            },
        ));
    }
    out
}

#[async_trait::async_trait]
impl rein_core::tools::ToolUpdates for McpServers {
    async fn changed(&self) -> Option<(Vec<String>, Vec<Arc<dyn Tool>>)> {
        self.changed_tools().await
    }
}
