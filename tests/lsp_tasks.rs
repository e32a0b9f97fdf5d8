//! Tasks end to end through the real `rein lsp` over stdio, driven by a
//! headless editor: the fix-test flow (Python and Rust), what happens when
//! the user types while the model works, rejects an edit, or runs an editor
//! that misreports or ignores edits, cancellation (progress button,
//! command, `shutdown`) and two tasks at once.
//!
//! The model is the scripted one, inside the server process: what it was
//! told is checked through the scenario, which branches on the exact tool
//! result it expects and otherwise goes "off script" (an `ask_user` naming
//! the step, so the task ends `waiting_user` with that question as its
//! reason instead of succeeding). Timeouts here are hang guards only.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::HashSet;
use std::time::Duration;

use pretty_assertions::assert_eq;
use rein_testkit::editor::EditDecision;
use serde_json::{Value, json};
use support::{
    FIXED, Server, Setup, UNFIXED, demo_cart, demo_project, demo_scenario, fixed_cart, fixture,
};

const CART_TEST: &str = "tests/test_cart.py";
/// 0-based line of `def test_total` in the demo project's test file.
const TEST_TOTAL_LINE: u32 = 6;

fn lsp_tasks_scenario(name: &str) -> std::path::PathBuf {
    fixture(&format!("lsp_tasks/{name}"))
}

/// Starts the fix-test task on the demo project's `test_total`.
async fn fix_test_total(s: &mut Server) -> String {
    s.fix_test(CART_TEST, TEST_TOTAL_LINE, "TestCart.test_total")
        .await
}

fn assert_state(status: &Value, state: &str) {
    assert_eq!(status["state"], state, "final status: {status}");
}

/// The first text edit of an `applyEdit` request, and the version it is
/// tied to.
fn first_hunk(request: &Value) -> (&Value, &Value) {
    let change = &request["params"]["edit"]["documentChanges"][0];
    (&change["edits"][0], &change["textDocument"]["version"])
}

#[test]
fn scenarios_parse() {
    let dir = fixture("lsp_tasks");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            rein_testkit::fake_model::Scenario::load(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            count += 1;
        }
    }
    assert!(count >= 8, "only {count} scenarios in {}", dir.display());
    rein_testkit::fake_model::Scenario::load(demo_scenario()).unwrap();
}

/// 1. The demo: code action on the test, the command, the approved edit
/// (to a file the editor opens when the edit arrives), the save, the
/// verification and its evidence, as `rein demo` would show them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fix_test_python_demo_succeeds_with_evidence() {
    let mut s = Server::start(Setup::new(demo_project(), demo_scenario())).await;
    s.editor.open(CART_TEST).await.unwrap();

    let fix = s.fix_test_action(CART_TEST, 7).await;
    assert_eq!(fix["title"], "Fix test test_total with Rein");
    let task = s.start_task(fix["command"]["arguments"].clone()).await;

    let status = s.until_end(&task).await;
    assert_state(&status, "succeeded");
    let reason = status["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("fixed: `TestCart.test_total` passes"),
        "{reason}"
    );

    // The buffer the editor opened for the edit, and the disk (saved by
    // the editor when the server asked, before the tests ran), hold the fix.
    assert_eq!(s.editor.buffer("cart.py").unwrap(), fixed_cart());
    assert_eq!(s.disk("cart.py"), fixed_cart());
    assert!(!s.messages("rein/saveDocuments").is_empty());
    // Nothing else was touched.
    assert_eq!(
        s.editor.buffer(CART_TEST).unwrap(),
        std::fs::read_to_string(demo_project().join(CART_TEST)).unwrap()
    );

    // One minimal hunk, annotated for the user's confirmation.
    let edits = s.edits_of("cart.py");
    assert_eq!(edits.len(), 1);
    let (hunk, _) = first_hunk(&edits[0]);
    assert_eq!(hunk["range"]["start"]["line"], 12);
    let annotation = hunk["annotationId"].as_str().unwrap();
    assert_eq!(
        edits[0]["params"]["edit"]["changeAnnotations"][annotation]["needsConfirmation"],
        true
    );

    // The evidence: the target test, run on the fixed file, passed.
    let verifications: Vec<Value> = s
        .messages("rein/verification")
        .into_iter()
        .map(|m| m["params"].clone())
        .filter(|p| p["taskId"] == task)
        .collect();
    let verdict = verifications.last().unwrap();
    assert_eq!(verdict["passed"], true, "{verdict}");
    let evidence = verdict["evidence"].as_array().unwrap();
    let target = evidence
        .iter()
        .find(|e| {
            e["check"]
                .as_str()
                .is_some_and(|c| c.starts_with("test_passes"))
        })
        .unwrap_or_else(|| panic!("no test_passes evidence: {verdict}"));
    assert_eq!(target["exitCode"], 0, "{target}");
    assert!(
        target["command"]
            .as_str()
            .unwrap()
            .contains("TestCart.test_total"),
        "{target}"
    );
    assert!(
        target["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == "cart.py"),
        "{target}"
    );
    // Workspace-relative: a shared trace carries no home directory.
    let log_path = target["logPath"].as_str().unwrap();
    assert!(log_path.starts_with(".rein/artifacts/"), "{log_path}");
    let log = s.disk(log_path);
    assert!(log.contains("OK"), "{log}");

    // Progress: begin (cancellable), reports, end with the outcome.
    let progress = s.progress(&task);
    assert_eq!(progress[0]["kind"], "begin");
    // Titled with the task (a client shows it after the server's name:
    // not "Rein" again), with a percentage from the start.
    assert_eq!(progress[0]["title"], "Fix TestCart.test_total");
    assert_eq!(progress[0]["percentage"], 0);
    assert_eq!(progress[0]["cancellable"], true);
    assert!(progress.iter().any(|p| p["kind"] == "report"));
    let end = progress.last().unwrap();
    assert_eq!(end["kind"], "end");
    assert!(
        end["message"].as_str().unwrap().starts_with("fixed:"),
        "{end}"
    );
    let states: Vec<String> = s
        .statuses(&task)
        .iter()
        .map(|st| st["state"].as_str().unwrap().to_owned())
        .collect();
    assert!(states.iter().any(|st| st == "running"), "{states:?}");
    assert!(states.iter().any(|st| st == "verifying"), "{states:?}");
    assert_eq!(states.last().map(String::as_str), Some("succeeded"));

    assert_eq!(s.shutdown().await, 0);
}

