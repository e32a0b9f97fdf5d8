//! The API exactly as documented for Rein's other tests: the spec's import
//! list and example must compile as written (no extra imports) and behave.

use rein_scripted::fake_model::{
    Condition, FakeModel, Fault, RecordedRequest, Reply, Scenario, StopReason, Usage, WireFormat,
};
use serde_json::json;

use crate::support::{anthropic, anthropic_body};

#[tokio::test]
async fn the_documented_example_works_as_written() {
    let scenario = Scenario::new()
        .reply(
            Reply::text("I'll run the tests.")
                .tool_call("run_tests", json!({"target": "tests/test_cart.py"})),
        )
        .reply(Reply::fault(Fault::Status {
            status: 429,
            retry_after: Some(1),
            message: None,
        }))
        .reply(Reply::text("Done.").usage(Usage {
            input: 1200,
            output: 30,
            cache_read: 1000,
            cache_write: 0,
        }))
        .branch(
            vec![(
                Condition::LastToolResultContains("FAILED".into()),
                Reply::text("still failing"),
            )],
            Reply::text("all green"),
        );
    let server: FakeModel = FakeModel::start(scenario).await.unwrap();
    assert!(server.base_url().starts_with("http://127.0.0.1:"));
    assert!(!server.base_url().ends_with('/'));
    assert_eq!(server.remaining(), 4);

    let message: serde_json::Value = anthropic(&server, &anthropic_body(false))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(message["content"][1]["name"], "run_tests");
    assert_eq!(message["stop_reason"], StopReason::ToolUse.anthropic());

    let requests: Vec<RecordedRequest> = server.requests();
    assert_eq!(requests[0].format, WireFormat::Anthropic);
    assert_eq!(requests[0].step, Some(0));
    assert!(server.violations().is_empty());
    assert_eq!(server.remaining(), 3);
}

#[test]
fn chained_and_constructor_forms_share_names() {
    let built = Reply::tool_call("a", json!({}))
        .text("then")
        .tool_call("b", json!({}))
        .text("end");
    let json = serde_json::to_value(&built).unwrap();
    assert_eq!(
        json,
        json!({"content": [
            {"tool_call": {"name": "a", "input": {}}},
            {"text": "then"},
            {"tool_call": {"name": "b", "input": {}}},
            {"text": "end"},
        ]})
    );
}
