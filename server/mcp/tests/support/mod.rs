//! What the tests of this crate share: the fault server's settings and an
//! unconfined spawner.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rein_core::config::mcp::{McpServer, McpTransport};
use rein_mcp::{CallError, Connection, Spawner};
use tokio_util::sync::CancellationToken;

/// `fixtures/fault_server.py` started with `args`.
pub fn fault_server(args: &[&str]) -> McpServer {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/fault_server.py"
    );
    McpServer {
        name: "fault".into(),
        transport: McpTransport::Stdio {
            command: "python3".into(),
            args: std::iter::once(fixture.to_owned())
                .chain(args.iter().map(|a| (*a).to_owned()))
                .collect(),
            env: vec![],
            env_vars: vec![],
        },
        enabled_tools: None,
        disabled_tools: vec![],
        startup_timeout: Duration::from_secs(20),
        tool_timeout: Duration::from_secs(20),
        max_output_tokens: 25_000,
        network: false,
        readable_roots: vec![],
        unconfined: false,
        from_workspace: false,
        start_with_session: false,
    }
}

/// Starts servers unconfined, with only `PATH` from this environment.
pub fn spawner() -> Spawner {
    Spawner {
        launcher: None,
        root: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        base_env: std::env::vars_os().filter(|(k, _)| k == "PATH").collect(),
        lookup: Arc::new(|_| None),
    }
}

pub async fn call(connection: &Connection, tool: &str) -> Result<serde_json::Value, CallError> {
    connection
        .call(
            tool,
            serde_json::Map::new(),
            &CancellationToken::new(),
            None,
        )
        .await
}