/// The user has an unsaved change in the test file: a stricter assertion
/// the model's fix does not meet. Rein reads the buffer, so the tests must
/// run on it too: the editor is asked to save it before they run, the
/// test fails, and Rein does not call the task fixed (before, the tests ran
/// on the saved copy and the task "succeeded").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tests_run_on_the_users_unsaved_buffers_too() {
    let mut s = Server::start(Setup::new(demo_project(), demo_scenario())).await;
    s.editor.open(CART_TEST).await.unwrap();
    let stricter =
        "self.assertEqual(total(items), 30)\n        self.assertEqual(total(items * 2), 61)";
    s.editor
        .replace(CART_TEST, "self.assertEqual(total(items), 30)", stricter)
        .await
        .unwrap();
    let buffer = s.editor.buffer(CART_TEST).unwrap();
    assert_ne!(s.disk(CART_TEST), buffer, "the change is unsaved");

    let task = fix_test_total(&mut s).await;
    let status = s.until_end(&task).await;
    assert_ne!(status["state"], "succeeded", "{status}");
    // The editor was asked to save the user's buffer with the edited one,
    // and it holds exactly what the user typed.
    let test_uri = s.editor.uri(CART_TEST);
    assert!(
        s.messages("rein/saveDocuments")
            .iter()
            .any(|m| m["params"]["uris"]
                .as_array()
                .unwrap()
                .iter()
                .any(|u| *u == json!(test_uri))),
        "{:?}",
        s.messages("rein/saveDocuments")
    );
    assert_eq!(s.disk(CART_TEST), buffer);
    assert_eq!(s.editor.buffer(CART_TEST).unwrap(), buffer);
    // The model claimed it was done; the verifier, running the test the
    // user has in the buffer, said no.
    let verdicts = s.messages("rein/verification");
    assert!(
        !verdicts.is_empty()
            && verdicts.iter().all(|m| m["params"]["passed"] == false
                && m["params"]["detail"]
                    .as_str()
                    .is_some_and(|d| d.contains("`TestCart.test_total` still fails"))),
        "{verdicts:?}"
    );
    assert_eq!(s.shutdown().await, 0);
}

/// An editor that cannot save on request, with the user's unsaved change
/// in the test file, whose file on disk then changed behind the editor (a
/// checkout): even when the user lets Rein write the buffers, Rein writes
/// nothing over a disk copy the editor has not seen, and the tests cannot
/// run on the user's text. The user and the model are told why; the task
/// is not called fixed; the file on disk is as the checkout left it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsaved_buffer_rein_cannot_save_is_never_written_behind_the_editor() {
    let mut setup = Setup::new(demo_project(), demo_scenario());
    setup.save_documents = false;
    setup.message_choices = vec!["Write them".to_owned()];
    let mut s = Server::start(setup).await;
    s.editor.open(CART_TEST).await.unwrap();
    s.editor
        .replace(
            CART_TEST,
            "self.assertEqual(total(items), 30)",
            "self.assertEqual(total(items), 31)",
        )
        .await
        .unwrap();
    let checkout = format!("# from another branch\n{}", s.disk(CART_TEST));
    std::fs::write(s.root.join(CART_TEST), &checkout).unwrap();

    let task = fix_test_total(&mut s).await;
    let status = s.until_end(&task).await;
    assert_ne!(status["state"], "succeeded", "{status}");
    assert_eq!(s.disk(CART_TEST), checkout);
    let trace = s.disk(&format!(".rein/traces/{task}.jsonl"));
    assert!(
        trace.contains("tests/test_cart.py has unsaved changes in the editor, and its file on disk changed since the editor opened it"),
        "{trace}"
    );
    assert!(
        s.messages("window/showMessage")
            .iter()
            .any(|m| m["params"]["message"]
                .as_str()
                .is_some_and(|t| t.starts_with("Rein did not write tests/test_cart.py"))),
        "the user was not told"
    );
}

/// The same editor, but the user saved the test file once, then typed
/// more: the disk holds the editor's last save, so Rein may write the
/// buffer over it (the user lets it), and the tests run on what the user
/// sees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsaved_buffer_over_the_editors_own_save_is_written_for_the_tests() {
    let mut setup = Setup::new(demo_project(), demo_scenario());
    setup.save_documents = false;
    setup.message_choices = vec!["Write them".to_owned()];
    let mut s = Server::start(setup).await;
    s.editor.open(CART_TEST).await.unwrap();
    s.editor
        .replace(CART_TEST, "class TestCart", "# Cart tests.\nclass TestCart")
        .await
        .unwrap();
    s.editor.save(CART_TEST).await.unwrap();
    s.editor
        .replace(
            CART_TEST,
            "# Cart tests.",
            "# Cart tests: totals and counts.",
        )
        .await
        .unwrap();

    let task = fix_test_total(&mut s).await;
    let status = s.until_end(&task).await;
    assert_state(&status, "succeeded");
    assert_eq!(s.disk(CART_TEST), s.editor.buffer(CART_TEST).unwrap());
    assert!(
        s.disk(CART_TEST)
            .contains("# Cart tests: totals and counts.")
    );
    assert_eq!(s.shutdown().await, 0);
}

