//! The `ModelClient` trait (whose `call` repairs the history's pairing for
//! every provider) and the HTTP driver both adapters share: the request,
//! retries with backoff, timeouts, streaming and cancellation. Adapters
//! only translate (see [`crate::wire::Wire`]).

use std::pin::Pin;
use std::sync::Arc;

use futures::{Stream, StreamExt};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::config::{ProviderConfig, ProviderKind};
use crate::error::ModelError;
use crate::pairing;
use crate::sse::SseParser;
use crate::types::{ModelEvent, ModelRequest};
use crate::wire::Wire;

/// The events of one model call. Ends after `Stop`, or with one `Err`.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<ModelEvent, ModelError>> + Send>>;

/// A model behind some wire format. Cheap to share (`Arc`).
pub trait ModelClient: Send + Sync {
    /// "anthropic", "openai", …: for messages and traces.
    fn provider(&self) -> &'static str;

    fn model(&self) -> &str;

    /// Sends the request as it is (a provider implements this; callers use
    /// [`ModelClient::call`]). The stream stops at once when `cancel` fires
    /// (ending with `Err(ModelError::Cancelled)`) or when it is dropped.
    fn stream(&self, request: ModelRequest, cancel: CancellationToken) -> EventStream;

    /// Whether a required tool call ([`crate::ToolChoice::Required`]) is
    /// known to come back as a call. The hosted APIs enforce it. A local
    /// OpenAI-compatible server may not: llama.cpp (b11434) with
    /// Qwen2.5-Coder answered it with a fenced JSON block in its text, then
    /// blank lines up to the token limit (4,096 tokens, 280 s on 2 cores);
    /// Ollama ignores it.
    fn constrains_calls(&self) -> bool {
        false
    }

    /// A model call: the history's pairing repaired first (every tool call
    /// gets exactly one result; a result for a call nobody made is refused
    /// without a request), whatever the provider, then [`Self::stream`].
    fn call(&self, mut request: ModelRequest, cancel: CancellationToken) -> EventStream {
        match pairing::repair(&mut request.messages) {
            Ok(repairs) => {
                if !repairs.is_empty() {
                    tracing::warn!(?repairs, "repaired tool call pairing");
                }
                self.stream(request, cancel)
            }
            Err(error) => Box::pin(futures::stream::once(async move { Err(error) })),
        }
    }
}

/// Builds the client for `config`. The scripted provider is not built here:
/// the binary starts the fake server and points an HTTP client at it.
pub fn build_client(config: &ProviderConfig) -> Result<Arc<dyn ModelClient>, ModelError> {
    match config.provider {
        ProviderKind::Anthropic => {
            let wire = crate::anthropic::Anthropic::new(&config.base_url, anthropic_key(config)?);
            Ok(Arc::new(HttpClient::new(wire, config)?))
        }
        ProviderKind::OpenAi => {
            if config.api_key.is_none() && config.base_url.contains("api.openai.com") {
                return Err(ModelError::MissingApiKey {
                    provider: "OpenAI",
                    env_var: "OPENAI_API_KEY",
                });
            }
            let wire = crate::openai::OpenAi::new(&config.base_url, config.api_key.clone());
            Ok(Arc::new(HttpClient::new(wire, config)?))
        }
        ProviderKind::Scripted => Err(ModelError::InvalidRequest(
            "the scripted provider is started by the rein binary, not built from a config alone"
                .into(),
        )),
    }
}

/// Builds an Anthropic-format client for any base URL (the scripted
/// provider and tests use it with the fake server).
pub fn anthropic_client(config: &ProviderConfig) -> Result<Arc<dyn ModelClient>, ModelError> {
    Ok(Arc::new(HttpClient::new(
        crate::anthropic::Anthropic::new(&config.base_url, anthropic_key(config)?),
        config,
    )?))
}

/// Anthropic's API takes no request without a key.
fn anthropic_key(config: &ProviderConfig) -> Result<crate::ApiKey, ModelError> {
    config.api_key.clone().ok_or(ModelError::MissingApiKey {
        provider: "Anthropic",
        env_var: "ANTHROPIC_API_KEY",
    })
}

