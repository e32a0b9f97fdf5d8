//! The editor's own review of a proposed edit (`rein/reviewEdit`, for a
//! client that declares `experimental.rein.reviewsEdits`), through the
//! real `rein lsp`: the review carries the real diff and the model's
//! reason, the task shows as waiting for the user meanwhile, an accepted
//! edit is applied without a second prompt, and a review the server no
//! longer waits for (cancelled, or the file changed under it) is withdrawn
//! and a late Accept changes nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{Server, Setup, demo_cart, demo_project, demo_scenario, fixed_cart, fixture};

const CART_TEST: &str = "tests/test_cart.py";
const TEST_TOTAL_LINE: u32 = 6;
/// What the demo's scripted model writes before its edit.
const DEMO_REASON: &str =
    "total() sums the quantities and ignores the prices. It should sum price × quantity.";

/// Starts the server, opens the test and cart.py, and starts fixing
/// `test_total`.
async fn fix_test_total(setup: Setup) -> (Server, String) {
    let mut s = Server::start(setup).await;
    s.editor.open(CART_TEST).await.unwrap();
    s.editor.open("cart.py").await.unwrap();
    let task = s
        .fix_test(CART_TEST, TEST_TOTAL_LINE, "TestCart.test_total")
        .await;
    (s, task)
}

/// Reviews answered with `answer`; every review's params kept in `seen`.
fn reviewing(
    seen: &Arc<Mutex<Vec<Value>>>,
    mut answer: impl FnMut(&Value) -> Option<Value> + Send + 'static,
) -> Option<rein_testkit::editor::OnReview> {
    let seen = Arc::clone(seen);
    Some(Box::new(move |params: &Value| {
        seen.lock().unwrap().push(params.clone());
        answer(params)
    }))
}

fn is_review(m: &Value) -> bool {
    m["method"] == "rein/reviewEdit"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_is_reviewed_with_its_reason_then_applied_without_a_second_prompt() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut setup = Setup::new(demo_project(), demo_scenario());
    setup.review = reviewing(&seen, |_| Some(json!({"decision": "accept"})));
    let (mut s, task) = fix_test_total(setup).await;
    let status = s.until_end(&task).await;
    assert_eq!(status["state"], "succeeded", "{status}");

    let reviews = seen.lock().unwrap().clone();
    assert_eq!(reviews.len(), 1, "{reviews:?}");
    let review = &reviews[0];
    assert_eq!(review["taskId"], task);
    assert_eq!(review["path"], "cart.py");
    assert_eq!(review["uri"], s.editor.uri("cart.py"));
    assert_eq!(review["label"], "Rein: fix TestCart.test_total");
    assert_eq!(review["summary"], "change cart.py: 1 line changed");
    assert_eq!(review["reason"], DEMO_REASON);
    // The real change: the whole text as it is, and as it would be.
    assert_eq!(review["original"], demo_cart());
    assert_eq!(review["proposed"], fixed_cart());
    assert_eq!(
        review["hunks"],
        json!([{"originalStart": 12, "originalLines": 1, "proposedStart": 12, "proposedLines": 1}])
    );

    // Applied as reviewed, without asking the editor to confirm again.
    let edits = s.edits_of("cart.py");
    assert_eq!(edits.len(), 1);
    let annotations = &edits[0]["params"]["edit"]["changeAnnotations"];
    let note = annotations.as_object().unwrap().values().next().unwrap();
    assert_eq!(note["needsConfirmation"], false, "{note}");
    assert_eq!(note["description"], DEMO_REASON);
    assert_eq!(s.editor.buffer("cart.py").unwrap(), fixed_cart());

    // While the review was open the task said it waited for the user, and
    // for what; then it went on.
    let statuses = s.statuses(&task);
    let waiting = statuses
        .iter()
        .position(|st| st["waitingFor"]["kind"] == "review")
        .unwrap_or_else(|| panic!("no waiting status: {statuses:#?}"));
    assert_eq!(statuses[waiting]["state"], "waiting_user");
    assert_eq!(statuses[waiting]["waitingFor"]["detail"], "cart.py");
    assert!(
        statuses[waiting + 1..]
            .iter()
            .any(|st| st["state"] == "running" && st.get("waitingFor").is_none()),
        "{statuses:#?}"
    );
    assert!(s.progress(&task).iter().any(|p| {
        p["message"]
            .as_str()
            .is_some_and(|m| m.contains("waiting for your review of cart.py"))
    }),);
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_withdraws_the_review_and_a_late_accept_changes_nothing() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut setup = Setup::new(demo_project(), demo_scenario());
    // The user never decides in time: only the cancellation ends the wait.
    setup.review = reviewing(&seen, |_| None);
    setup.approval_timeout_secs = 3600.0;
    setup.timeout = Duration::from_secs(30);
    let (mut s, task) = fix_test_total(setup).await;
    let held = s.wait_for(0, is_review).await;

    let mark = s.mark();
    let answer = s.cancel_task(&task).await;
    assert_eq!(answer["result"], json!({"cancelled": true}));
    let status = s.until_end_since(&task, mark).await;
    assert_eq!(status["state"], "cancelled", "{status}");
    // The review is withdrawn: the client closes it.
    s.wait_for(mark, |m| {
        m["method"] == "$/cancelRequest" && m["params"]["id"] == held["id"]
    })
    .await;

    // The user clicks Accept on what was still on screen: nothing happens.
    s.editor
        .client()
        .respond(&held["id"], json!({"decision": "accept"}))
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
    assert!(s.edits_of("cart.py").is_empty());
    assert_eq!(s.editor.buffer("cart.py").unwrap(), demo_cart());
    assert_eq!(s.disk("cart.py"), demo_cart());
    assert_eq!(s.shutdown().await, 0);
}

