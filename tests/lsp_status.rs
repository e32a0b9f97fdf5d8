//! What the editor is told of a task's work while it runs, through the
//! real `rein lsp` and the headless editor (issue 35 point 5):
//! `rein/taskStatus`'s `step` (what it does now, in the user's words,
//! never stale) and `said` (the model's latest line as it streams). The
//! model's words are untrusted: control and bidi characters, a line of
//! 10,000 characters, the editor's key and a secret of the server's
//! environment in them reach the editor inert, bounded and redacted.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{Server, Setup, demo_project, demo_scenario, fixed_cart};

const CART_TEST: &str = "tests/test_cart.py";
/// 0-based line of `def test_total` in the demo project's test file.
const TEST_TOTAL_LINE: u32 = 6;

/// `scenario` written next to the test's files, to be played.
fn scenario_file(dir: &tempfile::TempDir, scenario: &Value) -> std::path::PathBuf {
    let path = dir.path().join("scenario.json");
    std::fs::write(&path, serde_json::to_string_pretty(scenario).unwrap()).unwrap();
    path
}

/// The steps the statuses named, each once where it repeats.
fn steps(statuses: &[Value]) -> Vec<String> {
    let mut steps: Vec<String> = Vec::new();
    for status in statuses {
        if let Some(step) = status["step"].as_str()
            && steps.last().is_none_or(|last| last != step)
        {
            steps.push(step.to_owned());
        }
    }
    steps
}

/// Whether `want` appears in `seen` in this order (others between).
fn in_order(seen: &[String], want: &[&str]) -> bool {
    let mut want = want.iter().peekable();
    for step in seen {
        if want.peek().is_some_and(|w| *w == step) {
            want.next();
        }
    }
    want.peek().is_none()
}

/// The demo's fix, its first reply streamed slowly (as a real model
/// does): the status names every step as it happens, and carries the
/// model's words as they come, a word at a time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_names_each_step_and_carries_the_models_words() {
    let dir = tempfile::tempdir().unwrap();
    let mut scenario: Value =
        serde_json::from_str(&std::fs::read_to_string(demo_scenario()).unwrap()).unwrap();
    // 4 characters an event, 60 ms apart: the first line takes most of a
    // second to come.
    scenario["replies"][0]["faults"] = json!([{"delay_ms": 60}]);
    let mut s = Server::start(Setup::new(demo_project(), scenario_file(&dir, &scenario))).await;
    s.editor.open(CART_TEST).await.unwrap();
    let task = s
        .fix_test(CART_TEST, TEST_TOTAL_LINE, "TestCart.test_total")
        .await;
    let end = s.until_end(&task).await;
    assert_eq!(end["state"], "succeeded", "{end}");
    assert_eq!(s.disk("cart.py"), fixed_cart());

    let statuses = s.statuses(&task);
    let seen = steps(&statuses);
    // The model is called, runs the test, is called again (at once: not
    // "running tests" while it thinks), reads, edits, waits for the
    // user's review, runs the tests, and its claim is verified.
    let want = [
        "thinking",
        "running tests",
        "thinking",
        "reading cart.py",
        "thinking",
        "editing cart.py",
        "waiting for you · review cart.py",
        "thinking",
        "running tests",
        "thinking",
        "verifying",
    ];
    assert!(in_order(&seen, &want), "steps: {seen:#?}");
    // Never stale: whatever ran, the next step after it is the model again
    // (or the verdict), and a status said so.
    for (i, step) in seen.iter().enumerate() {
        if step == "running tests" || step == "reading cart.py" {
            assert!(
                matches!(
                    seen.get(i + 1).map(String::as_str),
                    Some("thinking" | "verifying")
                ),
                "after {step}: {seen:#?}"
            );
        }
    }
    // While the review waits, the status says so, not "editing".
    let waiting: Vec<&Value> = statuses
        .iter()
        .filter(|s| s["waitingFor"]["kind"] == "review")
        .collect();
    assert!(!waiting.is_empty());
    assert!(
        waiting
            .iter()
            .all(|s| s["step"] == "waiting for you · review cart.py"),
        "{waiting:#?}"
    );
    // The final status has no step; the counters are all still there.
    assert_eq!(end.get("step"), None, "{end}");
    for field in ["turn", "maxTurns", "inputTokens", "outputTokens", "costUsd"] {
        assert!(statuses.iter().all(|s| s.get(field).is_some()), "{field}");
    }

    // What the model said, as it said it: every `said` is (the start of)
    // one of the lines of its replies, whole words only.
    let lines = [
        "I'll run the failing test first to see how it fails.",
        "total() returned 3 instead of 30. Let me read cart.py.",
        "total() sums the quantities and ignores the prices. It should sum price × quantity.",
        "Now the test again, and the rest of the file's tests.",
        "Fixed: `total()` summed the quantities instead of price × quantity. `test_total` passes now, and so do the other tests in tests/test_cart.py.",
    ];
    let said: Vec<&str> = statuses.iter().filter_map(|s| s["said"].as_str()).collect();
    for words in &said {
        assert!(
            lines.iter().any(|line| line.starts_with(words)
                && (line.len() == words.len() || line[words.len()..].starts_with(' '))),
            "said {words:?}"
        );
    }
    // Each reply's last line reached the editor whole.
    for line in lines {
        assert!(said.contains(&line), "{line:?} never said: {said:#?}");
    }
    // The first, slow, line showed before it was complete.
    assert!(
        said.iter()
            .any(|w| w.len() < lines[0].len() && lines[0].starts_with(w)),
        "the first line only came whole: {said:#?}"
    );
    assert_eq!(end["said"], lines[4]);
}

