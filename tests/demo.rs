//! `rein demo`, the real binary, with the scripted model: it must fix the
//! sample project's failing test through the real language server, show
//! what an editor would, leave the fixed project where it says, and exit 0.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use pretty_assertions::assert_eq;
use rein_testkit::editor::EditDecision;
use rein_testkit::rein_binary;
use serde_json::Value;
use support::{Server, Setup, demo_cart, demo_project, demo_scenario};
use tokio::process::Command;

mod support;

/// 0-based line of `def test_total` in the demo project's test file.
const TEST_TOTAL_LINE: u32 = 6;
const CART_TEST: &str = "tests/test_cart.py";

/// Runs until the task ends: a final state, or a question to answer (a
/// review or an approval the editor gives is not an end).
async fn until_end(s: &mut Server, task: &str) -> Value {
    s.until_status(task, |status| {
        matches!(
            status["state"].as_str(),
            Some("succeeded" | "unverified" | "failed" | "cancelled" | "budget_exhausted")
        ) || (status["state"] == "waiting_user"
            && !matches!(
                status["waitingFor"]["kind"].as_str(),
                Some("review" | "approval")
            ))
    })
    .await
}

/// What the editor was told, all of it: statuses, messages, progress.
fn everything_said(s: &Server) -> String {
    [
        "rein/taskStatus",
        "window/showMessage",
        "window/showMessageRequest",
        "$/progress",
    ]
    .iter()
    .flat_map(|method| s.messages(method))
    .map(|m| m.to_string())
    .collect::<Vec<_>>()
    .join("\n")
}

#[tokio::test]
async fn the_demo_fixes_the_sample_project_with_the_scripted_model() {
    // No user configuration may leak in: a config file that sets budgets
    // or a provider would change what the demo does.
    let config_home = tempfile::tempdir().unwrap();
    let mut command = Command::new(rein_binary().unwrap());
    command
        .arg("demo")
        .env_remove("REIN_PROVIDER")
        .env_remove("REIN_MODEL")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("REIN_MAX_TURNS")
        .env_remove("REIN_MAX_COST_USD")
        .env("XDG_CONFIG_HOME", config_home.path())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // The demo has its own 60 s limit; this one only keeps a broken demo
    // from hanging the suite.
    let output = tokio::time::timeout(Duration::from_secs(180), command.output())
        .await
        .expect("rein demo did not end")
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let context = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    assert_eq!(output.status.code(), Some(0), "{context}");

    for expected in [
        // The scripted model is announced first, with how to use a real one.
        "The model is SCRIPTED",
        "REIN_PROVIDER=anthropic ANTHROPIC_API_KEY=… rein demo",
        // The code action the editor found and ran.
        "▸ Fix test test_total with Rein",
        // The proposal, approved.
        "✎ workspace/applyEdit: Rein proposes a change to cart.py",
        "✔ approved",
        // Progress as a status line.
        "⟳ turn 1/20",
        // The verification and its evidence.
        "✔ verification passed",
        "command   python3 -m unittest -v tests.test_cart.TestCart.test_total",
        "result    exit code 0 in",
        "file      cart.py @ ",
        // The end.
        "exited with 0",
        "✔ Fixed. Final state `succeeded`",
    ] {
        assert!(stdout.contains(expected), "{expected:?} missing\n{context}");
    }
    let scripted_notice = stdout.find("The model is SCRIPTED").unwrap();
    let first_editor_line = stdout.find("editor ·").unwrap();
    assert!(
        scripted_notice < first_editor_line,
        "the notice comes first\n{context}"
    );
    let fixed = "return sum(item.price * item.qty for item in items)";
    assert!(
        stdout.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with('+') && !l.starts_with("+++") && l.contains(fixed)
        }),
        "no diff line adds the fix\n{context}"
    );
    assert!(
        stdout.lines().any(|l| l.trim_start().starts_with('-')
            && l.contains("return sum(item.qty for item in items)")),
        "no diff line removes the bug\n{context}"
    );

    // The project is where the demo says, fixed on disk, and its tests pass.
    let project = stdout
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("project "))
        .map(|p| PathBuf::from(p.trim()))
        .unwrap_or_else(|| panic!("no project line\n{context}"));
    assert!(stdout.contains(&format!(
        "cd {} && python3 -m unittest -v",
        project.display()
    )));
    let cart = std::fs::read_to_string(project.join("cart.py")).unwrap();
    assert!(cart.contains(fixed), "{cart}");
    assert!(!cart.contains("return sum(item.qty for item in items)\n\n\ndef count"));
    let tests = Command::new("python3")
        .args(["-m", "unittest", "-v"])
        .current_dir(&project)
        .output()
        .await
        .unwrap();
    let report = String::from_utf8_lossy(&tests.stderr);
    assert!(tests.status.success(), "{report}");
    assert!(report.contains("test_total"), "{report}");
    assert!(report.contains("Ran 3 tests"), "{report}");

    // The server's log is in the project, and a clean run leaves no error.
    let log = std::fs::read_to_string(project.join(".rein/logs/demo-server.stderr.log")).unwrap();
    assert!(!log.contains("ERROR"), "{log}");

    // The demo keeps the project for the user; the test cleans up.
    let _ = std::fs::remove_dir_all(&project);
}