/// The editor formats on save (VS Code runs `editor.formatOnSave` for an
/// extension's save too): when the server asks it to save the edited file,
/// the text changes once more. The tests run on the formatted text — what
/// the user's own save would have made — and the task is verified on it.
/// (Before, the server saw the disk differ from the buffer it had asked to
/// save and refused to run the tests.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_format_on_save_is_what_the_tests_run_on() {
    const STAMP: &str = "# formatted\n";
    let mut setup = Setup::new(demo_project(), demo_scenario());
    setup.format_on_save = Some(Box::new(|text: &str| {
        if text.starts_with(STAMP) {
            text.to_owned()
        } else {
            format!("{STAMP}{text}")
        }
    }));
    let mut s = Server::start(setup).await;
    s.editor.open(CART_TEST).await.unwrap();
    let task = fix_test_total(&mut s).await;
    let status = s.until_end(&task).await;
    assert_state(&status, "succeeded");
    let cart = s.disk("cart.py");
    assert_eq!(cart, format!("{STAMP}{}", fixed_cart()));
    assert_eq!(s.editor.buffer("cart.py").unwrap(), cart);
    // The model's own test run, right after the edit, ran too.
    let trace = s.disk(&format!(".rein/traces/{task}.jsonl"));
    assert!(!trace.contains("still differs from the buffer"), "{trace}");
    assert!(
        trace.contains("python3 -m unittest -v tests.test_cart: exit code 0"),
        "{trace}"
    );
    // The evidence is about the formatted text.
    let verdict = s.messages("rein/verification").last().unwrap()["params"].clone();
    let hash = rein_text::ContentHash::of_str(&cart).to_hex();
    assert!(verdict.to_string().contains(&hash[..12]), "{verdict}");
    assert_eq!(s.shutdown().await, 0);
}

/// 2. The same flow on a Cargo project: `cargo test` builds the fixture
/// crate (no dependencies, offline, in its own target directory). This
/// editor cannot save on request, so the server asks the user and, let to,
/// writes the edited buffer to disk itself before the tests run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fix_test_rust_succeeds() {
    let mut setup = Setup::new(fixture("rust_cart"), lsp_tasks_scenario("rust_cart.json"));
    setup.env = vec![
        ("CARGO_TARGET_DIR", "{tmp}/cargo-target".to_owned()),
        ("CARGO_NET_OFFLINE", "true".to_owned()),
    ];
    // A hang guard that leaves room for a cold `cargo test` build.
    setup.timeout = Duration::from_secs(300);
    setup.save_documents = false;
    setup.message_choices = vec!["Always write them".to_owned()];
    let mut s = Server::start(setup).await;
    s.editor.open("src/lib.rs").await.unwrap();
    let original = s.editor.buffer("src/lib.rs").unwrap();
    let body_line = original
        .lines()
        .position(|l| l.contains("assert_eq!(super::total"))
        .unwrap();

    let fix = s.fix_test_action("src/lib.rs", body_line).await;
    assert_eq!(fix["title"], "Fix test total with Rein");
    let task = s.start_task(fix["command"]["arguments"].clone()).await;

    let status = s.until_end(&task).await;
    assert_state(&status, "succeeded");

    let fixed = original.replacen(
        "items.iter().map(|item| item.qty).sum()\n}\n\n/// How many",
        "items.iter().map(|item| item.price * item.qty).sum()\n}\n\n/// How many",
        1,
    );
    assert_ne!(fixed, original);
    assert_eq!(s.editor.buffer("src/lib.rs").unwrap(), fixed);
    assert_eq!(s.disk("src/lib.rs"), fixed);
    assert!(s.messages("rein/saveDocuments").is_empty());
    let edits = s.edits_of("src/lib.rs");
    assert_eq!(edits.len(), 1);
    assert_eq!(first_hunk(&edits[0]).1, 1);

    let verdict = s.messages("rein/verification").last().unwrap()["params"].clone();
    assert_eq!(verdict["passed"], true, "{verdict}");
    assert!(
        verdict["evidence"].as_array().unwrap().iter().any(
            |e| e["exitCode"] == 0 && e["command"].as_str().unwrap().starts_with("cargo test")
        ),
        "{verdict}"
    );
    // The build went to the test's own target directory.
    assert!(s.root.parent().unwrap().join("cargo-target").is_dir());

    assert_eq!(s.shutdown().await, 0);
}

const USER_TITLE_FROM: &str = "\"\"\"A tiny shopping cart.\"\"\"\n";
/// The user's typing adds a line above the model's edit.
const USER_TITLE_TO: &str =
    "\"\"\"A tiny shopping cart.\"\"\"\n# Prices are in cents (typed by the user).\n";

/// 3. The user types elsewhere in the file after the model read it and
/// before its edit arrives: the edit is rebased onto the new text, tied to
/// the new version, the model is told, the typing survives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_elsewhere_before_the_edit_rebases_it() {
    let mut s = Server::start(Setup::new(
        demo_project(),
        lsp_tasks_scenario("rebase.json"),
    ))
    .await;
    s.editor.open(CART_TEST).await.unwrap();
    s.editor.open("cart.py").await.unwrap();
    let task = fix_test_total(&mut s).await;

    // The model has read cart.py (v1) and runs the test; its edit, next,
    // is held by the scenario until the server has the typing.
    s.until_activity(&task, "running tests").await;
    assert!(s.edits_of("cart.py").is_empty());
    s.editor
        .replace("cart.py", USER_TITLE_FROM, USER_TITLE_TO)
        .await
        .unwrap();
    assert_eq!(s.editor.version("cart.py"), Some(2));
    s.until_server_has("cart.py", 2).await;
    s.open_gate("typed.gate");

    let status = s.until_end(&task).await;
    assert_state(&status, "succeeded");

    let edits = s.edits_of("cart.py");
    assert_eq!(edits.len(), 1);
    let (hunk, version) = first_hunk(&edits[0]);
    assert_eq!(version, 2, "the edit must be tied to the typed-in version");
    // On the line where the code is now, one below where the model read it.
    assert_eq!(hunk["range"]["start"]["line"], 13);
    let expected = fixed_cart().replacen(USER_TITLE_FROM, USER_TITLE_TO, 1);
    assert_eq!(s.editor.buffer("cart.py").unwrap(), expected);
    assert_eq!(s.disk("cart.py"), expected);

    assert_eq!(s.shutdown().await, 0);
}