/// Builds an OpenAI-format client for any base URL.
pub fn openai_client(config: &ProviderConfig) -> Result<Arc<dyn ModelClient>, ModelError> {
    Ok(Arc::new(HttpClient::new(
        crate::openai::OpenAi::new(&config.base_url, config.api_key.clone()),
        config,
    )?))
}

/// The model ids the configured provider lists (`GET {base}/v1/models`
/// for Anthropic, `GET {base}/models` for OpenAI-compatible servers). It
/// costs no tokens and checks what a first call would: the base URL, the
/// key, and whether the model name exists. One attempt, no retries: this
/// answers "is it reachable now?".
pub async fn list_models(config: &ProviderConfig) -> Result<Vec<String>, ModelError> {
    match config.provider {
        ProviderKind::Anthropic => {
            let wire = crate::anthropic::Anthropic::new(&config.base_url, anthropic_key(config)?);
            HttpClient::new(wire, config)?.inner.models().await
        }
        ProviderKind::OpenAi => {
            let wire = crate::openai::OpenAi::new(&config.base_url, config.api_key.clone());
            HttpClient::new(wire, config)?.inner.models().await
        }
        ProviderKind::Scripted => Err(ModelError::InvalidRequest(
            "the scripted provider is started by the rein binary; there is nothing to reach".into(),
        )),
    }
}

/// How long the model list may take once connected.
const MODELS_LISTING_TIME: std::time::Duration = std::time::Duration::from_secs(20);

pub(crate) struct HttpClient<W> {
    inner: Arc<Inner<W>>,
}

struct Inner<W> {
    wire: W,
    http: reqwest::Client,
    config: ProviderConfig,
    /// What the client says it talks to ([`ModelClient::provider`]).
    provider: &'static str,
    /// How its errors name the provider.
    named: &'static str,
}

/// The scripted provider speaks Anthropic's wire format to the fake model
/// server: its errors must not blame Anthropic.
const SCRIPTED: &str = "the scripted model";

impl<W: Wire> HttpClient<W> {
    pub(crate) fn new(wire: W, config: &ProviderConfig) -> Result<Self, ModelError> {
        let (provider, named) = match config.provider {
            ProviderKind::Scripted => (ProviderKind::Scripted.name(), SCRIPTED),
            ProviderKind::Anthropic | ProviderKind::OpenAi => (wire.provider(), wire.provider()),
        };
        let http = reqwest::Client::builder()
            .connect_timeout(config.timeouts.connect)
            .user_agent(concat!("rein/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ModelError::Transport {
                provider: named,
                reason: e.to_string(),
            })?;
        Ok(Self {
            inner: Arc::new(Inner {
                wire,
                http,
                config: config.clone(),
                provider,
                named,
            }),
        })
    }
}

impl<W: Wire> ModelClient for HttpClient<W> {
    fn provider(&self) -> &'static str {
        self.inner.provider
    }

    fn constrains_calls(&self) -> bool {
        self.inner.wire.constrains_calls()
    }

    fn model(&self) -> &str {
        &self.inner.config.model
    }

    fn stream(&self, request: ModelRequest, cancel: CancellationToken) -> EventStream {
        let (tx, rx) = mpsc::channel(64);
        let inner = Arc::clone(&self.inner);
        tokio::spawn(async move {
            inner.run(request, cancel, tx).await;
        });
        Box::pin(futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        }))
    }
}

type Sender = mpsc::Sender<Result<ModelEvent, ModelError>>;

/// The consumer went away: stop quietly.
struct Gone;

