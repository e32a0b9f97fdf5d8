//! Tool calls a model writes as text (small local models do): run when
//! they name a tool with valid arguments, explained when they do not, and
//! never taken for a claim that the task is done.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use rein_core::context::history::Item;
use rein_core::task::TaskState;
use rein_models::Part;
use rein_testkit::fake_model::{Fault, Reply, Scenario};
use serde_json::{Value, json};
use support::{CART_FIXED, Setup, cart_workspace, full_results};

const EDIT_AS_TEXT: &str = "The bug is in total().\n```json\n{\"name\": \"edit_file\", \"arguments\": {\"path\": \"cart.py\", \"old_text\": \"    return len(items)\", \"new_text\": \"    return sum(item.price * item.qty for item in items)\"}}\n```";

#[tokio::test]
async fn a_call_written_as_text_runs_like_a_call_and_is_recorded() {
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(Reply::text(EDIT_AS_TEXT))
                .reply(Reply::text(
                    "<tool_call>{\"name\": \"run_tests\", \"arguments\": {}}</tool_call>",
                ))
                .reply(Reply::text("Fixed total().")),
            |_| {},
        )
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    assert_eq!(r.ws.text("cart.py").unwrap(), CART_FIXED);
    assert!(full_results(&r)[0].starts_with("Edited cart.py"));
    // The history holds a real call, paired with its result; the prose
    // stays as the reply's text.
    let Item::Assistant { parts, .. } = &r.outcome.history.items[1] else {
        panic!("{:?}", r.outcome.history.items[1])
    };
    assert!(matches!(&parts[0], Part::Text { text } if text == "The bug is in total()."));
    assert!(
        matches!(&parts[1], Part::ToolCall(call) if call.id == "text_1_1" && call.name == "edit_file")
    );
    // The provider got a well-formed history back.
    assert_eq!(r.server.violations(), Vec::<String>::new());
    let recorded = r.transformations("tool_calls_from_text");
    assert_eq!(
        recorded,
        [
            "1 call(s) the model wrote as text: edit_file",
            "1 call(s) the model wrote as text: run_tests"
        ]
    );
}

/// Regression: a reply that tried to call a tool in its text was taken for
/// "done": the tests ran to check the claim, "keep going", and the model
/// was never told its calls were not calls.
#[tokio::test]
async fn a_call_written_wrong_is_explained_and_is_not_a_claim() {
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(Reply::text(
                    "```json\n{\"name\": \"open_file\", \"arguments\": {\"path\": \"cart.py\"}}\n```",
                ))
                .reply(Reply::text(EDIT_AS_TEXT))
                .reply(Reply::text("Fixed total().")),
            |_| {},
        )
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    // The second request ends with the explanation, not with a verdict on
    // a claim: no test ran in between.
    let second = &r.server.requests()[1].body;
    let last = second["messages"].as_array().unwrap().last().unwrap();
    let said = last["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        said.starts_with("Your reply contains what looks like a tool call written as text, and it was not run: there is no tool named \"open_file\""),
        "{said}"
    );
    // The baseline, then the verifier's two runs after the real fix.
    assert_eq!(r.exec.commands().len(), 3, "{:?}", r.exec.commands());
    // The retry is a required call (constrained by the server where it
    // can be); the request after it is free again.
    let choices: Vec<Value> = r
        .server
        .requests()
        .iter()
        .map(|req| req.body["tool_choice"].clone())
        .collect();
    assert_eq!(
        choices,
        [Value::Null, json!({"type": "any"}), Value::Null],
        "{choices:?}"
    );
}

