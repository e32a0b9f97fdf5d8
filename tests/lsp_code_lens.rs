//! "▶ Fix with Rein" above a failing test, through the real `rein lsp`:
//! the lens appears once a task's run shows the test failing (the editor
//! is asked to refresh its lenses), runs the same command as the code
//! action, and goes once a run shows the test passing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use rein_testkit::editor::EditDecision;
use serde_json::{Value, json};
use support::{Server, Setup, demo_project, demo_scenario, fixed_cart};

const CART_TEST: &str = "tests/test_cart.py";

/// The lenses of `rel`, as the server sent them.
async fn code_lenses(s: &mut Server, rel: &str) -> Vec<Value> {
    let uri = s.editor.uri(rel);
    let answer = s
        .editor
        .request(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": uri}}),
        )
        .await
        .unwrap();
    assert!(answer.get("error").is_none(), "{answer}");
    answer["result"].as_array().cloned().unwrap_or_default()
}

/// The lenses of `rel` as "line title command testName".
async fn lenses(s: &mut Server, rel: &str) -> Vec<String> {
    code_lenses(s, rel)
        .await
        .iter()
        .map(|lens| {
            let command = &lens["command"];
            format!(
                "{} {} {} {}",
                lens["range"]["start"]["line"],
                command["title"].as_str().unwrap(),
                command["command"].as_str().unwrap(),
                command["arguments"][0]["testName"]
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_test_gets_a_lens_until_a_run_shows_it_passing() {
    let mut setup = Setup::new(demo_project(), demo_scenario());
    // The fix waits for the user, so the lenses can be looked at between
    // the baseline run and the check.
    setup.decide_edit = Box::new(|_| EditDecision::Hold);
    let mut s = Server::start(setup).await;
    s.editor.open(CART_TEST).await.unwrap();
    assert_eq!(lenses(&mut s, CART_TEST).await, Vec::<String>::new());

    let fix = s.fix_test_action(CART_TEST, 7).await;
    let task = s.start_task(fix["command"]["arguments"].clone()).await;
    let edit = s.nth_edit_of("cart.py", 1).await;

    // The baseline run showed test_total failing: the editor was asked to
    // look again, and the lens runs what the code action runs.
    assert!(s.editor.lens_refreshes() >= 1);
    assert_eq!(
        lenses(&mut s, CART_TEST).await,
        vec![r#"6 ▶ Fix with Rein rein.fixTest "TestCart.test_total""#.to_owned()]
    );
    let uri = s.editor.uri(CART_TEST);
    let lens_argument = code_lenses(&mut s, CART_TEST).await[0]["command"]["arguments"][0].clone();
    assert_eq!(lens_argument["uri"], json!(uri));
    assert_eq!(lens_argument["testName"], "TestCart.test_total");
    // Another file's buffer has none.
    s.editor.open("cart.py").await.unwrap();
    assert_eq!(lenses(&mut s, "cart.py").await, Vec::<String>::new());

    let refreshed = s.editor.lens_refreshes();
    s.editor
        .answer_edit(&edit, EditDecision::Accept)
        .await
        .unwrap();
    let status = s.until_end(&task).await;
    assert_eq!(status["state"], "succeeded", "{status}");
    assert_eq!(s.disk("cart.py"), fixed_cart());

    // The check showed it passing: the lens is gone, and the editor was
    // told to look again.
    assert_eq!(lenses(&mut s, CART_TEST).await, Vec::<String>::new());
    assert!(s.editor.lens_refreshes() > refreshed);
    assert_eq!(s.shutdown().await, 0);
}

/// A lens command is an ordinary `rein.fixTest`: started from the lens's
/// own argument, the task fixes the test.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lens_starts_the_fix() {
    let mut setup = Setup::new(demo_project(), demo_scenario());
    setup.decide_edit = Box::new(|_| EditDecision::Hold);
    let mut s = Server::start(setup).await;
    s.editor.open(CART_TEST).await.unwrap();
    let fix = s.fix_test_action(CART_TEST, 7).await;
    let first = s.start_task(fix["command"]["arguments"].clone()).await;
    s.nth_edit_of("cart.py", 1).await;
    let command: Value = code_lenses(&mut s, CART_TEST).await[0]["command"].clone();
    assert_eq!(command["command"], "rein.fixTest", "{command}");

    // The user gives up on the first task and clicks the lens.
    let mark = s.mark();
    s.cancel_task(&first).await;
    s.until_end_since(&first, mark).await;
    let second = s.start_task(command["arguments"].clone()).await;
    assert_ne!(second, first);
    assert_eq!(s.shutdown().await, 0);
}