const USER_DOC_FROM: &str = "each item's price times its quantity, summed.";
const USER_DOC_TO: &str = "price times quantity, for every item (typed by the user).";

/// 4. The user types over lines the model's edit replaces, after the
/// model read them: the edit is refused as stale and never reaches the
/// editor, the model reads again and its second edit, on the text as it is
/// now, applies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_over_the_edited_lines_makes_the_model_read_again() {
    let mut s = Server::start(Setup::new(demo_project(), lsp_tasks_scenario("stale.json"))).await;
    s.editor.open(CART_TEST).await.unwrap();
    s.editor.open("cart.py").await.unwrap();
    let task = fix_test_total(&mut s).await;

    // As in 3: the edit is held by the scenario until the server has the
    // typing.
    s.until_activity(&task, "running tests").await;
    assert!(s.edits_of("cart.py").is_empty());
    s.editor
        .replace("cart.py", USER_DOC_FROM, USER_DOC_TO)
        .await
        .unwrap();
    s.until_server_has("cart.py", 2).await;
    s.open_gate("typed.gate");

    let status = s.until_end(&task).await;
    assert_state(&status, "succeeded");

    // Only the second edit was proposed, on the user's version, and it
    // leaves the user's line alone.
    let edits = s.edits_of("cart.py");
    assert_eq!(edits.len(), 1, "{edits:?}");
    let (hunk, version) = first_hunk(&edits[0]);
    assert_eq!(version, 2);
    assert_eq!(hunk["range"]["start"]["line"], 12);
    assert!(!hunk["newText"].as_str().unwrap().contains(USER_DOC_FROM));
    let expected = fixed_cart().replacen(USER_DOC_FROM, USER_DOC_TO, 1);
    assert_eq!(s.editor.buffer("cart.py").unwrap(), expected);
    assert_eq!(s.disk("cart.py"), expected);

    assert_eq!(s.shutdown().await, 0);
}

/// 5. The user rejects the edit: the model is told (it then asks the user
/// what to do instead), nothing changes, the task does not succeed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_edit_changes_nothing_and_the_model_is_told() {
    let mut setup = Setup::new(demo_project(), lsp_tasks_scenario("reject.json"));
    setup.decide_edit = Box::new(|_| EditDecision::Reject);
    let mut s = Server::start(setup).await;
    s.editor.open(CART_TEST).await.unwrap();
    s.editor.open("cart.py").await.unwrap();
    let task = fix_test_total(&mut s).await;

    let status = s.until_end(&task).await;
    assert_state(&status, "waiting_user");
    assert!(
        status["reason"]
            .as_str()
            .unwrap()
            .contains("You rejected my edit to cart.py"),
        "{status}"
    );
    assert_eq!(s.edits_of("cart.py").len(), 1);
    assert_eq!(s.editor.buffer("cart.py").unwrap(), demo_cart());
    assert_eq!(s.editor.version("cart.py"), Some(1));
    assert_eq!(s.disk("cart.py"), demo_cart());

    // Nobody answers; the user gives up on the task.
    let mark = s.mark();
    let cancelled = s.cancel_task(&task).await;
    assert_eq!(cancelled["result"], json!({"cancelled": true}));
    let status = s.until_end_since(&task, mark).await;
    assert_state(&status, "cancelled");
    assert!(
        s.statuses(&task)
            .iter()
            .all(|st| st["state"] != "succeeded")
    );
    assert_eq!(s.disk("cart.py"), demo_cart());

    assert_eq!(s.shutdown().await, 0);
}

/// An edit decision that is `first` for the first edit, then `Accept`.
fn first_then_accept(first: EditDecision) -> Box<dyn FnMut(&Value) -> EditDecision + Send> {
    first_then(first, EditDecision::Accept)
}

/// An edit decision that is `first` for the first edit, then `rest`.
fn first_then(
    first: EditDecision,
    rest: EditDecision,
) -> Box<dyn FnMut(&Value) -> EditDecision + Send> {
    let mut seen = 0;
    Box::new(move |_| {
        seen += 1;
        if seen == 1 {
            first.clone()
        } else {
            rest.clone()
        }
    })
}

