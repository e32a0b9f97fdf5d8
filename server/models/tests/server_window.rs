//! The context window as the server states it (`rein_models::window`),
//! against the fake model server playing llama.cpp, vLLM and Ollama, and
//! against servers that lie, stall, flood or redirect: those are no
//! answer, never a panic nor an error.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use rein_models::window::TIME_LIMIT;
use rein_models::{
    ApiKey, ProviderConfig, ProviderKind, Timeouts, WindowSource, ask_context_window, server_window,
};
use rein_testkit::ClosedPort;
use rein_testkit::fake_model::{FakeModel, InfoFault, Scenario, ServerInfo};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const KEY: &str = "sk-test-FAKEKEY-0123456789";
const MODEL: &str = "qwen2.5-coder-7b";

/// An OpenAI-compatible provider at `base_url`, as users configure one.
fn config(base_url: String) -> ProviderConfig {
    ProviderConfig {
        provider: ProviderKind::OpenAi,
        model: MODEL.into(),
        base_url,
        api_key: ApiKey::new(KEY),
        stream: true,
        retry: Default::default(),
        timeouts: Timeouts::default(),
        prices: Default::default(),
        scenario: None,
        context_window: None,
        temperature: 0.0,
        key_from: None,
    }
}

async fn serve(info: ServerInfo) -> FakeModel {
    let scenario = Scenario::new().models([MODEL]).server_info(info);
    FakeModel::start(scenario).await.unwrap()
}

/// What `server_window` makes of a fake server saying `info`.
async fn window_of(info: ServerInfo) -> Option<(u64, &'static str)> {
    let server = serve(info).await;
    let found = server_window(&config(format!("{}/v1", server.base_url()))).await;
    assert_eq!(server.violations(), Vec::<String>::new());
    found
}

/// Every kind, with valid answers everywhere.
fn every_kind() -> ServerInfo {
    ServerInfo::new()
        .llama_cpp_n_ctx(4096)
        .vllm_max_model_len(8192)
        .ollama_num_ctx(16384)
        .ollama_context_length(32768)
}

#[tokio::test]
async fn each_server_kind_states_its_window() {
    let cases = [
        (
            "llama.cpp",
            ServerInfo::new().llama_cpp_n_ctx(4096),
            Some((4096, "llama.cpp /props")),
        ),
        (
            "llama.cpp, n_ctx at the top",
            ServerInfo::new().props_body(json!({"n_ctx": 8192})),
            Some((8192, "llama.cpp /props")),
        ),
        (
            "vLLM",
            ServerInfo::new().vllm_max_model_len(8192),
            Some((8192, "vLLM max_model_len")),
        ),
        (
            "Ollama with num_ctx",
            ServerInfo::new()
                .ollama_num_ctx(8192)
                .ollama_context_length(32768),
            Some((8192, "Ollama num_ctx")),
        ),
        (
            "Ollama without num_ctx runs its default",
            ServerInfo::new().ollama_context_length(32768),
            Some((4096, "Ollama's default num_ctx")),
        ),
        (
            "Ollama, a model shorter than the default",
            ServerInfo::new().ollama_context_length(2048),
            Some((2048, "Ollama model_info context_length")),
        ),
        ("a server that says nothing", ServerInfo::new(), None),
        (
            "the first kind that answers wins",
            every_kind(),
            Some((4096, "llama.cpp /props")),
        ),
    ];
    for (name, info, expected) in cases {
        assert_eq!(window_of(info).await, expected, "{name}");
    }
}

/// The kinds are asked in order, each where it answers, with the
/// provider's key; the base URL's `/v1` is dropped for the servers' own
/// routes.
#[tokio::test]
async fn the_server_is_asked_in_order_with_the_key() {
    let server = serve(ServerInfo::new().ollama_context_length(32768)).await;
    server_window(&config(format!("{}/v1/", server.base_url()))).await;
    let asked: Vec<_> = server
        .requests()
        .into_iter()
        .map(|r| (r.method, r.path, r.headers["authorization"].clone(), r.body))
        .collect();
    let bearer = format!("Bearer {KEY}");
    assert_eq!(
        asked,
        [
            ("GET", "/props", Value::Null),
            ("GET", "/v1/models", Value::Null),
            ("POST", "/api/show", json!({"model": MODEL})),
        ]
        .map(|(method, path, body)| (
            method.to_owned(),
            path.to_owned(),
            bearer.clone(),
            body
        ))
    );
}

