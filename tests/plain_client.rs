//! Rein in an LSP client that does less than ours — as Helix, eglot, Kate
//! or Sublime LSP do: no change annotations (it applies an edit without
//! showing it, and answers `applied: true` whatever happened), no
//! `rein/saveDocuments`, no instruction prompt, UTF-8 positions, and only
//! the buffers of the languages it associates with Rein synced. The
//! promises hold there too: every change is accepted by the user before it
//! is sent, nothing is applied twice, tests run on the text the user sees
//! and the user — not only the model — is told when a save is needed.
//!
//! The real `rein lsp` over stdio, the headless editor playing the plain
//! client ([`ClientKind::plain`]), the scripted model. Timeouts are hang
//! guards only.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use rein_testkit::editor::{ClientKind, Reply};
use serde_json::{Value, json};
use support::{Server, Setup, demo_project, demo_scenario, fixed_cart, fixture};

const CART_TEST: &str = "tests/test_cart.py";
const TEST_TOTAL_LINE: u32 = 6;

fn plain(scenario: std::path::PathBuf) -> Setup {
    let mut setup = Setup::new(demo_project(), scenario);
    setup.kind = ClientKind::plain();
    setup.save_documents = false;
    setup
}

fn message(question: &Value) -> &str {
    question["message"].as_str().unwrap_or_default()
}

fn is_edit_question(question: &Value, path: &str) -> bool {
    message(question).starts_with(&format!("Rein wants to change {path} "))
}

fn is_save_question(question: &Value) -> bool {
    message(question).contains("unsaved changes")
}

fn is_doubt_question(question: &Value) -> bool {
    message(question).starts_with("Your editor says it applied Rein's change")
}

/// Where in the editor's received messages the first one matching `f` is.
fn position(s: &Server, f: impl Fn(&Value) -> bool) -> Option<usize> {
    s.editor.received().iter().position(f)
}

fn questions(s: &Server) -> Vec<Value> {
    s.messages("window/showMessageRequest")
        .into_iter()
        .map(|m| m["params"].clone())
        .collect()
}

fn trace(s: &Server, task: &str) -> String {
    s.disk(&format!(".rein/traces/{task}.jsonl"))
}