/// 6. An editor that answers `applied: true` and changes nothing: the
/// server does not believe it without the `didChange`, tells the model the
/// edit's state is unknown; the model reads again and edits again.
///
/// The confirmation timeout is short, for the claimed edit to time out
/// soon; the second edit, which must be confirmed, does not race it: the
/// editor applies it, waits until the server has the change, and only then
/// answers, so the server sees it at its first look.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_claimed_but_never_applied_is_reported_unknown() {
    let mut setup = Setup::new(demo_project(), lsp_tasks_scenario("claimed.json"));
    setup.confirm_timeout_secs = 0.5;
    setup.decide_edit = first_then(EditDecision::ClaimWithoutApplying, EditDecision::Hold);
    let mut s = Server::start(setup).await;
    s.editor.open(CART_TEST).await.unwrap();
    s.editor.open("cart.py").await.unwrap();
    let task = fix_test_total(&mut s).await;

    let second = s.nth_edit_of("cart.py", 2).await;
    s.editor.replace("cart.py", UNFIXED, FIXED).await.unwrap();
    s.until_server_has("cart.py", 2).await;
    s.editor
        .answer_edit(&second, EditDecision::ClaimWithoutApplying)
        .await
        .unwrap();

    let status = s.until_end(&task).await;
    assert_state(&status, "succeeded");
    let edits = s.edits_of("cart.py");
    assert_eq!(edits.len(), 2);
    // The buffer never moved before the second edit, which applied once.
    assert_eq!(first_hunk(&edits[0]).1, 1);
    assert_eq!(first_hunk(&edits[1]).1, 1);
    assert_eq!(s.editor.buffer("cart.py").unwrap(), fixed_cart());
    assert_eq!(s.disk("cart.py"), fixed_cart());

    assert_eq!(s.shutdown().await, 0);
}

/// 7. An editor that never answers `applyEdit`: after the approval
/// timeout the model is told the state is unknown and goes on.
///
/// One timeout governs the unanswered edit and everything after it that
/// must be answered in time (the second edit, saving before the tests), and
/// it is read when each question goes out, so it cannot be raised between
/// them: it is generous for what must succeed (the headless editor answers
/// in milliseconds), and the unanswered edit costs it once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_edit_times_out_and_the_task_goes_on() {
    let mut setup = Setup::new(demo_project(), lsp_tasks_scenario("unanswered.json"));
    setup.approval_timeout_secs = 5.0;
    setup.decide_edit = first_then_accept(EditDecision::Ignore);
    let mut s = Server::start(setup).await;
    s.editor.open(CART_TEST).await.unwrap();
    s.editor.open("cart.py").await.unwrap();
    let task = fix_test_total(&mut s).await;

    let status = s.until_end(&task).await;
    assert_state(&status, "succeeded");
    let edits = s.edits_of("cart.py");
    assert_eq!(edits.len(), 2);
    assert_eq!(s.editor.buffer("cart.py").unwrap(), fixed_cart());
    assert_eq!(s.disk("cart.py"), fixed_cart());
    // The unanswered edit was withdrawn: accepting its prompt later must
    // not land an edit the task no longer waits for.
    let withdrawn = s.messages("$/cancelRequest");
    assert!(
        withdrawn
            .iter()
            .any(|m| m["params"]["id"] == edits[0]["id"]),
        "{withdrawn:?}"
    );

    assert_eq!(s.shutdown().await, 0);
}

/// Starts the slow scenario's task and waits until it is mid-turn (its
/// progress began and it is running; the model's reply would take
/// minutes).
async fn start_slow_task() -> (Server, String) {
    let mut setup = Setup::new(demo_project(), lsp_tasks_scenario("slow.json"));
    // Far shorter than the slow reply: a cancellation that is not prompt
    // fails the test instead of waiting for the reply.
    setup.timeout = Duration::from_secs(30);
    let mut s = Server::start(setup).await;
    s.editor.open(CART_TEST).await.unwrap();
    let task = fix_test_total(&mut s).await;
    let token = support::progress_token(&task);
    s.wait_for(0, |m| {
        m["method"] == "$/progress"
            && m["params"]["token"] == token
            && m["params"]["value"]["kind"] == "begin"
    })
    .await;
    let running = |m: &Value| {
        m["method"] == "rein/taskStatus"
            && m["params"]["taskId"] == task
            && m["params"]["state"] == "running"
    };
    s.wait_for(0, running).await;
    (s, task)
}

fn assert_cancelled(s: &Server, task: &str, status: &Value) {
    assert_state(status, "cancelled");
    assert_eq!(status["reason"], "cancelled by the user");
    let end = s.progress(task).last().cloned().unwrap();
    assert_eq!(end, json!({"kind": "end", "message": "cancelled"}));
    assert!(s.edits_of("cart.py").is_empty());
}

/// 8a. The cancel button of the progress (the token the server created).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_progress_cancel_button_cancels_the_task() {
    let (mut s, task) = start_slow_task().await;
    let created = s.messages("window/workDoneProgress/create");
    assert_eq!(created.len(), 1);
    let token = created[0]["params"]["token"].clone();
    assert_eq!(token, support::progress_token(&task));
    let mark = s.mark();
    s.editor
        .client()
        .notify("window/workDoneProgress/cancel", json!({"token": token}))
        .await
        .unwrap();
    let status = s.until_end_since(&task, mark).await;
    assert_cancelled(&s, &task, &status);
    assert_eq!(s.shutdown().await, 0);
}

/// 8b. `rein.cancelTask`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cancel_command_cancels_the_task() {
    let (mut s, task) = start_slow_task().await;
    let mark = s.mark();
    let answer = s.cancel_task(&task).await;
    assert_eq!(answer["result"], json!({"cancelled": true}));
    let status = s.until_end_since(&task, mark).await;
    assert_cancelled(&s, &task, &status);
    assert_eq!(s.shutdown().await, 0);
}

/// A task that has reported its final state is over: cancelling it again
/// finds nothing to cancel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_ended_cannot_be_cancelled() {
    let mut s = Server::start(Setup::new(demo_project(), demo_scenario())).await;
    s.editor.open(CART_TEST).await.unwrap();
    let task = fix_test_total(&mut s).await;
    let status = s.until_end(&task).await;
    assert_state(&status, "succeeded");
    let answer = s.cancel_task(&task).await;
    assert_eq!(answer["result"], json!({"cancelled": false}));
    let statuses = s.statuses(&task);
    assert_eq!(statuses.last().unwrap()["state"], "succeeded");
    assert_eq!(s.shutdown().await, 0);
}