#[tokio::test]
async fn a_configured_window_beats_the_server_which_is_then_not_asked() {
    let server = serve(every_kind()).await;
    let mut configured = config(format!("{}/v1", server.base_url()));
    configured.context_window = Some(16_384);
    assert_eq!(
        ask_context_window(&configured).await,
        (16_384, WindowSource::Configured)
    );
    assert_eq!(server.requests().len(), 0);

    configured.context_window = None;
    assert_eq!(
        ask_context_window(&configured).await,
        (4096, WindowSource::Server("llama.cpp /props"))
    );
}

/// A hosted API (a model Rein's price table knows) gets no stray requests
/// at every task's start: the table's window stands.
#[tokio::test]
async fn a_model_the_price_table_knows_is_not_asked_about() {
    let server = serve(every_kind()).await;
    let mut hosted = config(format!("{}/v1", server.base_url()));
    hosted.model = "gpt-4o".into();
    let (window, source) = ask_context_window(&hosted).await;
    assert_eq!(source, WindowSource::PriceTable);
    assert!(window >= 100_000, "{window}");
    assert_eq!(server.requests().len(), 0);
}

/// Anthropic's API and the scripted model have none of these routes.
#[tokio::test]
async fn only_openai_compatible_servers_are_asked() {
    for kind in [ProviderKind::Anthropic, ProviderKind::Scripted] {
        let server = serve(every_kind()).await;
        let mut other = config(server.base_url());
        other.provider = kind;
        assert_eq!(server_window(&other).await, None, "{kind:?}");
        assert_eq!(server.requests().len(), 0, "{kind:?}");
    }
}

#[tokio::test]
async fn the_model_a_vllm_server_does_not_serve_has_no_window() {
    let server = FakeModel::start(
        Scenario::new()
            .models(["other-model"])
            .server_info(ServerInfo::new().vllm_max_model_len(8192)),
    )
    .await
    .unwrap();
    let found = server_window(&config(format!("{}/v1", server.base_url()))).await;
    assert_eq!(found, None);
}

// ---------------------------------------------------------------------------
// Abuse: every one is "the server did not say", fast, without a panic.

#[tokio::test]
async fn n_ctx_of_zero_is_no_window() {
    assert_eq!(window_of(ServerInfo::new().llama_cpp_n_ctx(0)).await, None);
}

#[tokio::test]
async fn negative_n_ctx_is_no_window() {
    assert_eq!(window_of(ServerInfo::new().llama_cpp_n_ctx(-1)).await, None);
}

#[tokio::test]
async fn n_ctx_of_1e30_is_no_window() {
    assert_eq!(
        window_of(ServerInfo::new().llama_cpp_n_ctx(1e30)).await,
        None
    );
}

#[tokio::test]
async fn n_ctx_as_a_string_is_no_window() {
    assert_eq!(
        window_of(ServerInfo::new().llama_cpp_n_ctx("4096")).await,
        None
    );
}

#[tokio::test]
async fn n_ctx_of_2_to_the_63_is_no_window() {
    assert_eq!(
        window_of(ServerInfo::new().llama_cpp_n_ctx(1_u64 << 63)).await,
        None
    );
}

#[tokio::test]
async fn a_window_too_small_or_too_large_is_no_window() {
    let cases = [
        (ServerInfo::new().llama_cpp_n_ctx(1023), None),
        (
            ServerInfo::new().llama_cpp_n_ctx(1024),
            Some((1024, "llama.cpp /props")),
        ),
        (
            ServerInfo::new().vllm_max_model_len(10_000_000),
            Some((10_000_000, "vLLM max_model_len")),
        ),
        (ServerInfo::new().vllm_max_model_len(10_000_001), None),
        (
            ServerInfo::new()
                .ollama_num_ctx(99_999_999_999_u64)
                .ollama_context_length(32768),
            None,
        ),
        (ServerInfo::new().ollama_context_length(-5), None),
    ];
    for (info, expected) in cases {
        assert_eq!(window_of(info.clone()).await, expected, "{info:?}");
    }
}

#[tokio::test]
async fn answers_of_the_wrong_shape_are_no_window() {
    let cases = [
        ServerInfo::new().props_body(json!([4096])),
        ServerInfo::new().props_body(json!({"default_generation_settings": "n_ctx=4096"})),
        ServerInfo::new().models_body(json!({"data": {"id": MODEL, "max_model_len": 8192}})),
        ServerInfo::new().show_body(json!({"parameters": 4096})),
        ServerInfo::new().show_body(json!({"model_info": {"general.architecture": ["qwen2"]}})),
        ServerInfo::new().show_body(json!("num_ctx 8192")),
    ];
    for info in cases {
        assert_eq!(window_of(info.clone()).await, None, "{info:?}");
    }
}

