//! Set-up through the real `rein lsp`: `rein/providerStatus` says whether a
//! first task would find a model (and where its key comes from, never the
//! key), `rein/checkProvider` checks what the user is entering.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};
use support::{Server, Setup, demo_project, demo_scenario};

async fn server(settings: Vec<(&'static str, Value)>) -> Server {
    let mut setup = Setup::new(demo_project(), demo_scenario());
    setup.settings = settings;
    Server::start(setup).await
}

async fn request(s: &mut Server, method: &str, params: Value) -> Value {
    let answer = s.editor.request(method, params).await.unwrap();
    answer
        .get("result")
        .cloned()
        .unwrap_or_else(|| panic!("{method}: {answer}"))
}

/// Nothing configured: not configured, and why; a key set in the editor:
/// configured, the key's source named, the key itself never sent back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_status_says_whether_a_task_would_find_a_model() {
    let mut s = server(vec![("provider", Value::Null)]).await;
    let status = request(&mut s, "rein/providerStatus", Value::Null).await;
    assert_eq!(status["configured"], false, "{status}");
    assert!(
        status["problem"]
            .as_str()
            .unwrap()
            .contains("no model provider is configured"),
        "{status}"
    );
    s.shutdown().await;

    let key = "sk-ant-editor-key-000000000000";
    let mut s = server(vec![
        ("provider", json!("anthropic")),
        ("apiKey", json!(key)),
    ])
    .await;
    let status = request(&mut s, "rein/providerStatus", Value::Null).await;
    assert_eq!(status["configured"], true, "{status}");
    assert_eq!(status["hasKey"], true);
    assert!(
        status["keyFrom"]
            .as_str()
            .unwrap()
            .starts_with("the editor's settings"),
        "{status}"
    );
    assert!(!status.to_string().contains(key));
    s.shutdown().await;

    let mut s = server(vec![("provider", json!("anthropic"))]).await;
    let status = request(&mut s, "rein/providerStatus", Value::Null).await;
    assert_eq!(status["configured"], false, "{status}");
    assert!(
        status["problem"]
            .as_str()
            .unwrap()
            .contains("needs an API key"),
        "{status}"
    );
    s.shutdown().await;
}

/// A key checked against the provider before it is stored: a wrong one is
/// told at once, and never echoed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_provider_checks_a_key_before_it_is_stored() {
    let model = rein_testkit::fake_model::FakeModel::start(
        rein_testkit::fake_model::Scenario::new().api_key("sk-ant-right-0000000000"),
    )
    .await
    .unwrap();
    let mut s = server(vec![]).await;
    let good = request(
        &mut s,
        "rein/checkProvider",
        json!({"provider": "anthropic", "baseUrl": model.base_url(), "apiKey": "sk-ant-right-0000000000"}),
    )
    .await;
    assert_eq!(good["ok"], true, "{good}");
    let bad = request(
        &mut s,
        "rein/checkProvider",
        json!({"provider": "anthropic", "baseUrl": model.base_url(), "apiKey": "sk-ant-wrong-1111111111"}),
    )
    .await;
    assert_eq!(bad["ok"], false, "{bad}");
    assert!(
        bad["message"]
            .as_str()
            .unwrap()
            .contains("rejected the API key"),
        "{bad}"
    );
    assert!(!bad.to_string().contains("wrong-1111"), "{bad}");
    s.shutdown().await;
}

/// A key the provider turns down ends the task with its cause on the wire
/// (`model_failed`), so the editor can lead to set-up; a fixed test ends
/// `verified`. No cause is guessed from words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_ends_with_its_cause_so_the_editor_can_offer_the_fix() {
    let scenario = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        scenario.path(),
        json!({"replies": [{"faults": [{"status": 401, "message": "invalid x-api-key"}]}]})
            .to_string(),
    )
    .unwrap();
    let mut s = Server::start(Setup::new(demo_project(), scenario.path().to_path_buf())).await;
    s.editor.open("tests/test_cart.py").await.unwrap();
    let task = s
        .fix_test("tests/test_cart.py", 6, "TestCart.test_total")
        .await;
    let status = s.until_end(&task).await;
    assert_eq!(status["state"], "failed", "{status}");
    assert_eq!(status["cause"], "model_failed", "{status}");
    // Only the final status says why it stopped.
    assert!(
        s.statuses(&task)
            .iter()
            .rev()
            .skip(1)
            .all(|st| st.get("cause").is_none()),
        "{:#?}",
        s.statuses(&task)
    );
    assert_eq!(s.shutdown().await, 0);

    let mut s = server(vec![]).await;
    s.editor.open("tests/test_cart.py").await.unwrap();
    let task = s
        .fix_test("tests/test_cart.py", 6, "TestCart.test_total")
        .await;
    let status = s.until_end(&task).await;
    assert_eq!(status["cause"], "verified", "{status}");
    assert_eq!(s.shutdown().await, 0);
}