const USER_DOC_FROM: &str = "each item's price times its quantity, summed.";
const USER_DOC_TO: &str = "price times quantity, for every item (typed by the user).";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_in_the_file_withdraws_its_review_and_shows_the_change_on_the_new_text() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut setup = Setup::new(demo_project(), demo_scenario());
    // The first review is held (the user is looking at it, then types);
    // the second is accepted.
    let mut reviews = 0;
    setup.review = reviewing(&seen, move |_| {
        reviews += 1;
        (reviews > 1).then(|| json!({"decision": "accept"}))
    });
    setup.approval_timeout_secs = 3600.0;
    let (mut s, task) = fix_test_total(setup).await;
    let first = s.wait_for(0, is_review).await;

    let mark = s.mark();
    s.editor
        .replace("cart.py", USER_DOC_FROM, USER_DOC_TO)
        .await
        .unwrap();
    s.wait_for(mark, |m| {
        m["method"] == "$/cancelRequest" && m["params"]["id"] == first["id"]
    })
    .await;
    let status = s.until_end(&task).await;
    assert_eq!(status["state"], "succeeded", "{status}");

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    let typed = demo_cart().replacen(USER_DOC_FROM, USER_DOC_TO, 1);
    assert_eq!(seen[1]["original"], typed);
    let expected = fixed_cart().replacen(USER_DOC_FROM, USER_DOC_TO, 1);
    assert_eq!(seen[1]["proposed"], expected);
    assert_eq!(s.editor.buffer("cart.py").unwrap(), expected);
    assert_eq!(s.edits_of("cart.py").len(), 1);
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejection_in_the_review_reaches_the_model_with_the_users_words() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut setup = Setup::new(demo_project(), fixture("lsp_tasks/reject.json"));
    setup.review = reviewing(&seen, |_| {
        Some(json!({"decision": "reject", "comment": "use Decimal"}))
    });
    let (mut s, task) = fix_test_total(setup).await;
    let status = s.until_end(&task).await;
    assert_eq!(status["state"], "waiting_user", "{status}");
    assert!(
        status["reason"]
            .as_str()
            .unwrap()
            .contains("You rejected my edit to cart.py"),
        "{status}"
    );
    assert!(s.edits_of("cart.py").is_empty());
    assert_eq!(s.editor.buffer("cart.py").unwrap(), demo_cart());
    // What the user wrote went to the model with the rejection.
    let trace = std::fs::read_to_string(s.root.join(format!(".rein/traces/{task}.jsonl"))).unwrap();
    assert!(
        trace.contains("The user rejected this edit to cart.py (the user said: use Decimal)"),
        "{trace}"
    );
    assert_eq!(s.shutdown().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keeping_some_changes_applies_only_those_and_tells_the_model_what_was_left_out() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut setup = Setup::new(demo_project(), fixture("lsp_tasks/two_changes.json"));
    // The user keeps the first change (total's fix), not the docstring.
    setup.review = reviewing(&seen, |_| Some(json!({"decision": "accept", "hunks": [0]})));
    let (mut s, task) = fix_test_total(setup).await;
    let status = s.until_end(&task).await;
    // The scenario succeeds only if the model was told what was left out.
    assert_eq!(status["state"], "succeeded", "{status}");
    let reviews = seen.lock().unwrap().clone();
    assert_eq!(reviews[0]["hunks"].as_array().unwrap().len(), 2);
    assert_eq!(s.editor.buffer("cart.py").unwrap(), fixed_cart());
    assert_eq!(s.disk("cart.py"), fixed_cart());
    assert_eq!(s.shutdown().await, 0);
}

