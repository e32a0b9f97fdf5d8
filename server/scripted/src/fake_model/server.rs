//! The running server: accepting connections on 127.0.0.1, routing each
//! request, validating it, consuming a scenario step, and recording it all.

use std::collections::{BTreeMap, VecDeque};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

use super::api_error::ApiError;
use super::conditions::RequestTexts;
use super::http::{Connection, HttpError, HttpRequest};
use super::openai::StreamStyle;
use super::plan::{Context, Plan, error_plan, final_error_plan, models_plan, reply_plan};
use super::resolve::{Ids, RequestFacts, resolve};
use super::scenario::{Fault, Scenario, ServerInfo, Step};
use super::server_info::{InfoRoute, info_plan, json_plan, with_fault};
use super::streamed::Streamed;
use super::validate::{check_expected_key, validate, validate_models_request};
use super::{RecordedRequest, WireFormat};

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum FakeModelError {
    /// Binding or inspecting the listening socket failed.
    #[error("cannot listen on 127.0.0.1: {0}")]
    Bind(#[source] std::io::Error),
}

/// A fake model server listening on `127.0.0.1:<random port>`, answering
/// Anthropic and OpenAI requests from a [`Scenario`]. Stops when dropped.
#[derive(Debug)]
pub struct FakeModel {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

#[derive(Debug)]
struct Shared {
    require_api_key: bool,
    api_key: Option<String>,
    streamed: Option<Streamed>,
    ollama_tool_calls: bool,
    chunk_chars: usize,
    models: Vec<String>,
    server_info: Option<ServerInfo>,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    steps: VecDeque<Step>,
    consumed: usize,
    requests: Vec<RecordedRequest>,
    violations: Vec<String>,
    ids: Ids,
}

impl FakeModel {
    /// Binds 127.0.0.1 on a free port and starts serving `scenario`. Must be
    /// called inside a tokio runtime.
    pub async fn start(scenario: Scenario) -> Result<FakeModel, FakeModelError> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .map_err(FakeModelError::Bind)?;
        let addr = listener.local_addr().map_err(FakeModelError::Bind)?;
        let shared = Arc::new(Shared {
            require_api_key: scenario.require_api_key,
            api_key: scenario.api_key,
            streamed: scenario.streamed,
            ollama_tool_calls: scenario.ollama_parallel_tool_calls,
            chunk_chars: scenario.text_chunk_chars,
            models: scenario.models,
            server_info: scenario.server_info,
            state: Mutex::new(State {
                steps: scenario.replies.into(),
                consumed: 0,
                requests: Vec::new(),
                violations: Vec::new(),
                ids: Ids::default(),
            }),
        });
        let task = tokio::spawn(accept_loop(listener, Arc::clone(&shared)));
        Ok(FakeModel { addr, shared, task })
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// Every validation failure so far, as `"<METHOD> <path>: <message>"`.
    pub fn violations(&self) -> Vec<String> {
        self.shared.lock().violations.clone()
    }

    /// Scenario steps not yet consumed.
    pub fn remaining(&self) -> usize {
        self.shared.lock().steps.len()
    }
}

impl Drop for FakeModel {
    /// Aborting the accept loop drops its `JoinSet`, which aborts every
    /// connection task too.
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(serve_connection(stream, Arc::clone(&shared)));
                }
                // Out of file descriptors, say: back off instead of spinning.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

async fn serve_connection(stream: TcpStream, shared: Arc<Shared>) {
    let mut connection = Connection::new(stream);
    loop {
        let request = match connection.read_request().await {
            Ok(Some(request)) => request,
            Ok(None) | Err(HttpError::Io(_) | HttpError::Truncated) => return,
            Err(HttpError::Bad { status, message }) => {
                shared
                    .lock()
                    .violations
                    .push(format!("malformed HTTP request: {message}"));
                let _ = malformed_http_plan(status, &message)
                    .send(connection, true, None)
                    .await;
                return;
            }
        };
        let close = request.wants_close;
        let Answer { plan, gate, watch } = shared.answer(&request);
        if let Some(gate) = gate {
            wait_for_file(&gate).await;
        }
        let watch = watch.as_ref().map(|(streamed, step)| (streamed, *step));
        match plan.send(connection, close, watch).await {
            Some(open) => connection = open,
            None => return,
        }
    }
}

/// Before we know which API the client meant, a neutral JSON error.
fn malformed_http_plan(status: u16, message: &str) -> Plan {
    let body = serde_json::json!({"error": {"type": "invalid_request_error", "message": message}});
    Plan::Whole {
        status,
        headers: vec![("content-type", "application/json".to_string())],
        body: body.to_string().into_bytes(),
        delay: None,
        cut: false,
    }
}

/// What to send for one request, and around it.
struct Answer {
    plan: Plan,
    /// Send nothing until this file exists (`Fault::WaitForFile`).
    gate: Option<PathBuf>,
    /// The scenario's watcher and the step this answers.
    watch: Option<(Streamed, usize)>,
}

impl From<Plan> for Answer {
    fn from(plan: Plan) -> Self {
        Self {
            plan,
            gate: None,
            watch: None,
        }
    }
}

/// Polls for `path` (no notification says a file appeared, portably); a
/// `stat` is quick enough to make on the runtime's thread.
async fn wait_for_file(path: &Path) {
    while !path.exists() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

enum Route {
    Api(WireFormat),
    /// `GET` the model list (no scenario step is used).
    Models(WireFormat),
    /// Where a local server says what it runs with (no step is used).
    Info(InfoRoute),
    NotFound(WireFormat),
}

fn route(request: &HttpRequest) -> Route {
    let format = match (request.method.as_str(), request.path()) {
        ("POST", "/v1/messages") => return Route::Api(WireFormat::Anthropic),
        ("POST", "/chat/completions" | "/v1/chat/completions") => {
            return Route::Api(WireFormat::OpenAi);
        }
        ("GET", "/v1/models") if speaks_anthropic(request) => {
            return Route::Models(WireFormat::Anthropic);
        }
        ("GET", "/models" | "/v1/models") => return Route::Models(WireFormat::OpenAi),
        ("GET", "/props") => return Route::Info(InfoRoute::Props),
        ("POST", "/api/show") => return Route::Info(InfoRoute::Show),
        // Answer strays in the dialect the client seems to speak.
        _ if speaks_anthropic(request) => WireFormat::Anthropic,
        _ => WireFormat::OpenAi,
    };
    Route::NotFound(format)
}

fn speaks_anthropic(request: &HttpRequest) -> bool {
    request.headers.contains_key("anthropic-version") || request.headers.contains_key("x-api-key")
}

impl Shared {
    /// A poisoned lock only means a test thread panicked elsewhere; the data
    /// is still the best record we have.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Validates, records, consumes a step and plans the answer. Recording
    /// happens before anything is sent, so a client that has its response
    /// always finds its request in `requests()`.
    fn answer(&self, request: &HttpRequest) -> Answer {
        let (format, found) = match route(request) {
            Route::Models(format) => return self.models(format, request).into(),
            Route::Info(route) => return self.info(route, request).into(),
            Route::Api(format) => (format, true),
            Route::NotFound(format) => (format, false),
        };
        let parsed: Result<Value, serde_json::Error> = serde_json::from_slice(&request.body);
        let body = match &parsed {
            Ok(body) => body.clone(),
            // Keep what was sent, readable, for the test to look at.
            Err(_) => Value::String(String::from_utf8_lossy(&request.body).into_owned()),
        };
        let stream = body.get("stream").and_then(Value::as_bool) == Some(true);
        let include_usage = body
            .pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            == Some(true);
        let mut state = self.lock();
        let context = Context {
            format,
            stream,
            request_id: state.ids.request(),
            created: unix_now(),
            style: StreamStyle {
                include_usage,
                ollama_tool_calls: self.ollama_tool_calls,
                chunk_chars: self.chunk_chars,
            },
        };
        let errors = match &parsed {
            _ if !found => vec![not_found(format, request)],
            Err(error) => vec![invalid_json(format, error)],
            Ok(body) => self.checked(
                format,
                &request.headers,
                validate(format, &request.headers, body, self.require_api_key),
            ),
        };
        let mut record = RecordedRequest {
            format,
            method: request.method.clone(),
            path: request.target.clone(),
            headers: request.headers.clone(),
            body,
            violations: errors.iter().map(|e| e.message.clone()).collect(),
            step: None,
        };
        if let Some(first) = errors.first() {
            state.record(record);
            return error_plan(&context, first, None).into();
        }
        let Some(step) = state.steps.pop_front() else {
            let error = ApiError::with_status(
                500,
                format!(
                    "fake model: scenario exhausted after {} replies",
                    state.consumed
                ),
            );
            record.violations.push(error.message.clone());
            state.record(record);
            return final_error_plan(&context, &error).into();
        };
        let step_index = state.consumed;
        record.step = Some(state.consumed);
        state.consumed += 1;
        let texts = RequestTexts::of(format, &record.body);
        let reply = step.choose(|condition| texts.matches(condition));
        let facts = RequestFacts {
            format,
            body: &record.body,
            body_bytes: request.body.len(),
        };
        let resolved = resolve(reply, &facts, &mut state.ids);
        let plan = reply_plan(&context, &resolved, &reply.faults);
        let gate = reply.faults.iter().find_map(|fault| match fault {
            Fault::WaitForFile(path) => Some(path.clone()),
            _ => None,
        });
        state.record(record);
        Answer {
            plan,
            gate,
            watch: self.streamed.clone().map(|streamed| (streamed, step_index)),
        }
    }
}

impl Shared {
    /// `errors`, then, for a scenario that accepts one key only, a wrong
    /// key (a request already wrong is answered with its first problem).
    fn checked(
        &self,
        format: WireFormat,
        headers: &BTreeMap<String, String>,
        mut errors: Vec<ApiError>,
    ) -> Vec<ApiError> {
        if let Some(expected) = &self.api_key
            && let Some(wrong) = check_expected_key(format, headers, expected)
        {
            errors.push(wrong);
        }
        errors
    }

    /// The model list, in the format's own shape (vLLM's with
    /// `server_info`), after the same header checks a model call gets.
    fn models(&self, format: WireFormat, request: &HttpRequest) -> Plan {
        let (context, errors) = self.record_plain(format, request, Value::Null);
        let info = self.server_info.as_ref();
        let plan = match (errors.first(), info.and_then(|i| i.models_body.as_ref())) {
            (Some(first), _) => error_plan(&context, first, None),
            (None, Some(body)) => json_plan(&context, 200, body),
            (None, None) => models_plan(
                &context,
                &self.models,
                info.and_then(|i| i.vllm_max_model_len.as_ref()),
            ),
        };
        with_fault(plan, info.and_then(|i| i.fault.as_ref()), &request.target)
    }

    /// `GET /props` or `POST /api/show`, from the scenario's
    /// `server_info`; 404 without one, as from a server without the route.
    fn info(&self, route: InfoRoute, request: &HttpRequest) -> Plan {
        let body = match serde_json::from_slice::<Value>(&request.body) {
            Ok(body) => body,
            Err(_) if request.body.is_empty() => Value::Null,
            Err(_) => Value::String(String::from_utf8_lossy(&request.body).into_owned()),
        };
        let (context, errors) = self.record_plain(WireFormat::OpenAi, request, body.clone());
        let info = self.server_info.as_ref();
        let plan = match errors.first() {
            Some(first) => error_plan(&context, first, None),
            None => info
                .and_then(|info| info_plan(&context, info, route, &body, &self.models))
                .unwrap_or_else(|| {
                    error_plan(&context, &not_found(WireFormat::OpenAi, request), None)
                }),
        };
        with_fault(plan, info.and_then(|i| i.fault.as_ref()), &request.target)
    }

    /// Checks the headers of a request that uses no scenario step (as a
    /// model call's), records it, and gives the context to answer in.
    fn record_plain(
        &self,
        format: WireFormat,
        request: &HttpRequest,
        body: Value,
    ) -> (Context, Vec<ApiError>) {
        let mut state = self.lock();
        let context = Context {
            format,
            stream: false,
            request_id: state.ids.request(),
            created: unix_now(),
            style: StreamStyle {
                include_usage: false,
                ollama_tool_calls: false,
                chunk_chars: self.chunk_chars,
            },
        };
        let errors = self.checked(
            format,
            &request.headers,
            validate_models_request(format, &request.headers, self.require_api_key),
        );
        state.record(RecordedRequest {
            format,
            method: request.method.clone(),
            path: request.target.clone(),
            headers: request.headers.clone(),
            body,
            violations: errors.iter().map(|e| e.message.clone()).collect(),
            step: None,
        });
        (context, errors)
    }
}

impl State {
    fn record(&mut self, request: RecordedRequest) {
        for violation in &request.violations {
            self.violations
                .push(format!("{} {}: {violation}", request.method, request.path));
        }
        self.requests.push(request);
    }
}

fn not_found(format: WireFormat, request: &HttpRequest) -> ApiError {
    let message = match format {
        WireFormat::Anthropic => "Not Found".to_string(),
        WireFormat::OpenAi => format!("Invalid URL ({} {})", request.method, request.path()),
    };
    ApiError::with_status(404, message)
}

fn invalid_json(format: WireFormat, error: &serde_json::Error) -> ApiError {
    match format {
        WireFormat::Anthropic => ApiError::invalid(format!(
            "There was an error parsing the body of your request: {error}"
        )),
        WireFormat::OpenAi => ApiError::invalid(
            "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. \
             The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
        ),
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or_default()
}