/// 8c. Cancelling while an edit waits for the user's approval ends the
/// task at once; the editor's late answer to that edit is harmless to the
/// server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_while_an_edit_awaits_approval_ends_the_task() {
    let mut setup = Setup::new(demo_project(), demo_scenario());
    setup.decide_edit = Box::new(|_| EditDecision::Hold);
    // The user never decides: only the cancellation can end the wait.
    setup.approval_timeout_secs = 3600.0;
    setup.timeout = Duration::from_secs(30);
    let mut s = Server::start(setup).await;
    s.editor.open(CART_TEST).await.unwrap();
    s.editor.open("cart.py").await.unwrap();
    let task = fix_test_total(&mut s).await;
    let held = s
        .wait_for(0, |m| m["method"] == "workspace/applyEdit")
        .await;

    let mark = s.mark();
    let answer = s.cancel_task(&task).await;
    assert_eq!(answer["result"], json!({"cancelled": true}));
    let status = s.until_end_since(&task, mark).await;
    assert_state(&status, "cancelled");
    assert_eq!(s.editor.buffer("cart.py").unwrap(), demo_cart());
    assert_eq!(s.disk("cart.py"), demo_cart());
    // The held edit is withdrawn.
    s.wait_for(mark, |m| {
        m["method"] == "$/cancelRequest" && m["params"]["id"] == held["id"]
    })
    .await;

    // The user dismisses the now pointless prompt; the server goes on.
    s.editor
        .answer_edit(&held, EditDecision::Reject)
        .await
        .unwrap();
    let state = s
        .editor
        .request(
            "rein/documentState",
            json!({"uri": s.editor.uri("cart.py")}),
        )
        .await
        .unwrap();
    assert_eq!(state["result"]["version"], 1, "{state}");
    assert_eq!(s.shutdown().await, 0);
}

/// 8d. Cancelling while the task records its baseline (the run of the
/// target test's file before the first model call, here a minute and a half
/// long) must be as prompt as cancelling mid-turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_during_the_baseline_test_run_is_prompt() {
    let mut setup = Setup::new(fixture("slow_suite"), demo_scenario());
    // Far shorter than the baseline run.
    setup.timeout = Duration::from_secs(30);
    let mut s = Server::start(setup).await;
    s.editor.open(CART_TEST).await.unwrap();
    let task = fix_test_total(&mut s).await;
    let mark = s.mark();
    let answer = s.cancel_task(&task).await;
    assert_eq!(answer["result"], json!({"cancelled": true}));
    let status = s.until_end_since(&task, mark).await;
    assert_state(&status, "cancelled");
    assert_eq!(s.shutdown().await, 0);
}

/// 9. Two fix-test tasks at once on different files: both succeed, each
/// file edited by its own task. The editor holds each edit until both
/// have arrived, so the two tasks are provably in flight together.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tasks_on_different_files_both_succeed() {
    let mut setup = Setup::new(fixture("two_carts"), lsp_tasks_scenario("two_tasks.json"));
    setup.decide_edit = Box::new(|_| EditDecision::Hold);
    let mut s = Server::start(setup).await;
    s.editor.open(CART_TEST).await.unwrap();
    s.editor.open("tests/test_tax.py").await.unwrap();
    let original_cart = s.disk("cart.py");
    let original_tax = s.disk("tax.py");
    let cart_task = fix_test_total(&mut s).await;
    let tax_task = s
        .fix_test("tests/test_tax.py", 6, "TestTax.test_with_tax")
        .await;
    assert_ne!(cart_task, tax_task);

    // Both tasks wait for the user's approval at the same time.
    let edits = |s: &Server| s.messages("workspace/applyEdit");
    if edits(&s).len() < 2 {
        let mut count = edits(&s).len();
        s.editor
            .pump_until(|m| {
                count += usize::from(m["method"] == "workspace/applyEdit");
                count == 2
            })
            .await
            .unwrap();
    }
    let held = edits(&s);
    assert_eq!(held.len(), 2);
    for task in [&cart_task, &tax_task] {
        // Running, then waiting for the user's review.
        assert!(
            s.statuses(task).iter().all(|st| st["state"] == "running"
                || (st["state"] == "waiting_user" && st["waitingFor"]["kind"] == "review")),
            "{:?}",
            s.statuses(task)
        );
    }
    // Approved in the reverse order of their arrival.
    for request in held.iter().rev() {
        s.editor
            .answer_edit(request, EditDecision::Accept)
            .await
            .unwrap();
    }

    let mut open: HashSet<String> = [cart_task.clone(), tax_task.clone()].into();
    s.editor
        .pump_until(|m| {
            // An end, not a wait for the review (which may be reported
            // after the editor answered it).
            if rein_testkit::editor::task_ended(m)
                && let Some(id) = m["params"]["taskId"].as_str()
            {
                open.remove(id);
            }
            open.is_empty()
        })
        .await
        .unwrap();
    for task in [&cart_task, &tax_task] {
        let last = s.statuses(task).last().cloned().unwrap();
        assert_state(&last, "succeeded");
    }

    // Each file was edited once, by its own task.
    let cart_edits = s.edits_of("cart.py");
    let tax_edits = s.edits_of("tax.py");
    assert_eq!((cart_edits.len(), tax_edits.len()), (1, 1));
    let label = |e: &Value| e["params"]["label"].as_str().unwrap().to_owned();
    assert!(
        label(&cart_edits[0]).contains("TestCart.test_total"),
        "{}",
        label(&cart_edits[0])
    );
    assert!(
        label(&tax_edits[0]).contains("TestTax.test_with_tax"),
        "{}",
        label(&tax_edits[0])
    );
    let fixed_tax = original_tax.replacen(
        "    return amount + RATE_PERCENT\n",
        "    return amount + tax(amount)\n",
        1,
    );
    let fixed_cart = original_cart.replacen(UNFIXED, FIXED, 1);
    assert_eq!(s.editor.buffer("cart.py").unwrap(), fixed_cart);
    assert_eq!(s.editor.buffer("tax.py").unwrap(), fixed_tax);
    assert_eq!(s.disk("cart.py"), fixed_cart);
    assert_eq!(s.disk("tax.py"), fixed_tax);

    assert_eq!(s.shutdown().await, 0);
}