/// The whole fix-test flow in a plain client. The user has an unsaved
/// note in the test file (typed after a non-ASCII character, so the UTF-8
/// positions matter). Rein asks before each edit; the user looks at the
/// diff, then applies; when the tests need the files saved, the user is
/// asked and saves them in the editor. The task succeeds on the text the
/// user sees, and the status bar gets a title, percentages and no
/// repeated reports.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fix_test_flow_works_in_a_plain_client() {
    let mut setup = plain(demo_scenario());
    let mut looked = false;
    setup.on_question = Some(Box::new(move |q| {
        if is_edit_question(q, "cart.py") {
            if !looked {
                looked = true;
                return Reply::Choose("Show diff".into());
            }
            return Reply::Choose("Apply".into());
        }
        if is_save_question(q) {
            // The user saves in the editor and leaves the question be.
            return Reply::SaveAllThen(None);
        }
        Reply::Dismiss
    }));
    let mut s = Server::start(setup).await;
    s.editor.open(CART_TEST).await.unwrap();
    s.editor
        .replace(
            CART_TEST,
            "class TestCart",
            "# Prix en € — note\nclass TestCart",
        )
        .await
        .unwrap();
    s.editor
        .replace(CART_TEST, "— note", "— note de l'utilisatrice")
        .await
        .unwrap();
    let users_text = s.editor.buffer(CART_TEST).unwrap();

    let task = s
        .fix_test(CART_TEST, TEST_TOTAL_LINE, "TestCart.test_total")
        .await;
    let status = s.until_end(&task).await;
    assert_eq!(status["state"], "succeeded", "{status}");

    // Asked first, applied after: the question comes before the edit.
    let asked = position(&s, |m| {
        m["method"] == "window/showMessageRequest" && is_edit_question(&m["params"], "cart.py")
    })
    .expect("the user was asked about the edit");
    let sent = position(&s, |m| m["method"] == "workspace/applyEdit").unwrap();
    assert!(
        asked < sent,
        "the edit was sent before the user accepted it"
    );
    let edit_question = questions(&s)
        .into_iter()
        .find(|q| is_edit_question(q, "cart.py"))
        .unwrap();
    assert_eq!(
        edit_question["actions"],
        json!([{"title": "Apply"}, {"title": "Show diff"}, {"title": "Reject"}])
    );
    assert!(
        message(&edit_question).starts_with("Rein wants to change cart.py (+1 −1)"),
        "{edit_question}"
    );
    // One edit, without annotations the client could not show anyway.
    let edits = s.edits_of("cart.py");
    assert_eq!(edits.len(), 1);
    assert!(
        edits[0]["params"]["edit"]
            .get("changeAnnotations")
            .is_none()
    );
    // The diff was shown from .rein/diffs/, and removed once decided.
    let shown = s.editor.shown().to_vec();
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(shown[0].contains("/.rein/diffs/"), "{shown:?}");
    let diff_file = rein_testkit::editor::uri_path(&shown[0]);
    assert!(!diff_file.exists(), "the diff file was left behind");

    // The user was asked to save (and saved): nothing was written behind
    // the editor, the user's note is there, on disk and in the buffer.
    assert!(questions(&s).iter().any(is_save_question));
    assert!(
        !s.messages("window/showMessage")
            .iter()
            .any(|m| message(&m["params"]).starts_with("Rein wrote")),
        "Rein wrote files the user saved"
    );
    assert_eq!(s.disk(CART_TEST), users_text);
    assert_eq!(s.editor.buffer(CART_TEST).unwrap(), users_text);
    assert_eq!(s.disk("cart.py"), fixed_cart());
    assert_eq!(s.editor.buffer("cart.py").unwrap(), fixed_cart());

    // Progress a status bar can show.
    let progress = s.progress(&task);
    assert_eq!(progress[0]["kind"], "begin");
    assert_ne!(progress[0]["title"], "Rein");
    assert_eq!(progress[0]["percentage"], 0);
    let reports: Vec<&Value> = progress.iter().filter(|p| p["kind"] == "report").collect();
    assert!(!reports.is_empty());
    assert!(
        reports.iter().all(|r| r["percentage"].is_u64()),
        "{reports:?}"
    );
    for pair in reports.windows(2) {
        assert_ne!(pair[0], pair[1], "a report repeated");
        assert!(pair[0]["percentage"].as_u64() <= pair[1]["percentage"].as_u64());
    }
    assert_eq!(s.shutdown().await, 0);
}

/// Runs the reject scenario (the model edits cart.py, then asks what to do
/// if told the user rejected it) in `setup`, the edit question answered
/// with `reply`; checks nothing was sent or changed. Returns the server,
/// the task and its final status.
async fn unapproved(mut setup: Setup, reply: Reply) -> (Server, String, Value) {
    setup.on_question = Some(Box::new(move |q| {
        if is_edit_question(q, "cart.py") || reply == Reply::Unsupported {
            reply.clone()
        } else {
            Reply::Dismiss
        }
    }));
    let mut s = Server::start(setup).await;
    s.editor.open("cart.py").await.unwrap();
    let task = s
        .fix_test(CART_TEST, TEST_TOTAL_LINE, "TestCart.test_total")
        .await;
    let status = s.until_end(&task).await;
    assert_eq!(status["state"], "waiting_user", "{status}");
    assert!(s.messages("workspace/applyEdit").is_empty());
    assert_eq!(s.editor.buffer("cart.py").unwrap(), support::demo_cart());
    (s, task, status)
}

/// The user rejects the edit in the question: no `applyEdit` is ever sent
/// (such a client would apply it and say `applied: true`), and the model
/// hears a "no" — in plain words, said once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_edit_is_never_sent_to_a_plain_client() {
    let setup = plain(fixture("lsp_tasks/reject.json"));
    let (s, task, status) = unapproved(setup, Reply::Choose("Reject".into())).await;
    assert!(
        status["reason"]
            .as_str()
            .unwrap()
            .contains("How would you like total() fixed instead?"),
        "{status}"
    );
    assert!(
        trace(&s, &task).contains("The user rejected this edit to cart.py. Do not propose"),
        "{}",
        trace(&s, &task)
    );
}