/// Issue 16, point 10: the demo project with the bundled scenario, in an
/// editor whose user rejects the proposed edit. The task ends naming the
/// rejection as its cause; it never blames Anthropic (the scripted model
/// only borrows its wire format) nor a script that ran out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_demo_edit_ends_naming_the_rejection() {
    let mut setup = Setup::new(demo_project(), demo_scenario());
    setup.decide_edit = Box::new(|_| EditDecision::Reject);
    let mut s = Server::start(setup).await;
    s.editor.open(CART_TEST).await.unwrap();
    let task = s
        .fix_test(CART_TEST, TEST_TOTAL_LINE, "TestCart.test_total")
        .await;

    let status = until_end(&mut s, &task).await;
    let context = format!("final status: {status}\nlog:\n{}", s.log());
    // Issue 35: the user's decision, not a failure ("failed: stopped: the
    // model gave up (the same answer twice…)").
    assert_eq!(status["state"], "cancelled", "{context}");
    assert_eq!(
        status["reason"], "You rejected the change; Rein stopped.",
        "{context}"
    );
    // The model's own words stay its summary.
    let summary = status["summary"].as_str().unwrap();
    assert!(
        summary.contains("You rejected the edit to cart.py, so nothing was changed"),
        "{context}"
    );
    let said = everything_said(&s);
    for wrong in ["Anthropic", "scenario exhausted", "gave up after"] {
        assert!(!said.contains(wrong), "{wrong:?} was said:\n{said}");
    }
    assert_eq!(s.disk("cart.py"), demo_cart());
    assert_eq!(s.shutdown().await, 0);
}

/// A scripted scenario that has run out is not an outage: the task fails
/// at its first request past the end (no retries), and says the scripted
/// model refused, not that Anthropic is unavailable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_that_runs_out_fails_at_once_naming_the_scripted_model() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("short.json");
    std::fs::write(
        &scenario,
        r#"{"replies": [{"text": "Reading cart.py.", "tool_calls": [{"name": "read_file", "input": {"path": "cart.py"}}]}]}"#,
    )
    .unwrap();
    let mut s = Server::start(Setup::new(demo_project(), scenario)).await;
    s.editor.open(CART_TEST).await.unwrap();
    let task = s
        .fix_test(CART_TEST, TEST_TOTAL_LINE, "TestCart.test_total")
        .await;

    let status = until_end(&mut s, &task).await;
    assert_eq!(status["state"], "failed", "{status}");
    let reason = status["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("the model call failed: the scripted model refused the request"),
        "{status}"
    );
    assert!(
        reason.contains("scenario exhausted after 1 replies"),
        "{status}"
    );
    let retries: Vec<Value> = s
        .messages("$/progress")
        .into_iter()
        .filter(|m| m.to_string().contains("retry"))
        .collect();
    assert!(retries.is_empty(), "retried: {retries:?}");
    let said = everything_said(&s);
    assert!(!said.contains("Anthropic"), "{said}");
    assert!(!said.contains("gave up after"), "{said}");
    assert_eq!(s.shutdown().await, 0);
}
