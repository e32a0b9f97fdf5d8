//! The MCP servers of a session (an editor's LSP session), shared by its
//! tasks: a server is started when a task first needs it — or when the
//! session starts, for a server set to `startup = "session"` — and kept
//! for the next tasks, so they do not each pay its start-up (node servers
//! take a third of a second, some far more).
//!
//! A server is reused only while its entry in the configuration and the
//! sandbox it was started in are exactly what the task resolved; anything
//! else (an edited entry, a workspace no longer trusted, another sandbox
//! policy) starts it anew, and the old one stops once no task holds it.
//! A server that gave up restarting gets a fresh start with the next task.

use std::sync::Arc;

use rein_core::config::mcp::McpServer;

use crate::connection::{CallError, Connection, Spawner};
use crate::{McpServers, Started};

/// One server of the pool, as it was started.
struct Entry {
    server: McpServer,
    /// The launcher's policy it runs under (the caller's key).
    sandbox: String,
    connection: Arc<Connection>,
}

/// A session's servers.
#[derive(Default)]
pub struct McpPool {
    entries: tokio::sync::Mutex<Vec<Entry>>,
}

impl std::fmt::Debug for McpPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpPool").finish_non_exhaustive()
    }
}

impl McpPool {
    pub fn new() -> Self {
        Self::default()
    }

    /// A task's servers: those of `servers` already running under the
    /// same `sandbox` key, the others started now (side by side). Every
    /// server not in `servers` is let go: it stops when the last task
    /// using it ends.
    pub async fn servers(
        &self,
        servers: &[McpServer],
        sandbox: &str,
        spawner: &Spawner,
    ) -> Started {
        self.connect(servers, sandbox, spawner, true).await
    }

    /// `let_go`: whether servers not in `servers` are let go.
    async fn connect(
        &self,
        servers: &[McpServer],
        sandbox: &str,
        spawner: &Spawner,
        let_go: bool,
    ) -> Started {
        let mut entries = self.entries.lock().await;
        let mut kept = Vec::new();
        for entry in entries.drain(..) {
            let wanted = servers.contains(&entry.server) || !let_go;
            if wanted && entry.sandbox == sandbox && entry.connection.usable().await {
                kept.push(entry);
            } else {
                tracing::info!(server = %entry.server.name, "MCP server let go: no longer configured as it was started, or down");
            }
        }
        let connected = futures::future::join_all(servers.iter().map(|server| {
            let running = kept
                .iter()
                .find(|e| e.server == *server)
                .map(|e| e.connection.clone());
            async move {
                match running {
                    Some(connection) => {
                        // Listed again: it may have changed between tasks.
                        let generation = connection.generation();
                        let tools = connection.tools().await?;
                        Ok((connection, tools, generation, false))
                    }
                    None => {
                        let (connection, tools) =
                            Connection::start(server.clone(), spawner.clone()).await?;
                        let generation = connection.generation();
                        Ok::<_, CallError>((connection, tools, generation, true))
                    }
                }
            }
        }))
        .await;
        let mut out = Vec::new();
        for (server, result) in servers.iter().zip(connected) {
            out.push(result.map(|(connection, tools, generation, new)| {
                if new {
                    kept.push(Entry {
                        server: server.clone(),
                        sandbox: sandbox.to_owned(),
                        connection: connection.clone(),
                    });
                }
                (connection, tools, generation)
            }));
        }
        *entries = kept;
        McpServers::of(servers, out)
    }

    /// Starts the servers of `servers` that are not running yet, without
    /// a task (at the start of a session); failures are logged, and the
    /// first task that needs the server tries again.
    pub async fn warm(&self, servers: &[McpServer], sandbox: &str, spawner: &Spawner) {
        let started = self.connect(servers, sandbox, spawner, false).await;
        for report in started.reports {
            match report.started {
                Ok(tools) => {
                    tracing::info!(server = %report.name, tools = tools.len(), "MCP server started with the session")
                }
                Err(why) => tracing::warn!(server = %report.name, "{why}"),
            }
        }
    }

    /// How many servers run.
    pub async fn len(&self) -> usize {
        self.entries.lock().await.len()
    }

    pub async fn is_empty(&self) -> bool {
        self.len().await == 0
    }

    /// Stops every server (the session ends).
    pub async fn shutdown(&self) {
        let entries: Vec<Entry> = self.entries.lock().await.drain(..).collect();
        futures::future::join_all(entries.iter().map(|e| e.connection.shutdown())).await;
    }
}