const NOTES: &str = "état ✓\nstatus: broken\n";

/// A plain client with `notes.txt` (a file type it does not sync with
/// Rein) open, the user approving the edit to it and answering the
/// question about it with `on_doubt`; runs the task `scenario` plays to its
/// end, which must be the model's question containing `last_words` (else
/// it went off script). Returns the server and the task.
async fn unsynced_session(scenario: &str, on_doubt: Reply, last_words: &str) -> (Server, String) {
    let mut setup = plain(fixture(scenario));
    setup.before_start = Some(Box::new(|root| {
        std::fs::write(root.join("notes.txt"), NOTES).unwrap();
    }));
    // The edit never shows anywhere Rein can see: the confirmation waits
    // this long for nothing.
    setup.confirm_timeout_secs = 1.0;
    setup.on_question = Some(Box::new(move |q| {
        if is_edit_question(q, "notes.txt") {
            Reply::Choose("Apply".into())
        } else if is_doubt_question(q) {
            on_doubt.clone()
        } else {
            Reply::Dismiss
        }
    }));
    let mut s = Server::start(setup).await;
    s.editor.open("notes.txt").await.unwrap();
    let task = s.run_task("Mark notes.txt fixed").await;
    let status = s.until_end(&task).await;
    assert_eq!(status["state"], "waiting_user", "{status}");
    assert!(
        status["reason"].as_str().unwrap().contains(last_words),
        "off script: {status}"
    );
    (s, task)
}

/// The bug this guards against: the client applied an edit to a buffer it
/// does not sync with Rein (`notes.txt`), answered `applied: true`, and
/// sent nothing more. The model read the disk (still old), proposed the
/// same edit, and the buffer ended with the change twice. Now the file is
/// frozen while its state is unknown: the read and the second edit are
/// refused, the user is asked to save, and the change is applied at most
/// once — the crash matrix's rule, on this path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_to_an_unsynced_buffer_is_never_applied_twice() {
    // The user does not answer the question about the change.
    let (mut s, task) = unsynced_session(
        "plain_client/unsynced_edit.json",
        Reply::Dismiss,
        "Please save notes.txt",
    )
    .await;
    let edits = s.edits_of("notes.txt");
    assert_eq!(edits.len(), 1, "the edit was sent {} times", edits.len());
    assert_eq!(
        s.editor.buffer("notes.txt").unwrap(),
        "état ✓\nstatus: fixed\n"
    );
    assert_eq!(s.disk("notes.txt"), NOTES);
    // The user was asked, once; the model was told the file is frozen.
    assert_eq!(
        questions(&s)
            .iter()
            .filter(|q| is_doubt_question(q))
            .count(),
        1
    );
    assert!(trace(&s, &task).contains("notes.txt is frozen: the editor said it applied"));
    assert_eq!(s.shutdown().await, 0);
}

/// The same, but the user saves `notes.txt` when asked: the change is seen
/// on disk, counted as applied (once), and the file is no longer frozen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsynced_buffer_saved_when_asked_is_known_again() {
    let (mut s, _) = unsynced_session(
        "plain_client/unsynced_edit_saved.json",
        Reply::SaveAllThen(Some("I saved it".into())),
        "notes.txt says fixed now",
    )
    .await;
    assert_eq!(s.edits_of("notes.txt").len(), 1);
    assert_eq!(s.disk("notes.txt"), "état ✓\nstatus: fixed\n");
    assert_eq!(s.editor.buffer("notes.txt").unwrap(), s.disk("notes.txt"));
    assert_eq!(s.shutdown().await, 0);
}