/// The user edits the proposal before accepting it (issue 35 point 6):
/// the server applies the text as they left it, confirms that text, and
/// the model is told the edit landed as the user changed it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_the_user_edited_is_applied_as_they_left_it() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut setup = Setup::new(demo_project(), demo_scenario());
    setup.review = reviewing(&seen, |params| {
        let mine = format!("{}# checked by hand\n", params["proposed"].as_str()?);
        Some(json!({"decision": "accept", "text": mine}))
    });
    let (mut s, task) = fix_test_total(setup).await;
    let status = s.until_end(&task).await;
    assert_eq!(status["state"], "succeeded", "{status}");
    let expected = format!("{}# checked by hand\n", fixed_cart());
    assert_eq!(s.editor.buffer("cart.py").unwrap(), expected);
    assert_eq!(s.disk("cart.py"), expected);
    let trace = std::fs::read_to_string(s.root.join(format!(".rein/traces/{task}.jsonl"))).unwrap();
    assert!(trace.contains("as the user changed it"), "{trace}");
    assert_eq!(s.shutdown().await, 0);
}

/// A review nobody answers in time is "no answer", never a rejection: the
/// model hears the edit was not applied and that this is no rejection, the
/// task waits for the user (not "failed"), and resumed it shows the edit
/// again, which the user then accepts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_timeout_is_no_answer_not_a_rejection() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut setup = Setup::new(demo_project(), fixture("lsp_tasks/review_timeout.json"));
    // The user is away for the first review, and accepts the second.
    let mut reviews = 0;
    setup.review = reviewing(&seen, move |_| {
        reviews += 1;
        (reviews > 1).then(|| json!({"decision": "accept"}))
    });
    setup.approval_timeout_secs = 2.0;
    let (mut s, task) = fix_test_total(setup).await;
    let held = s.wait_for(0, is_review).await;
    let status = s.until_end(&task).await;
    assert_eq!(status["state"], "waiting_user", "{status}");
    assert_eq!(
        status["reason"],
        "No answer from you in 2 seconds; the review of cart.py is still open — resume the task to see it again"
    );
    // Typed, so an editor offers "Resume" by the cause, not by the words.
    assert_eq!(status["cause"], "unanswered_review", "{status}");
    // The review was withdrawn, nothing applied. (The withdrawal is sent
    // from its own task: it may come just after the final status.)
    let id = held["id"].clone();
    s.wait_for(0, |m| {
        m["method"] == "$/cancelRequest" && m["params"]["id"] == id
    })
    .await;
    assert!(s.edits_of("cart.py").is_empty());
    assert_eq!(s.editor.buffer("cart.py").unwrap(), demo_cart());
    // What the model got: no answer, not a rejection (the trace shows it
    // cut; the scenario goes on only if the model got the whole text).
    let trace = std::fs::read_to_string(s.root.join(format!(".rein/traces/{task}.jsonl"))).unwrap();
    assert!(
        trace.contains("\"result\":\"The user did not answer the review of this edit to cart.py within 2 seconds, so it was not applied. This is not a reject…\""),
        "{trace}"
    );
    assert!(!trace.contains("The user rejected"), "{trace}");

    // Resumed: the review comes again; accepted, the task succeeds.
    // (The server forgets the run just after its last status: a resume
    // sent in between is told it still runs.)
    let mut mark;
    let mut tries = 0;
    loop {
        mark = s.mark();
        let answer = s
            .editor
            .request(
                "workspace/executeCommand",
                json!({"command": "rein.resumeTask", "arguments": [{"taskId": task}]}),
            )
            .await
            .unwrap();
        let still_running = answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.ends_with("is already running"));
        tries += 1;
        if !still_running || tries > 50 {
            assert!(answer.get("error").is_none(), "{answer}");
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let status = s.until_end_since(&task, mark).await;
    let trace = std::fs::read_to_string(s.root.join(format!(".rein/traces/{task}.jsonl"))).unwrap();
    assert_eq!(status["state"], "succeeded", "{status}\n{trace}");
    // The resumed model had the whole no-answer text as its last result.
    assert!(
        trace.contains("The user was away; reading cart.py again."),
        "{trace}"
    );
    assert_eq!(seen.lock().unwrap().len(), 2);
    assert_eq!(s.editor.buffer("cart.py").unwrap(), fixed_cart());
    assert_eq!(s.shutdown().await, 0);
}