/// 10. `shutdown` while a task runs cancels it; `exit` then ends the
/// server with 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_cancels_a_running_task_and_exits_cleanly() {
    let (mut s, task) = start_slow_task().await;
    let response = s.editor.request("shutdown", Value::Null).await.unwrap();
    assert_eq!(response["result"], Value::Null, "{response}");
    // The final status comes before the shutdown response: an editor
    // that sends `exit` at once has still been told how the task ended.
    let status = s
        .statuses(&task)
        .into_iter()
        .find(|st| st["state"] != "running")
        .expect("no final status before the shutdown response");
    assert_state(&status, "cancelled");
    // Not "by the user": the editor closing need not mean "stop".
    assert_eq!(
        status["reason"],
        "cancelled: the editor shut the language server down while the task ran"
    );
    // 0: the server saw the shutdown before the exit.
    assert_eq!(s.exit().await, 0);
}

/// Every file under `dir`, recursively.
fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// The attack: a script in the project holds the editor's API key, a
/// secret of the server's environment, a GitHub token and a private key;
/// the model reads it, searches for the keys and runs a suite whose test
/// prints them, then does the demo's fix. Not one byte of them reaches a
/// file under `.rein/` — the task state (WAL included), the requests, the
/// command logs, the trace, the server's log — nor the server's stderr.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_read_by_the_model_reaches_no_file() {
    const EDITOR_KEY: &str = "editor-key-5e4d3c2b1a09";
    const ENV_SECRET: &str = "env-secret-a1b2c3d4e5f6";
    const GITHUB_TOKEN: &str = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789";
    const PEM_BODY: &str = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUPlantedPrivateKeyBody0123456789abcd";
    let project = tempfile::tempdir().unwrap();
    support::copy_dir(&demo_project(), project.path());
    std::fs::write(
        project.path().join("deploy.sh"),
        format!(
            "#!/bin/sh\nexport REIN_API_KEY={EDITOR_KEY}\nexport DEPLOY_TOKEN={ENV_SECRET}\n\
             export GH_TOKEN={GITHUB_TOKEN}\ncat > id_ed25519 <<EOF\n\
             -----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}\n-----END OPENSSH PRIVATE KEY-----\nEOF\n"
        ),
    )
    .unwrap();
    std::fs::write(
        project.path().join("tests/test_deploy.py"),
        "import pathlib\nimport sys\nimport unittest\n\n\n\
         class TestDeploy(unittest.TestCase):\n    def test_script_is_printed(self):\n        \
         text = (pathlib.Path(__file__).parent.parent / \"deploy.sh\").read_text()\n        \
         print(text)\n        sys.stderr.write(text)\n",
    )
    .unwrap();
    let mut setup = Setup::new(
        project.path().to_path_buf(),
        lsp_tasks_scenario("leaky.json"),
    );
    setup.settings = vec![("apiKey", json!(EDITOR_KEY))];
    setup.env = vec![("DEPLOY_TOKEN", ENV_SECRET.to_owned())];
    let mut s = Server::start(setup).await;
    let task = fix_test_total(&mut s).await;
    let status = s.until_end(&task).await;
    assert_state(&status, "succeeded");
    assert_eq!(s.disk("cart.py"), fixed_cart());

    let files = files_under(&s.root.join(".rein"));
    let names: Vec<String> = files
        .iter()
        .map(|f| f.strip_prefix(&s.root).unwrap().display().to_string())
        .collect();
    for expected in [
        "state.db",
        "request-1.json",
        "run-1.log",
        ".jsonl",
        "lsp.log",
    ] {
        assert!(
            names.iter().any(|n| n.ends_with(expected)),
            "no {expected} under .rein/: {names:?}"
        );
    }
    let mut redacted_logs = 0;
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        for needle in [EDITOR_KEY, ENV_SECRET, GITHUB_TOKEN, PEM_BODY] {
            assert!(
                !bytes.windows(needle.len()).any(|w| w == needle.as_bytes()),
                "{needle} is in {}",
                file.display()
            );
        }
        let text = String::from_utf8_lossy(&bytes);
        if file.extension().is_some_and(|e| e == "log") && text.contains("<redacted>") {
            redacted_logs += 1;
        }
    }
    assert!(redacted_logs > 0, "no command printed the keys: {names:?}");
    let log = s.log();
    for needle in [EDITOR_KEY, ENV_SECRET, GITHUB_TOKEN, PEM_BODY] {
        assert!(!log.contains(needle), "{needle} is in the server's stderr");
    }
}

/// The code actions at `range` of `rel`, by title (none: the server
/// answers `null`).
async fn action_titles(s: &mut Server, rel: &str, range: Value) -> Vec<String> {
    let uri = s.editor.uri(rel);
    let actions = s
        .editor
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": range, "context": {"diagnostics": []}}),
        )
        .await
        .unwrap();
    if actions["result"].is_null() {
        return Vec::new();
    }
    actions["result"]
        .as_array()
        .unwrap_or_else(|| panic!("not code actions: {actions}"))
        .iter()
        .filter_map(|a| a["title"].as_str().map(str::to_owned))
        .collect()
}