/// The model's words attack the editor: control characters that would
/// rewrite a line, a bidi override, a line of 10,000 characters, the
/// editor's API key and a secret of the server's environment. None of it
/// reaches the editor as such: `said` is one inert line of at most 160
/// characters, the keys redacted, in every message the editor received.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_models_words_reach_the_editor_inert_bounded_and_redacted() {
    const EDITOR_KEY: &str = "editor-key-5e4d3c2b1a09";
    const ENV_SECRET: &str = "env-secret-a1b2c3d4e5f6";
    let dir = tempfile::tempdir().unwrap();
    let long = "word ".repeat(2_000);
    let disguised = "Done.\u{1b}[2K\r All good \u{202e}gnp.exe\u{202c}\u{7}";
    let scenario = json!({
        "require_api_key": true,
        "replies": [
            {
                "text": format!("{long}\n{disguised} The token is {ENV_SECRET}, the key {EDITOR_KEY}.\n"),
                "tool_calls": [{"name": "read_file", "input": {"path": "cart.py"}}],
                "faults": [{"delay_ms": 1}]
            },
            {
                "text": format!("Now the fix.\n{long}"),
                "tool_calls": [{"name": "edit_file", "input": {"path": "cart.py", "old_text": "    return sum(item.qty for item in items)\n\n\ndef count", "new_text": "    return sum(item.price * item.qty for item in items)\n\n\ndef count"}}]
            },
            {
                "text": format!("{disguised} Key: {EDITOR_KEY} and {ENV_SECRET}")
            }
        ]
    });
    let mut setup = Setup::new(demo_project(), scenario_file(&dir, &scenario));
    setup.settings = vec![("apiKey", json!(EDITOR_KEY))];
    setup.env = vec![("DEPLOY_TOKEN", ENV_SECRET.to_owned())];
    let mut s = Server::start(setup).await;
    s.editor.open(CART_TEST).await.unwrap();
    let task = s
        .fix_test(CART_TEST, TEST_TOTAL_LINE, "TestCart.test_total")
        .await;
    let end = s.until_end(&task).await;
    assert_eq!(end["state"], "succeeded", "{end}");

    // Not one message the editor received holds a key.
    for message in s.editor.received() {
        let text = message.to_string();
        for needle in [EDITOR_KEY, ENV_SECRET] {
            assert!(
                !text.contains(needle),
                "{needle} reached the editor: {text}"
            );
        }
    }
    let statuses = s.statuses(&task);
    let said: Vec<&str> = statuses.iter().filter_map(|s| s["said"].as_str()).collect();
    assert!(!said.is_empty());
    for words in &said {
        assert!(words.chars().count() <= 160, "{} characters", words.len());
        assert!(
            !words.chars().any(|c| c.is_control()
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')),
            "{words:?}"
        );
    }
    for status in &statuses {
        if let Some(step) = status["step"].as_str() {
            assert!(!step.chars().any(char::is_control), "{step:?}");
        }
    }
    // The long line, cut; the disguised one, its characters shown escaped
    // and the keys redacted.
    assert!(
        said.iter()
            .any(|w| w.starts_with("word word") && w.ends_with('…') && w.chars().count() <= 160),
        "{said:#?}"
    );
    let shown = r"Done.\x1b[2K All good \u{202e}gnp.exe\u{202c}\x07";
    assert!(
        said.contains(&format!("{shown} The token is <redacted>, the key <redacted>.").as_str()),
        "{said:#?}"
    );
    assert_eq!(
        end["said"],
        format!("{shown} Key: <redacted> and <redacted>")
    );
    // The summary, the model's last words in full, is redacted too.
    let summary = end["summary"].as_str().unwrap();
    assert!(
        summary.contains("Key: <redacted> and <redacted>"),
        "{summary}"
    );
}
