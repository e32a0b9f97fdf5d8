//! A misbehaving MCP server (`fixtures/fault_server.py`, raw JSON-RPC over
//! stdio) against Rein's client: each fault ends in a clear error for the
//! model, and the server is usable again where it can be.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use rein_core::config::mcp::{McpServer, McpTransport};
use rein_mcp::{CallError, Connection, McpServers};
use tokio_util::sync::CancellationToken;

mod support;

use support::{call, spawner};

fn server(args: &[&str]) -> McpServer {
    support::fault_server(args)
}

async fn start(server: McpServer) -> Arc<Connection> {
    Connection::start(server, spawner()).await.unwrap().0
}

#[tokio::test]
async fn a_server_that_fails_to_start_says_why() {
    let error = Connection::start(server(&["fail-start"]), spawner())
        .await
        .err()
        .unwrap();
    assert!(
        matches!(&error, CallError::Start(m) if m.starts_with("the MCP server `fault` did not start")),
        "{error}"
    );
    let mut missing = server(&[]);
    missing.transport = McpTransport::Stdio {
        command: "/nonexistent/mcp-server".into(),
        args: vec![],
        env: vec![],
        env_vars: vec![],
    };
    let error = Connection::start(missing, spawner()).await.err().unwrap();
    assert!(
        error.to_string().contains("could not be started"),
        "{error}"
    );
}

#[tokio::test]
async fn a_server_that_answers_initialize_with_garbage_is_not_started() {
    let mut garbage = server(&["garbage"]);
    garbage.startup_timeout = Duration::from_secs(3);
    let error = Connection::start(garbage, spawner()).await.err().unwrap();
    assert!(matches!(error, CallError::Start(_)), "{error}");
}

#[tokio::test]
async fn a_crash_mid_call_is_reported_and_the_next_call_restarts_the_server() {
    let connection = start(server(&[])).await;
    let before = connection.generation();
    let error = call(&connection, "crash").await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "the MCP server `fault` stopped during the call, so what the call did is unknown; it will be restarted for the next call"
    );
    let result = call(&connection, "ok").await.unwrap();
    assert_eq!(result["content"][0]["text"], "ok {}");
    // A restart may change what it offers: the registry is asked to look.
    assert_ne!(connection.generation(), before);
}

#[tokio::test]
async fn a_server_that_keeps_crashing_is_given_up_on() {
    let connection = start(server(&[])).await;
    for _ in 0..=rein_mcp::connection::MAX_RESTARTS {
        assert!(call(&connection, "crash").await.is_err());
    }
    let error = call(&connection, "ok").await.unwrap_err();
    assert!(
        matches!(error, CallError::GaveUp { restarts: 3, .. }),
        "{error}"
    );
}

#[tokio::test]
async fn a_hung_call_times_out_and_the_server_stays_usable() {
    let mut slow = server(&[]);
    slow.tool_timeout = Duration::from_secs(1);
    let connection = start(slow).await;
    let error = call(&connection, "hang").await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "the MCP server `fault` did not answer within 1 s; the call was cancelled (it may have done part of its work)"
    );
    assert_eq!(
        call(&connection, "ok").await.unwrap()["content"][0]["text"],
        "ok {}"
    );
}

#[tokio::test]
async fn a_cancelled_task_cancels_its_call() {
    let connection = start(server(&[])).await;
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        canceller.cancel();
    });
    let error = connection
        .call("hang", serde_json::Map::new(), &cancel, None)
        .await
        .unwrap_err();
    assert_eq!(error, CallError::Cancelled);
}

#[tokio::test]
async fn malformed_json_rpc_does_not_end_the_session() {
    let connection = start(server(&[])).await;
    let outcome = call(&connection, "malformed").await;
    // Either the noise is skipped and the answer read, or the session is
    // seen as broken and the call says so: never a hang, never a panic.
    match outcome {
        Ok(result) => assert_eq!(result["content"][0]["text"], "after the noise"),
        Err(error) => assert!(matches!(error, CallError::Crashed { .. }), "{error}"),
    }
    assert!(call(&connection, "ok").await.is_ok());
}

#[tokio::test]
async fn ten_megabytes_arrive_whole() {
    let connection = start(server(&[])).await;
    let result = call(&connection, "huge").await.unwrap();
    assert_eq!(
        result["content"][0]["text"].as_str().unwrap().len(),
        10 * 1024 * 1024
    );
}

#[tokio::test]
async fn a_changed_tool_list_is_offered_between_turns() {
    let started = McpServers::start(&[server(&[])], &spawner()).await;
    let names: Vec<String> = started.tools.iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(
        names,
        [
            "mcp__fault__ok",
            "mcp__fault__crash",
            "mcp__fault__hang",
            "mcp__fault__malformed",
            "mcp__fault__huge",
            "mcp__fault__grow"
        ]
    );
    let servers = started.servers;
    // Whatever the server said before the first look is taken in once.
    let _ = servers.changed_tools().await;
    assert!(servers.changed_tools().await.is_none());
    // `grow` adds `late` and sends notifications/tools/list_changed.
    let connection = servers.connection("fault").unwrap();
    call(connection, "grow").await.unwrap();
    let mut update = None;
    for _ in 0..50 {
        update = servers.changed_tools().await;
        if update.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (removed, added) = update.expect("the change was never seen");
    assert_eq!(removed.len(), 6, "the server's entries are replaced");
    let added: Vec<&str> = added.iter().map(|t| t.name()).collect();
    assert_eq!(added.last(), Some(&"mcp__fault__late"));
    assert_eq!(added.len(), 7);
}
