//! A real Streamable HTTP MCP server (`fixtures/http_server.py`, on the
//! Python SDK `mcp`, pinned and installed once into the suite's cache by
//! `tests/mcp-servers/install.sh python`) against Rein's client: tools
//! listed and called over HTTP, headers' `${VAR}` filled in and sent, and
//! clear start errors for an unset variable and a server not listening.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rein_core::config::mcp::{McpServer, McpTransport};
use rein_mcp::{CallError, Connection, Spawner};
use tokio_util::sync::CancellationToken;

mod support;

const TOKEN: &str = "test-token-4d1f";

/// The venv's python with the pinned `mcp`: the install script run once
/// per test process (at once when the venv is in the cache).
fn python() -> &'static PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp-servers/install.sh");
        let out = Command::new("bash")
            .arg(&script)
            .arg("python")
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{} python failed (these tests need python3 with venv, and PyPI once):\n{stderr}",
            script.display()
        );
        let python = PathBuf::from(stdout.lines().last().unwrap_or_default());
        assert!(
            python.is_absolute() && python.exists(),
            "{} python printed no python: {stdout:?}\n{stderr}",
            script.display()
        );
        python
    })
}

/// A port nothing listens on (bound, then let go).
fn free_port() -> u16 {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    listener.local_addr().unwrap().port()
}

/// The Python server, killed when dropped.
struct PythonServer {
    child: Child,
    port: u16,
}

impl PythonServer {
    /// Starts it on a free port and waits until it accepts connections.
    fn start() -> PythonServer {
        let port = free_port();
        let child = Command::new(python())
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/http_server.py"
            ))
            .arg(port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut server = PythonServer { child, port };
        let deadline = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
            if let Some(status) = server.child.try_wait().unwrap() {
                panic!("the Python MCP server exited before listening: {status}");
            }
            assert!(
                Instant::now() < deadline,
                "the Python MCP server did not listen on port {port} within 60 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for PythonServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The fault server's settings, reached over HTTP instead.
fn server(url: String) -> McpServer {
    McpServer {
        name: "web".into(),
        transport: McpTransport::Http {
            url,
            headers: vec![("Authorization".into(), "Bearer ${TEST_TOKEN}".into())],
        },
        ..support::fault_server(&[])
    }
}

fn spawner(token: Option<&'static str>) -> Spawner {
    Spawner {
        launcher: None,
        root: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        base_env: vec![],
        lookup: Arc::new(move |name| (name == "TEST_TOKEN").then_some(token?.to_owned())),
    }
}

/// The text of a tool result.
fn text(result: &serde_json::Value) -> String {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect()
}

fn arguments(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    value.as_object().unwrap().clone()
}

#[tokio::test]
async fn tools_are_listed_and_called_over_streamable_http() {
    let python = PythonServer::start();
    let (connection, tools) = Connection::start(server(python.url()), spawner(Some(TOKEN)))
        .await
        .unwrap();
    let add = tools.iter().find(|t| t.name == "add").expect("add listed");
    assert_eq!(
        add.annotations.as_ref().and_then(|a| a.read_only_hint),
        Some(true)
    );
    assert!(tools.iter().any(|t| t.name == "whoami"));

    let cancel = CancellationToken::new();
    let result = connection
        .call(
            "add",
            arguments(serde_json::json!({"a": 20, "b": 22})),
            &cancel,
            None,
        )
        .await
        .unwrap();
    assert!(text(&result).contains("42"), "{result}");

    // The header went with the calls, its variable filled in.
    let result = connection
        .call("whoami", serde_json::Map::new(), &cancel, None)
        .await
        .unwrap();
    assert_eq!(text(&result), format!("Bearer {TOKEN}"), "{result}");

    // A second connection is a second session, side by side.
    let (other, _) = Connection::start(server(python.url()), spawner(Some(TOKEN)))
        .await
        .unwrap();
    let result = other
        .call(
            "add",
            arguments(serde_json::json!({"a": 1, "b": 2})),
            &cancel,
            None,
        )
        .await
        .unwrap();
    assert!(text(&result).contains('3'), "{result}");
    other.shutdown().await;

    connection.shutdown().await;
    // After shutdown the server is down for good, with no hang.
    let error = connection
        .call(
            "add",
            arguments(serde_json::json!({"a": 1, "b": 1})),
            &cancel,
            None,
        )
        .await
        .unwrap_err();
    assert!(matches!(error, CallError::GaveUp { .. }), "{error}");
}

#[tokio::test]
async fn a_server_that_goes_away_fails_the_call_without_a_hang() {
    let mut python = PythonServer::start();
    let (connection, _) = Connection::start(server(python.url()), spawner(Some(TOKEN)))
        .await
        .unwrap();
    python.child.kill().unwrap();
    python.child.wait().unwrap();
    let started = Instant::now();
    let error = connection
        .call(
            "add",
            arguments(serde_json::json!({"a": 1, "b": 1})),
            &CancellationToken::new(),
            None,
        )
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "took {:?}: {error}",
        started.elapsed()
    );
    assert!(!matches!(error, CallError::Timeout { .. }), "{error}");
    connection.shutdown().await;
}

#[tokio::test]
async fn an_unset_header_variable_is_a_start_error_naming_it() {
    let error = Connection::start(
        server(format!("http://127.0.0.1:{}/mcp", free_port())),
        spawner(None),
    )
    .await
    .err()
    .unwrap();
    assert!(
        matches!(&error, CallError::Start(m) if m.contains("TEST_TOKEN") && m.contains("Authorization")),
        "{error}"
    );
}

#[tokio::test]
async fn a_server_not_listening_is_a_clear_start_error() {
    let url = format!("http://127.0.0.1:{}/mcp", free_port());
    let started = Instant::now();
    let error = Connection::start(server(url.clone()), spawner(Some(TOKEN)))
        .await
        .err()
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "took {:?}: {error}",
        started.elapsed()
    );
    assert!(
        matches!(&error, CallError::Start(m) if m.starts_with(&format!("the MCP server `web` could not be reached at {url} (")) && m.contains("refused") && !m.contains("rmcp::")),
        "{error}"
    );
}

/// Issue 37 F: a Streamable HTTP server that died during a call was
/// reported backwards — the call it died in "refused the call: Transport
/// closed" (it ran), the next one "…whether the call ran is unknown" (it
/// certainly did not) — with rmcp's type names in the text. The words are
/// the stdio crash's, and a request that never reached the server says so.
#[tokio::test]
async fn a_server_that_dies_during_a_call_is_reported_as_a_stdio_crash_is() {
    let python = PythonServer::start();
    let (connection, _) = Connection::start(server(python.url()), spawner(Some(TOKEN)))
        .await
        .unwrap();
    let cancel = CancellationToken::new();
    let died = connection
        .call("die", serde_json::Map::new(), &cancel, None)
        .await
        .unwrap_err();
    let next = connection
        .call(
            "add",
            arguments(serde_json::json!({"a": 1, "b": 1})),
            &cancel,
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(
        died.to_string(),
        "the MCP server `web` stopped during the call, so what the call did is unknown; Rein connects to it again for the next call"
    );
    let next = next.to_string();
    assert!(
        next.starts_with(&format!(
            "the MCP server `web` could not be reached at {} (",
            python.url()
        )) && next.contains("Connection refused")
            && next.ends_with("; so the call did not run"),
        "{next}"
    );
    assert!(
        !next.contains("rmcp::") && !next.contains("Worker"),
        "{next}"
    );
    connection.shutdown().await;
}