/// An unsaved comment in the test file, in a client Rein cannot ask to
/// save. The disk still holds exactly what the editor opened, so when the
/// user lets Rein write the buffers, it may; "Always write them" is not
/// asked again this session; and the user is told the files were written.
/// (Before, every test run failed with "has unsaved changes", only the
/// model heard of it, and the task burned its turns.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsaved_buffer_is_written_for_the_tests_when_the_user_lets_rein() {
    let mut setup = plain(demo_scenario());
    setup.on_question = Some(Box::new(|q| {
        if is_edit_question(q, "cart.py") {
            Reply::Choose("Apply".into())
        } else if is_save_question(q) {
            Reply::Choose("Always write them".into())
        } else {
            Reply::Dismiss
        }
    }));
    let mut s = Server::start(setup).await;
    s.editor.open(CART_TEST).await.unwrap();
    s.editor
        .replace(CART_TEST, "class TestCart", "# A note.\nclass TestCart")
        .await
        .unwrap();
    let task = s
        .fix_test(CART_TEST, TEST_TOTAL_LINE, "TestCart.test_total")
        .await;
    let status = s.until_end(&task).await;
    assert_eq!(status["state"], "succeeded", "{status}");
    let save_questions: Vec<Value> = questions(&s).into_iter().filter(is_save_question).collect();
    assert_eq!(save_questions.len(), 1, "{save_questions:?}");
    assert!(
        message(&save_questions[0]).contains("tests/test_cart.py has unsaved changes"),
        "{}",
        save_questions[0]
    );
    assert!(
        s.messages("window/showMessage")
            .iter()
            .any(|m| message(&m["params"]).starts_with("Rein wrote tests/test_cart.py")),
        "the user was not told"
    );
    assert_eq!(s.disk(CART_TEST), s.editor.buffer(CART_TEST).unwrap());
    assert!(s.disk(CART_TEST).contains("# A note."));
    assert_eq!(s.disk("cart.py"), fixed_cart());
    assert_eq!(s.shutdown().await, 0);
}

/// "Ask Rein…" sends `rein.runTask` with a place and no words: only a
/// client that asks the user for them can use it, so only such a client
/// is offered it, even on a selection (where a client that asks is).
/// "Fix test … with Rein" works everywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_rein_is_offered_only_where_it_can_work() {
    let mut s = Server::start(plain(demo_scenario())).await;
    s.editor.open(CART_TEST).await.unwrap();
    let uri = s.editor.uri(CART_TEST);
    // The body of test_total selected.
    let selection = json!({
        "start": {"line": TEST_TOTAL_LINE + 1, "character": 8},
        "end": {"line": TEST_TOTAL_LINE + 2, "character": 42}
    });
    let actions = s
        .editor
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": selection, "context": {"diagnostics": []}}),
        )
        .await
        .unwrap();
    let titles: Vec<&str> = actions["result"]
        .as_array()
        .unwrap_or_else(|| panic!("no code actions: {actions}"))
        .iter()
        .filter_map(|a| a["title"].as_str())
        .collect();
    assert_eq!(titles, ["Fix test test_total with Rein"]);
    assert_eq!(s.shutdown().await, 0);
}

/// Sublime LSP declares `changeAnnotationSupport` and still applies an
/// edit marked `needsConfirmation` without asking. Declaring annotations is
/// not enough for Rein to leave the asking to the client: only a client
/// that declares `experimental.rein.confirmsEdits` is trusted to ask.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_ignores_needs_confirmation_is_asked_first() {
    let mut setup = plain(fixture("lsp_tasks/reject.json"));
    setup.kind = ClientKind::Plain {
        synced_languages: vec!["python".into()],
        change_annotations: true,
    };
    unapproved(setup, Reply::Choose("Reject".into())).await;
}

/// A client that cannot show questions at all (Helix 25.07.1 answers
/// `window/showMessageRequest` with "method not found"): nothing is
/// applied, the model hears the edit was not approved, and the user is
/// told once why Rein can do nothing there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_cannot_ask_gets_no_edit_and_the_user_is_told() {
    let setup = plain(fixture("lsp_tasks/reject.json"));
    let (mut s, task, _) = unapproved(setup, Reply::Unsupported).await;
    assert!(
        trace(&s, &task).contains(
            "The user rejected this edit to cart.py (the editor cannot ask the user: it does not support window/showMessageRequest)"
        ),
        "{}",
        trace(&s, &task)
    );
    let told: Vec<Value> = s
        .messages("window/showMessage")
        .into_iter()
        .filter(|m| message(&m["params"]).starts_with("Your editor cannot show Rein's questions"))
        .collect();
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(s.shutdown().await, 0);
}