/// A server that refuses `tool_choice` (an old vLLM: 400) is asked again
/// without it, and never again in the task: the task goes on.
#[tokio::test]
async fn a_server_that_refuses_a_required_call_is_asked_without_it() {
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(Reply::text(
                    "```json\n{\"name\": \"open_file\", \"arguments\": {\"path\": \"cart.py\"}}\n```",
                ))
                .reply(Reply::fault(Fault::Status {
                    status: 400,
                    retry_after: None,
                    message: Some("tool_choice \"required\" is not supported".into()),
                }))
                .reply(Reply::text(
                    "```json\n{\"name\": \"open_file\", \"arguments\": {\"path\": \"tests/test_cart.py\"}}\n```",
                ))
                .reply(Reply::text(EDIT_AS_TEXT))
                .reply(Reply::text("Fixed total().")),
            |_| {},
        )
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    let choices: Vec<Value> = r
        .server
        .requests()
        .iter()
        .map(|req| req.body["tool_choice"].clone())
        .collect();
    assert_eq!(
        choices,
        [
            Value::Null,
            json!({"type": "any"}),
            Value::Null,
            Value::Null,
            Value::Null
        ],
        "{choices:?}"
    );
    assert!(!r.transformations("tool_choice_unsupported").is_empty());
}

/// A 1.5B model wrote the same broken call eight turns running, each
/// answered with how to call: the second identical one earns one more try
/// (sampled hotter, told to change its approach), which here makes the
/// edit; a third identical one ends the task, as a repeated claim does.
#[tokio::test]
async fn the_same_broken_call_twice_earns_one_more_try_and_thrice_ends_the_task() {
    let broken = "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"cart.py\"\n```";
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(Reply::text(broken))
                .reply(Reply::text(broken))
                .reply(Reply::text(EDIT_AS_TEXT))
                .reply(Reply::text("Fixed.")),
            |_| {},
        )
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    assert_eq!(r.server.requests()[2].body["temperature"], 1.0);

    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(Reply::text(broken))
                .reply(Reply::text(broken))
                .reply(Reply::text(broken))
                .reply(Reply::text(EDIT_AS_TEXT)),
            |_| {},
        )
        .await;
    assert_eq!(r.outcome.state, TaskState::Failed);
    assert!(
        r.outcome.reason.starts_with("stopped: the model gave up"),
        "{}",
        r.outcome.reason
    );
    assert_eq!(r.server.requests().len(), 3);
}

/// The same broken call with other words around it is still the same
/// answer: the loop guard compares the calls a reply tried, not its prose.
#[tokio::test]
async fn the_same_broken_call_in_other_words_is_still_a_repeat() {
    let broken = |words: &str| {
        format!(
            "{words}\n```json\n{{\"name\": \"read_file\",   \"arguments\": {{\"path\": \"cart.py\"\n```"
        )
    };
    let r = Setup::new(cart_workspace())
        .run(
            Scenario::new()
                .reply(Reply::text(broken("Let me read the file.")))
                .reply(Reply::text(broken("I will look at cart.py first.")))
                .reply(Reply::text(broken("Reading it again:")))
                .reply(Reply::text(EDIT_AS_TEXT)),
            |_| {},
        )
        .await;
    assert_eq!(r.outcome.state, TaskState::Failed, "{}", r.outcome.reason);
    assert!(
        r.outcome.reason.starts_with("stopped: the model gave up"),
        "{}",
        r.outcome.reason
    );
    assert_eq!(r.server.requests().len(), 3);
    assert_eq!(r.server.requests()[2].body["temperature"], 1.0);
}

/// A local OpenAI-compatible server is not asked for a required call:
/// llama.cpp answered one with text and blank lines up to the token limit.
#[tokio::test]
async fn a_local_server_is_never_asked_for_a_required_call() {
    let mut setup = Setup::new(cart_workspace());
    setup.openai_compatible = true;
    let r = setup
        .run(
            Scenario::new()
                .require_api_key(false)
                .reply(Reply::text(
                    "```json\n{\"name\": \"open_file\", \"arguments\": {\"path\": \"cart.py\"}}\n```",
                ))
                .reply(Reply::text(EDIT_AS_TEXT))
                .reply(Reply::text("Fixed total().")),
            |_| {},
        )
        .await;
    assert_eq!(
        r.outcome.state,
        TaskState::Succeeded,
        "{}",
        r.outcome.reason
    );
    assert!(r.server.requests()[1].body["messages"].is_array());
    for request in r.server.requests() {
        assert!(
            request.body.get("tool_choice").is_none(),
            "{}",
            request.body
        );
    }
}
