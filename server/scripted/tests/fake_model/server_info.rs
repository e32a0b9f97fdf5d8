//! `server_info`: the routes where llama.cpp, vLLM and Ollama state the
//! context window, and the ways they misbehave.

use std::time::Duration;

use expect_test::expect;
use pretty_assertions::assert_eq;
use rein_scripted::fake_model::{FakeModel, InfoFault, Scenario, ServerInfo};
use reqwest::{RequestBuilder, Response};
use serde_json::{Value, json};

const MODEL: &str = "qwen2.5-coder:7b";

async fn serve(info: Option<ServerInfo>) -> FakeModel {
    let mut scenario = Scenario::new().models([MODEL]);
    if let Some(info) = info {
        scenario = scenario.server_info(info);
    }
    FakeModel::start(scenario).await.unwrap()
}

/// The three routes, as a client sends them (redirects not followed, so
/// a test sees them).
fn routes(server: &FakeModel) -> [(&'static str, RequestBuilder); 3] {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let base = server.base_url();
    [
        (
            "props",
            client.get(format!("{base}/props")).bearer_auth("sk-test"),
        ),
        (
            "models",
            client
                .get(format!("{base}/v1/models"))
                .bearer_auth("sk-test"),
        ),
        (
            "show",
            client
                .post(format!("{base}/api/show"))
                .bearer_auth("sk-test")
                .json(&json!({"model": MODEL})),
        ),
    ]
}

async fn json_of(response: Response) -> (u16, Value) {
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

#[tokio::test]
async fn each_server_kind_states_its_window_where_it_does() {
    let info = ServerInfo::new()
        .llama_cpp_n_ctx(4096)
        .vllm_max_model_len(8192)
        .ollama_num_ctx(16384)
        .ollama_context_length(32768);
    let server = serve(Some(info)).await;
    let [(_, props), (_, models), (_, show)] = routes(&server);

    let (status, props) = json_of(props.send().await.unwrap()).await;
    assert_eq!(
        (status, &props["default_generation_settings"]["n_ctx"]),
        (200, &json!(4096))
    );
    let (status, models) = json_of(models.send().await.unwrap()).await;
    assert_eq!(
        (
            status,
            &models["data"][0]["id"],
            &models["data"][0]["max_model_len"]
        ),
        (200, &json!(MODEL), &json!(8192))
    );
    let (status, show) = json_of(show.send().await.unwrap()).await;
    assert_eq!(status, 200);
    expect![[r#"
        "num_ctx                        16384\nstop                           \"<|im_end|>\"""#]]
    .assert_eq(&show["parameters"].to_string());
    let architecture = show["model_info"]["general.architecture"].as_str().unwrap();
    assert_eq!(
        show["model_info"][format!("{architecture}.context_length")],
        json!(32768)
    );
    // Each request was recorded with its key, and none used a step.
    let seen: Vec<_> = server
        .requests()
        .iter()
        .map(|r| {
            (
                r.method.clone(),
                r.path.clone(),
                r.headers["authorization"].clone(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("GET", "/props"),
            ("GET", "/v1/models"),
            ("POST", "/api/show")
        ]
        .map(|(m, p)| (m.to_string(), p.to_string(), "Bearer sk-test".to_string()))
    );
    assert!(server.violations().is_empty(), "{:?}", server.violations());
}

/// A hosted API has none of these routes; its model list has no length.
#[tokio::test]
async fn without_server_info_the_routes_are_not_there() {
    for info in [None, Some(ServerInfo::new())] {
        let server = serve(info.clone()).await;
        for (route, request) in routes(&server) {
            let (status, body) = json_of(request.send().await.unwrap()).await;
            match route {
                "models" => assert_eq!(
                    (status, body["data"][0].get("max_model_len")),
                    (200, None),
                    "{info:?}"
                ),
                _ => assert_eq!(status, 404, "{route} {info:?}: {body}"),
            }
        }
    }
}

#[tokio::test]
async fn ollama_checks_the_model_it_is_asked_about() {
    let server = serve(Some(ServerInfo::new().ollama_context_length(32768))).await;
    let client = reqwest::Client::new();
    let show = |body: Value| {
        client
            .post(format!("{}/api/show", server.base_url()))
            .bearer_auth("sk-test")
            .json(&body)
            .send()
    };
    let cases = [
        (
            json!({"model": "llama3"}),
            404,
            json!({"error": "model 'llama3' not found"}),
        ),
        (json!({}), 400, json!({"error": "model is required"})),
    ];
    for (body, status, error) in cases {
        assert_eq!(json_of(show(body).await.unwrap()).await, (status, error));
    }
    // No `num_ctx` set: the parameters do not mention it.
    let (_, shown) = json_of(show(json!({"name": MODEL})).await.unwrap()).await;
    assert!(!shown["parameters"].as_str().unwrap().contains("num_ctx"));
}

#[tokio::test]
async fn raw_bodies_replace_whole_answers() {
    let info = ServerInfo::new()
        .props_body(json!({"n_ctx": "4096"}))
        .models_body(json!([1, 2]))
        .show_body(json!("not an object"));
    let server = serve(Some(info)).await;
    let mut bodies = Vec::new();
    for (_, request) in routes(&server) {
        bodies.push(json_of(request.send().await.unwrap()).await);
    }
    assert_eq!(
        bodies,
        [
            (200, json!({"n_ctx": "4096"})),
            (200, json!([1, 2])),
            (200, json!("not an object"))
        ]
    );
}

/// Each fault spoils the answer the route would have given: a client
/// that ignores it still finds that answer, so a test proves it did not.
#[tokio::test]
async fn faults_spoil_every_route() {
    let valid = || {
        ServerInfo::new()
            .llama_cpp_n_ctx(4096)
            .vllm_max_model_len(8192)
            .ollama_num_ctx(8192)
            .ollama_context_length(32768)
    };

    let server = serve(Some(valid().fault(InfoFault::Status(500)))).await;
    for (route, request) in routes(&server) {
        let (status, body) = json_of(request.send().await.unwrap()).await;
        assert_eq!(status, 500, "{route}");
        assert!(body.is_object(), "{route}: {body}");
    }

    let elsewhere = "http://127.0.0.1:9";
    let server = serve(Some(valid().fault(InfoFault::RedirectTo(elsewhere.into())))).await;
    for (route, request) in routes(&server) {
        let response = request.send().await.unwrap();
        let location = response.headers()["location"].to_str().unwrap().to_owned();
        let (status, body) = json_of(response).await;
        assert_eq!(status, 307, "{route}");
        assert!(
            location.starts_with(&format!("{elsewhere}/")),
            "{route}: {location}"
        );
        assert!(body.is_object(), "{route}: {body}");
    }

    let server = serve(Some(valid().fault(InfoFault::PadToBytes(100_000)))).await;
    for (route, request) in routes(&server) {
        let bytes = request.send().await.unwrap().bytes().await.unwrap();
        assert_eq!(bytes.len(), 100_000, "{route}");
        let padded: Value = serde_json::from_slice(&bytes).unwrap();
        assert!(padded.is_object(), "{route}");
    }

    let server = serve(Some(valid().fault(InfoFault::Endless))).await;
    for (route, request) in routes(&server) {
        let mut response = request.send().await.unwrap();
        let mut body = Vec::new();
        // Three spaces after the start: it keeps coming and never ends.
        while body.iter().rev().take_while(|b| **b == b' ').count() < 3 {
            let chunk = tokio::time::timeout(Duration::from_secs(5), response.chunk())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            body.extend_from_slice(&chunk);
        }
        assert!(serde_json::from_slice::<Value>(&body).is_err(), "{route}");
    }
}

#[test]
fn server_info_files_say_what_is_wrong() {
    let cases = [
        r#"{"server_info": {"llama_cpp_n_ctx": 4096, "props_body": {}}}"#,
        r#"{"server_info": {"show_body": {}, "ollama_context_length": 4096}}"#,
        r#"{"server_info": {"fault": {"status": 500, "endless": true}}}"#,
        r#"{"server_info": {"fault": {}}}"#,
        r#"{"server_info": {"fault": {"status": 101}}}"#,
        r#"{"server_info": {"fault": {"redirect_to": "ftp://x"}}}"#,
        r#"{"server_info": {"fault": {"endless": false}}}"#,
        r#"{"server_info": {"n_ctx": 4096}}"#,
    ];
    let messages: Vec<String> = cases
        .iter()
        .map(|text| Scenario::from_json(text).unwrap_err().to_string())
        .collect();
    expect![[r#"
        [
            "invalid scenario: use either `llama_cpp_n_ctx` or `props_body` (the whole answer), not both at line 1 column 60",
            "invalid scenario: use either `ollama_context_length` or `show_body` (the whole answer), not both at line 1 column 65",
            "invalid scenario: a server_info fault needs exactly one of `status`, `redirect_to`, `pad_to_bytes`, `endless`; found status, endless at line 1 column 59",
            "invalid scenario: a server_info fault needs exactly one of `status`, `redirect_to`, `pad_to_bytes`, `endless`; found none at line 1 column 29",
            "invalid scenario: `status` must be 200 to 599, got 101 at line 1 column 42",
            "invalid scenario: `redirect_to` must be an http(s) URL, got \"ftp://x\" at line 1 column 53",
            "invalid scenario: `endless` must be true (leave the fault out instead) at line 1 column 45",
            "invalid scenario: unknown field `n_ctx`, expected one of `comment`, `llama_cpp_n_ctx`, `vllm_max_model_len`, `ollama_num_ctx`, `ollama_context_length`, `props_body`, `models_body`, `show_body`, `fault` at line 1 column 24",
        ]
    "#]]
    .assert_debug_eq(&messages);
}

#[test]
fn server_info_round_trips_through_its_file_form() {
    let text = r#"{
        "server_info": {
            "comment": "ignored",
            "llama_cpp_n_ctx": "4096",
            "ollama_num_ctx": 1e30,
            "models_body": {"data": []},
            "fault": {"pad_to_bytes": 5000000}
        }
    }"#;
    let scenario = Scenario::from_json(text).unwrap();
    assert_eq!(
        scenario,
        Scenario::new().server_info(
            ServerInfo::new()
                .llama_cpp_n_ctx("4096")
                .ollama_num_ctx(1e30)
                .models_body(json!({"data": []}))
                .fault(InfoFault::PadToBytes(5_000_000))
        )
    );
    let json = serde_json::to_string(&scenario).unwrap();
    assert_eq!(Scenario::from_json(&json).unwrap(), scenario);
}