#[tokio::test]
async fn a_five_megabyte_answer_is_not_read() {
    let started = Instant::now();
    let found = window_of(every_kind().fault(InfoFault::PadToBytes(5_000_000))).await;
    assert_eq!(found, None);
    assert!(started.elapsed() < TIME_LIMIT, "{:?}", started.elapsed());
}

#[tokio::test]
async fn a_big_answer_without_a_length_is_cut_at_the_cap() {
    // Chunked, so no content-length warns; valid JSON, so only the cap
    // can refuse it.
    let mut response =
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
            .to_vec();
    let start = br#"{"n_ctx": 4096}"#;
    response.extend(format!("{:x}\r\n", start.len()).bytes());
    response.extend(start);
    response.extend(b"\r\n");
    let spaces = vec![b' '; 64 * 1024];
    for _ in 0..32 {
        response.extend(format!("{:x}\r\n", spaces.len()).bytes());
        response.extend(&spaces);
        response.extend(b"\r\n");
    }
    response.extend(b"0\r\n\r\n");
    let server = RawServer::start(response).await;
    assert_eq!(server_window(&config(server.base_url())).await, None);
}

#[tokio::test]
async fn a_body_that_never_ends_is_given_up_at_the_time_limit() {
    let started = Instant::now();
    let found = window_of(every_kind().fault(InfoFault::Endless)).await;
    let took = started.elapsed();
    assert_eq!(found, None);
    assert!(
        took >= TIME_LIMIT && took < TIME_LIMIT + Duration::from_secs(2),
        "{took:?}"
    );
}

#[tokio::test]
async fn a_server_error_is_no_window() {
    assert_eq!(
        window_of(every_kind().fault(InfoFault::Status(500))).await,
        None
    );
}

#[tokio::test]
async fn a_redirect_to_another_host_is_not_followed() {
    let elsewhere = serve(every_kind()).await;
    let redirecting = every_kind().fault(InfoFault::RedirectTo(elsewhere.base_url()));
    assert_eq!(window_of(redirecting.clone()).await, None);
    assert_eq!(elsewhere.requests().len(), 0, "the key went elsewhere");

    // The control: a client that follows redirects does get there.
    let server = serve(redirecting).await;
    let followed = reqwest::get(format!("{}/props", server.base_url()))
        .await
        .unwrap();
    assert_eq!(followed.status().as_u16(), 401, "answered by elsewhere");
    assert_eq!(elsewhere.requests().len(), 1);
}

#[tokio::test]
async fn a_wrong_key_is_no_window() {
    let server = FakeModel::start(
        Scenario::new()
            .models([MODEL])
            .api_key("sk-another-key")
            .server_info(every_kind()),
    )
    .await
    .unwrap();
    let found = server_window(&config(format!("{}/v1", server.base_url()))).await;
    assert_eq!(found, None);
}

#[tokio::test]
async fn an_answer_that_is_not_json_is_no_window() {
    let server =
        RawServer::start(b"HTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\nn_ctx: 4096".to_vec())
            .await;
    assert_eq!(server_window(&config(server.base_url())).await, None);
}

#[tokio::test]
async fn json_nested_a_hundred_thousand_deep_is_no_window() {
    let body = "[".repeat(100_000);
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let server = RawServer::start(response.into_bytes()).await;
    assert_eq!(server_window(&config(server.base_url())).await, None);
}

#[tokio::test]
async fn a_connection_closed_without_an_answer_is_no_window() {
    let server = RawServer::start(Vec::new()).await;
    assert_eq!(server_window(&config(server.base_url())).await, None);
}

#[tokio::test]
async fn a_server_that_is_not_there_is_no_window() {
    let closed = ClosedPort::new().unwrap();
    let started = Instant::now();
    assert_eq!(server_window(&config(closed.url())).await, None);
    assert!(started.elapsed() < TIME_LIMIT);
}

/// A server that answers every request with the same bytes, as written,
/// then closes: for answers no HTTP server would give.
struct RawServer {
    addr: std::net::SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl RawServer {
    async fn start(response: Vec<u8>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let response = response.clone();
                tokio::spawn(async move {
                    // The request's head (and a small body) is one read.
                    let mut request = [0_u8; 16 * 1024];
                    let _ = stream.read(&mut request).await;
                    let _ = stream.write_all(&response).await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        Self { addr, task }
    }

    fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}