impl<W: Wire> Inner<W> {
    async fn run(&self, request: ModelRequest, cancel: CancellationToken, tx: Sender) {
        let body = self.wire.body(&request, self.config.stream);
        let mut attempts = 0;
        loop {
            attempts += 1;
            let outcome = tokio::select! {
                biased;
                () = cancel.cancelled() => Err(Ok(ModelError::Cancelled)),
                outcome = self.attempt(&body, &request.model, &tx) => outcome,
            };
            let error = match outcome {
                Ok(()) | Err(Err(Gone)) => return,
                Err(Ok(error)) => error.naming(self.named).key_from(self.config.key_source()),
            };
            let Some(delay) = self.config.retry.plan(attempts, &error) else {
                let error = if attempts > 1 && error.is_transient() {
                    ModelError::RetriesExhausted {
                        attempts,
                        last: Box::new(error),
                    }
                } else {
                    error
                };
                let _ = tx.send(Err(error)).await;
                return;
            };
            tracing::warn!(provider = self.named, attempt = attempts, ?delay, %error, "retrying model call");
            let retrying = ModelEvent::Retrying {
                attempt: attempts,
                delay,
                reason: error.to_string(),
            };
            if tx.send(Ok(retrying)).await.is_err() {
                return;
            }
            tokio::select! {
                () = cancel.cancelled() => {
                    let _ = tx.send(Err(ModelError::Cancelled)).await;
                    return;
                }
                () = tokio::time::sleep(delay) => {}
            }
        }
    }

    async fn models(&self) -> Result<Vec<String>, ModelError> {
        let provider = self.named;
        let url = self.wire.models_url();
        let headers = self.wire.headers()?;
        // A listing is small: a server that takes longer than this to send
        // one is not usable, whatever the timeouts for model calls are.
        let limit = self.config.timeouts.connect + MODELS_LISTING_TIME;
        let listing = async {
            let response = self
                .http
                .get(&url)
                .headers(headers)
                .send()
                .await
                .map_err(|e| self.send_error(&url, &e))?;
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let body = read_body(response, provider, MODELS_LISTING_TIME).await?;
            Ok::<_, ModelError>((status, headers, body))
        };
        let (status, response_headers, body) = tokio::time::timeout(limit, listing)
            .await
            .map_err(|_| ModelError::RequestTimeout {
                provider,
                after: limit,
            })??;
        if !(200..300).contains(&status) {
            return Err(self
                .wire
                .error(status, &response_headers, &body, &self.config.model)
                .naming(self.named)
                .key_from(self.config.key_source()));
        }
        // Both APIs answer `{"data": [{"id": …}, …]}` (Anthropic pages it;
        // the first page is enough to find a model or show some).
        let listing: Value = serde_json::from_slice(&body).map_err(|e| ModelError::Protocol {
            provider,
            reason: format!("the model list from {url} is not JSON: {e}"),
        })?;
        let data = listing
            .get("data")
            .and_then(Value::as_array)
            .ok_or_else(|| ModelError::Protocol {
                provider,
                reason: format!("the model list from {url} has no `data` array"),
            })?;
        Ok(data
            .iter()
            .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_owned))
            .collect())
    }

    /// One HTTP attempt. `Err(Ok(e))`: failed with `e`; `Err(Err(Gone))`:
    /// nobody is listening any more.
    async fn attempt(
        &self,
        body: &Value,
        model: &str,
        tx: &Sender,
    ) -> Result<(), Result<ModelError, Gone>> {
        let provider = self.wire.provider();
        let url = self.wire.url();
        let headers = self.wire.headers().map_err(Ok)?;
        let response = self
            .http
            .post(&url)
            .headers(headers)
            .json(body)
            .timeout(self.config.timeouts.request)
            .send()
            .await
            .map_err(|e| Ok(self.send_error(&url, &e)))?;

        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            let headers = response.headers().clone();
            let body = read_body(response, provider, self.config.timeouts.idle)
                .await
                .map_err(Ok)?;
            let error = self.wire.error(status, &headers, &body, model);
            return Err(Ok(if crate::retry::retry_forbidden(&headers) {
                error.not_to_retry()
            } else {
                error
            }));
        }

        if !self.config.stream {
            let body = read_body(response, provider, self.config.timeouts.idle)
                .await
                .map_err(Ok)?;
            for event in self.wire.parse_reply(&body).map_err(Ok)? {
                tx.send(Ok(event)).await.map_err(|_| Err(Gone))?;
            }
            return Ok(());
        }

        let mut bytes = response.bytes_stream();
        let mut sse = SseParser::new();
        let mut decoder = self.wire.decoder();
        // The first piece may take as long as reading the prompt does.
        let mut silence = self.config.timeouts.first_token;
        while !decoder.is_done() {
            let chunk = match tokio::time::timeout(silence, bytes.next()).await {
                Err(_) => {
                    return Err(Ok(ModelError::IdleTimeout {
                        provider,
                        after: silence,
                    }));
                }
                Ok(None) => break,
                Ok(Some(Err(e))) => return Err(Ok(self.body_error(&e))),
                Ok(Some(Ok(chunk))) => chunk,
            };
            silence = self.config.timeouts.idle;
            for event in sse.feed(&chunk) {
                for model_event in decoder.event(event).map_err(Ok)? {
                    tx.send(Ok(model_event)).await.map_err(|_| Err(Gone))?;
                }
            }
        }
        if !decoder.is_done() {
            for model_event in decoder.end().map_err(Ok)? {
                tx.send(Ok(model_event)).await.map_err(|_| Err(Gone))?;
            }
        }
        Ok(())
    }

    fn send_error(&self, url: &str, e: &reqwest::Error) -> ModelError {
        let provider = self.wire.provider();
        if e.is_timeout() {
            ModelError::RequestTimeout {
                provider,
                after: self.config.timeouts.request,
            }
        } else if e.is_connect() {
            ModelError::Connect {
                url: url.to_owned(),
                reason: root_cause(e),
            }
        } else {
            ModelError::Transport {
                provider,
                reason: root_cause(e),
            }
        }
    }

    fn body_error(&self, e: &reqwest::Error) -> ModelError {
        let provider = self.wire.provider();
        if e.is_timeout() {
            ModelError::RequestTimeout {
                provider,
                after: self.config.timeouts.request,
            }
        } else {
            ModelError::StreamCut {
                provider,
                reason: root_cause(e),
            }
        }
    }
}

