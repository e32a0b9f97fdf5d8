//! A session's MCP servers, shared by its tasks (`McpPool`): started once,
//! reused only while their configuration and sandbox are unchanged, let go
//! when the configuration drops them, started fresh after giving up, and
//! a tool-list change seen by every task that shares the server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::time::Duration;

use rein_core::config::mcp::{McpServer, McpTransport};
use rein_mcp::{McpPool, Started};
use support::{call, spawner};

/// The fault server, writing each start's pid to `starts`.
fn counted(starts: &Path) -> McpServer {
    let mut server = support::fault_server(&[]);
    if let McpTransport::Stdio { env, .. } = &mut server.transport {
        env.push(("FAULT_STARTS".into(), starts.display().to_string()));
    }
    server
}

fn pids(starts: &Path) -> Vec<i32> {
    std::fs::read_to_string(starts)
        .unwrap_or_default()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

fn names(started: &Started) -> Vec<&str> {
    started.tools.iter().map(|t| t.name()).collect()
}

/// Whether `pid` has exited (gone, or a zombie nobody reaped yet).
fn exited(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

async fn wait_exited(pid: i32) -> bool {
    for _ in 0..100 {
        if exited(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn a_server_is_started_once_for_the_tasks_of_a_session() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let server = counted(&starts);
    let pool = McpPool::new();
    let first = pool
        .servers(std::slice::from_ref(&server), "policy", &spawner())
        .await;
    assert!(
        names(&first).contains(&"mcp__fault__ok"),
        "{:?}",
        names(&first)
    );
    drop(first);
    let second = pool.servers(&[server], "policy", &spawner()).await;
    assert_eq!(pids(&starts).len(), 1, "started again for the second task");
    let connection = second.servers.connection("fault").unwrap();
    assert_eq!(
        call(connection, "ok").await.unwrap()["content"][0]["text"],
        "ok {}"
    );
    assert!(names(&second).contains(&"mcp__fault__ok"));
    pool.shutdown().await;
    assert!(
        wait_exited(pids(&starts)[0]).await,
        "the session's end stops it"
    );
}

#[tokio::test]
async fn an_edited_entry_or_another_sandbox_starts_the_server_anew() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let server = counted(&starts);
    let pool = McpPool::new();
    drop(
        pool.servers(std::slice::from_ref(&server), "policy", &spawner())
            .await,
    );
    let mut edited = server.clone();
    edited.tool_timeout = Duration::from_secs(7);
    drop(pool.servers(&[edited.clone()], "policy", &spawner()).await);
    assert_eq!(pids(&starts).len(), 2);
    assert!(
        wait_exited(pids(&starts)[0]).await,
        "the old one was let go"
    );
    drop(pool.servers(&[edited], "other policy", &spawner()).await);
    assert_eq!(
        pids(&starts).len(),
        3,
        "another sandbox policy: a new start"
    );
    assert_eq!(pool.len().await, 1);
    pool.shutdown().await;
}

/// A task still running keeps the server it started with, even when the
/// configuration drops it for the next task; it stops when that task ends.
#[tokio::test]
async fn a_server_dropped_from_the_settings_stops_when_its_last_task_ends() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let pool = McpPool::new();
    let running = pool
        .servers(&[counted(&starts)], "policy", &spawner())
        .await;
    let next = pool.servers(&[], "policy", &spawner()).await;
    assert!(next.tools.is_empty());
    assert!(pool.is_empty().await);
    let connection = running.servers.connection("fault").unwrap().clone();
    assert_eq!(
        call(&connection, "ok").await.unwrap()["content"][0]["text"],
        "ok {}"
    );
    let pid = pids(&starts)[0];
    assert!(!exited(pid));
    drop(connection);
    drop(running);
    assert!(
        wait_exited(pid).await,
        "still running after its last task ended"
    );
}

#[tokio::test]
async fn a_server_that_gave_up_is_started_fresh_for_the_next_task() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let server = counted(&starts);
    let pool = McpPool::new();
    let task = pool
        .servers(std::slice::from_ref(&server), "policy", &spawner())
        .await;
    let connection = task.servers.connection("fault").unwrap().clone();
    for _ in 0..=rein_mcp::connection::MAX_RESTARTS {
        let _ = call(&connection, "crash").await;
    }
    let error = call(&connection, "ok").await.unwrap_err();
    assert!(
        matches!(error, rein_mcp::CallError::GaveUp { .. }),
        "{error}"
    );
    let before = pids(&starts).len();
    let next = pool.servers(&[server], "policy", &spawner()).await;
    assert_eq!(pids(&starts).len(), before + 1);
    let fresh = next.servers.connection("fault").unwrap();
    assert_eq!(
        call(fresh, "ok").await.unwrap()["content"][0]["text"],
        "ok {}"
    );
    pool.shutdown().await;
}

/// Two tasks share a server; it changes its tools: each task is offered
/// the new list (one task's look does not use up the other's).
#[tokio::test]
async fn every_task_sharing_a_server_sees_its_tool_list_change() {
    let pool = McpPool::new();
    let server = support::fault_server(&[]);
    let a = pool
        .servers(std::slice::from_ref(&server), "policy", &spawner())
        .await;
    let b = pool.servers(&[server], "policy", &spawner()).await;
    for task in [&a, &b] {
        assert!(task.servers.changed_tools().await.is_none());
    }
    call(a.servers.connection("fault").unwrap(), "grow")
        .await
        .unwrap();
    for task in [&a, &b] {
        let mut update = None;
        for _ in 0..50 {
            update = task.servers.changed_tools().await;
            if update.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let (_, tools) = update.expect("the change was not seen");
        assert!(tools.iter().any(|t| t.name() == "mcp__fault__late"));
    }
    pool.shutdown().await;
}

/// Starting the session's servers leaves the others running, and a task
/// then finds them started.
#[tokio::test]
async fn warming_starts_the_servers_asked_for_and_a_task_reuses_them() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let server = counted(&starts);
    let mut failing = support::fault_server(&["fail-start"]);
    failing.name = "broken".into();
    let pool = McpPool::new();
    pool.warm(&[server.clone(), failing], "policy", &spawner())
        .await;
    assert_eq!(pids(&starts).len(), 1);
    assert_eq!(pool.len().await, 1, "a server that fails is not kept");
    let task = pool.servers(&[server], "policy", &spawner()).await;
    assert_eq!(pids(&starts).len(), 1);
    assert!(task.reports[0].started.is_ok());
    pool.shutdown().await;
}