fn cursor(line: u32, character: u32) -> Value {
    json!({"start": {"line": line, "character": character}, "end": {"line": line, "character": character}})
}

/// Regression (issue 16, "the light bulb everywhere"): an editor asks for
/// code actions wherever the cursor goes, so "Ask Rein…" offered at every
/// cursor was a light bulb on every line. With only a cursor, nothing is
/// offered outside a test and only "Fix test" inside one; "Ask Rein…"
/// comes with a selection (the editors also have it as a command).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_rein_is_offered_on_a_selection_and_fix_test_only_in_a_test() {
    let mut s = Server::start(Setup::new(demo_project(), demo_scenario())).await;
    s.editor.open(CART_TEST).await.unwrap();
    s.editor.open("cart.py").await.unwrap();
    let text = s.editor.buffer(CART_TEST).unwrap();
    let line_of = |needle: &str| text.lines().position(|l| l.contains(needle)).unwrap() as u32;
    for (place, line) in [
        ("the import", line_of("import unittest")),
        ("the class line", line_of("class TestCart")),
        ("unittest.main()", line_of("unittest.main()")),
        ("a blank line between tests", TEST_TOTAL_LINE + 3),
    ] {
        let titles = action_titles(&mut s, CART_TEST, cursor(line, 4)).await;
        assert_eq!(titles, Vec::<String>::new(), "at {place}");
    }
    assert_eq!(
        action_titles(&mut s, CART_TEST, cursor(TEST_TOTAL_LINE + 1, 8)).await,
        ["Fix test test_total with Rein"]
    );
    assert_eq!(
        action_titles(&mut s, "cart.py", cursor(12, 4)).await,
        Vec::<String>::new(),
        "a file without tests"
    );
    let selection =
        json!({"start": {"line": 12, "character": 4}, "end": {"line": 12, "character": 40}});
    assert_eq!(
        action_titles(&mut s, "cart.py", selection).await,
        ["Ask Rein…"]
    );
    let in_test = json!({"start": {"line": TEST_TOTAL_LINE + 1, "character": 8}, "end": {"line": TEST_TOTAL_LINE + 2, "character": 8}});
    assert_eq!(
        action_titles(&mut s, CART_TEST, in_test).await,
        ["Fix test test_total with Rein", "Ask Rein…"]
    );
    assert_eq!(s.shutdown().await, 0);
}

/// Regression (issue 16): "Fix test" on a test that already passes
/// started a full agent run. Now the task ends at once, succeeded,
/// "already passing", with the evidence of the test's run on the text as
/// it is, and the model — here a fake Anthropic API this test watches —
/// gets no request at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixing_a_test_that_already_passes_ends_at_once_without_a_model_call() {
    use rein_testkit::fake_model::{FakeModel, Reply, Scenario};

    // If it were called, the model would claim the task done at once.
    let model = FakeModel::start(Scenario::new().reply(Reply::text("It passes already.")))
        .await
        .unwrap();
    let mut setup = Setup::new(demo_project(), demo_scenario());
    setup.before_start = Some(Box::new(|root| {
        std::fs::write(root.join("cart.py"), fixed_cart()).unwrap();
    }));
    setup.settings = vec![
        ("provider", json!("anthropic")),
        ("baseUrl", json!(model.base_url())),
        ("apiKey", json!("sk-ant-test-key-000000")),
    ];
    let mut s = Server::start(setup).await;
    s.editor.open(CART_TEST).await.unwrap();
    let task = fix_test_total(&mut s).await;
    let status = s.until_end(&task).await;
    assert_state(&status, "succeeded");
    assert_eq!(
        status["reason"],
        "already passing: `TestCart.test_total` passes; nothing to change"
    );
    assert_eq!(
        (
            &status["turn"],
            &status["inputTokens"],
            &status["outputTokens"]
        ),
        (&json!(0), &json!(0), &json!(0))
    );
    assert_eq!(model.requests().len(), 0, "the model was called");

    // What proved it, as the editor is shown it.
    let verdict = s
        .messages("rein/verification")
        .into_iter()
        .map(|m| m["params"].clone())
        .find(|p| p["taskId"] == task)
        .expect("no rein/verification");
    assert_eq!(verdict["passed"], true, "{verdict}");
    assert_eq!(verdict["detail"], status["reason"]);
    let evidence = &verdict["evidence"][0];
    assert_eq!(
        evidence["check"],
        "test_passes tests/test_cart.py::TestCart.test_total"
    );
    assert_eq!(evidence["exitCode"], 0, "{evidence}");
    let log = s.disk(evidence["logPath"].as_str().unwrap());
    assert!(log.contains("test_total") && log.contains("OK"), "{log}");
    // The progress ends with the outcome; nothing was proposed or changed.
    let progress = s.progress(&task);
    let end = progress.last().unwrap();
    assert_eq!(end["kind"], "end");
    assert!(
        end["message"]
            .as_str()
            .unwrap()
            .starts_with("already passing: `TestCart.test_total` passes"),
        "{end}"
    );
    let mut states: Vec<String> = s
        .statuses(&task)
        .iter()
        .map(|st| st["state"].as_str().unwrap().to_owned())
        .collect();
    // A state may repeat: a status goes out whenever the step changes.
    states.dedup();
    assert_eq!(states, ["running", "verifying", "succeeded"]);
    assert!(s.messages("workspace/applyEdit").is_empty());
    assert_eq!(s.disk("cart.py"), fixed_cart());
    // The trace ends with the final state too.
    let trace = s.disk(&format!(".rein/traces/{task}.jsonl"));
    let last = trace.lines().last().unwrap();
    assert!(
        last.contains("\"succeeded\"") && last.contains("already passing"),
        "{last}"
    );
    assert_eq!(s.shutdown().await, 0);
}