/// Reads a whole (error or non-streamed) body, bounded in size and time.
async fn read_body(
    response: reqwest::Response,
    provider: &'static str,
    idle: std::time::Duration,
) -> Result<Vec<u8>, ModelError> {
    const LIMIT: usize = 64 * 1024 * 1024;
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    loop {
        match tokio::time::timeout(idle, stream.next()).await {
            Err(_) => {
                return Err(ModelError::IdleTimeout {
                    provider,
                    after: idle,
                });
            }
            Ok(None) => return Ok(body),
            Ok(Some(Err(e))) => {
                return Err(ModelError::StreamCut {
                    provider,
                    reason: root_cause(&e),
                });
            }
            Ok(Some(Ok(chunk))) => {
                if body.len() + chunk.len() > LIMIT {
                    return Err(ModelError::Protocol {
                        provider,
                        reason: format!("the reply is over {LIMIT} bytes"),
                    });
                }
                body.extend_from_slice(&chunk);
            }
        }
    }
}

/// The innermost error's text: reqwest's outer message ("error sending
/// request for url …") says less than what caused it.
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut current = e;
    let mut text = current.to_string();
    while let Some(source) = current.source() {
        current = source;
        text = current.to_string();
    }
    text
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rein_testkit::fake_model::{FakeModel, Reply, Scenario};

    use super::*;
    use crate::retry::RetryPolicy;
    use crate::types::{CachePlan, Message};

    /// A provider that is not HTTP: it only records what it is sent.
    struct Recorder(std::sync::Mutex<Vec<ModelRequest>>);

    impl ModelClient for Recorder {
        fn provider(&self) -> &'static str {
            "recorder"
        }

        fn model(&self) -> &str {
            "m"
        }

        fn stream(&self, request: ModelRequest, _cancel: CancellationToken) -> EventStream {
            if let Ok(mut sent) = self.0.lock() {
                sent.push(request);
            }
            Box::pin(futures::stream::empty())
        }
    }

    #[tokio::test]
    async fn every_provider_gets_its_pairing_repaired_at_the_call() {
        use crate::types::{Part, ToolCall, ToolResult};
        let recorder = Recorder(std::sync::Mutex::new(Vec::new()));
        // A call whose result was lost (a crash mid-tool).
        let mut lost = request();
        lost.messages
            .push(Message::assistant(vec![Part::ToolCall(ToolCall {
                id: "c1".into(),
                name: "read_file".into(),
                arguments: serde_json::json!({"path": "a"}),
            })]));
        let events: Vec<_> = recorder
            .call(lost, CancellationToken::new())
            .collect()
            .await;
        assert!(events.is_empty());
        let sent = recorder.0.lock().unwrap().clone();
        assert_eq!(sent.len(), 1);
        assert_eq!(
            sent[0].messages.last().unwrap().tool_results_iter().count(),
            1
        );
        // A result for a call nobody made: refused, nothing sent.
        let mut orphan = request();
        orphan.messages.push(Message::tool_results(vec![ToolResult {
            call_id: "ghost".into(),
            content: "?".into(),
            is_error: false,
        }]));
        let events: Vec<_> = recorder
            .call(orphan, CancellationToken::new())
            .collect()
            .await;
        assert!(
            matches!(events.as_slice(), [Err(ModelError::InvalidRequest(_))]),
            "{events:?}"
        );
        assert_eq!(recorder.0.lock().unwrap().len(), 1);
    }

    fn request() -> ModelRequest {
        ModelRequest {
            model: "claude-sonnet-4-5".into(),
            system: vec!["You are Rein.".into()],
            messages: vec![Message::user("go")],
            tools: Vec::new(),
            max_output_tokens: 1024,
            temperature: None,
            seed: None,
            tool_choice: Default::default(),
            cache: CachePlan {
                enabled: false,
                stable_message: None,
            },
        }
    }

    /// The scripted provider borrows Anthropic's wire format: a script that
    /// has run out fails at once (one request, no "gave up after 4
    /// attempts"), and the error names the scripted model, never Anthropic.
    #[tokio::test]
    async fn a_scripted_model_out_of_replies_fails_at_once_under_its_own_name() {
        let server = FakeModel::start(Scenario::new().reply(Reply::text("only one")))
            .await
            .unwrap();
        let config = ProviderConfig {
            provider: ProviderKind::Scripted,
            model: "claude-sonnet-4-5".into(),
            base_url: server.base_url(),
            api_key: crate::ApiKey::new("scripted-key"),
            stream: true,
            retry: RetryPolicy {
                base_delay: Duration::from_millis(1),
                max_delay: Duration::from_millis(5),
                ..RetryPolicy::default()
            },
            timeouts: crate::Timeouts::default(),
            prices: Default::default(),
            scenario: None,
            context_window: None,
            temperature: 0.0,
            key_from: None,
        };
        let client = anthropic_client(&config).unwrap();
        assert_eq!(client.provider(), "scripted");
        crate::collect(client.stream(request(), CancellationToken::new()))
            .await
            .unwrap();
        let error = crate::collect(client.stream(request(), CancellationToken::new()))
            .await
            .unwrap_err();
        assert_eq!(server.requests().len(), 2, "retried: {error}");
        assert!(!error.is_transient(), "{error:?}");
        assert_eq!(
            error.to_string(),
            "the scripted model refused the request (500 api_error: fake model: scenario exhausted after 1 replies)"
        );
    }

    /// A real provider keeps its own name.
    #[test]
    fn a_real_provider_is_named_by_its_wire() {
        let config = ProviderConfig {
            provider: ProviderKind::Anthropic,
            model: "claude-sonnet-4-5".into(),
            base_url: "http://127.0.0.1:9".into(),
            api_key: crate::ApiKey::new("sk-ant-x"),
            stream: true,
            retry: RetryPolicy::default(),
            timeouts: crate::Timeouts::default(),
            prices: Default::default(),
            scenario: None,
            context_window: None,
            temperature: 0.0,
            key_from: None,
        };
        assert_eq!(anthropic_client(&config).unwrap().provider(), "Anthropic");
    }
}
