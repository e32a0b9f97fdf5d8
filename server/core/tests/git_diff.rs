//! `git_diff`, the tool added through the registry alone (one file, one
//! registration line), end to end: a scripted model calls it in a real Git
//! repository on disk, and Git runs as a real process.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use pretty_assertions::assert_eq;
use rein_core::os::disk::DiskWorkspace;
use rein_core::os::process::ProcessExec;
use rein_core::ports::TaskEvent;
use rein_core::task::{TaskId, TaskSpec};
use rein_testkit::fake_model::{Reply, Scenario};
use serde_json::json;
use support::{Setup, cart_workspace, full_results};
use tempfile::TempDir;

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// A repository with one commit, then uncommitted work: a changed file, a
/// changed secret file and a new file.
fn repository() -> TempDir {
    let dir = TempDir::new().unwrap();
    std::fs::write(
        dir.path().join("cart.py"),
        "def total(items):\n    return len(items)\n",
    )
    .unwrap();
    std::fs::write(dir.path().join(".env"), "KEY=old\n").unwrap();
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "start"]);
    std::fs::write(
        dir.path().join("cart.py"),
        "def total(items):\n    return sum(i.price for i in items)\n",
    )
    .unwrap();
    std::fs::write(dir.path().join(".env"), "KEY=new-secret-value\n").unwrap();
    std::fs::write(dir.path().join("notes.md"), "todo\n").unwrap();
    dir
}

async fn call_git_diff(dir: &Path, arguments: serde_json::Value) -> (support::Run, String) {
    let run = Setup::new(cart_workspace())
        .task(TaskSpec::instruction(
            TaskId("t-test".into()),
            "Review the changes",
        ))
        .workspace(Arc::new(DiskWorkspace::new(dir).unwrap()))
        .runner(Arc::new(ProcessExec::new()))
        .run(
            Scenario::new()
                .reply(Reply::text("Looking at the changes.").tool_call("git_diff", arguments))
                .reply(Reply::text("Reviewed.")),
            |_| {},
        )
        .await;
    let result = full_results(&run).into_iter().next().expect("one result");
    (run, result)
}

#[tokio::test]
async fn git_diff_shows_the_uncommitted_changes_but_not_the_secret_file() {
    let dir = repository();
    let (run, result) = call_git_diff(dir.path(), json!({})).await;
    assert!(
        result.contains("-    return len(items)\n+    return sum(i.price for i in items)"),
        "{result}"
    );
    assert!(
        result.contains("New files not tracked by Git (read them with read_file):\n  notes.md"),
        "{result}"
    );
    assert!(
        !result.contains("new-secret-value") && !result.contains(".env"),
        "{result}"
    );
    assert!(
        result.contains("[1 changed file(s) not shown: you may not read them]"),
        "{result}"
    );
    // Read-only: allowed without a question, and shown by its title.
    assert!(run.approver.asked().is_empty());
    assert!(run.progress.events().iter().any(|e| matches!(
        e,
        TaskEvent::ToolCall { title, .. } if title == "reviewing the changes"
    )));
}

#[tokio::test]
async fn git_diff_narrows_to_a_path_and_refuses_one_outside_the_project() {
    let dir = repository();
    let (_, result) = call_git_diff(dir.path(), json!({"path": "notes.md"})).await;
    assert_eq!(
        result,
        "New files not tracked by Git (read them with read_file):\n  notes.md\n"
    );
    let (_, outside) = call_git_diff(dir.path(), json!({"path": "../elsewhere"})).await;
    assert!(outside.contains("outside"), "{outside}");
}

#[tokio::test]
async fn git_diff_outside_a_repository_tells_the_model_why() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
    let (_, result) = call_git_diff(dir.path(), json!({})).await;
    assert!(
        result.starts_with(
            "This project is not a Git repository: there is no commit to compare with."
        ),
        "{result}"
    );
}
