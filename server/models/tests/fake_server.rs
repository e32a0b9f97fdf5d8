//! Both adapters against the fake model server, which speaks the real wire
//! formats and validates every request it receives.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use pretty_assertions::assert_eq;
use rein_models::retry::RetryPolicy;
use rein_models::{
    ApiKey, BadArguments, CachePlan, Message, ModelClient, ModelError, ModelEvent, ModelRequest,
    Part, ProviderConfig, ProviderKind, StopReason, Timeouts, ToolCall, ToolChoice, ToolResult,
    ToolSpec, Usage, anthropic_client, collect, openai_client,
};
use rein_testkit::ClosedPort;
use rein_testkit::fake_model::{FakeModel, Fault, Reply, Scenario, Usage as FakeUsage};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const KEY: &str = "sk-test-FAKEKEY-0123456789";

#[derive(Clone, Copy, Debug, PartialEq)]
enum Format {
    Anthropic,
    OpenAi,
}

const FORMATS: [Format; 2] = [Format::Anthropic, Format::OpenAi];

fn config(format: Format, server: &FakeModel, stream: bool) -> ProviderConfig {
    ProviderConfig {
        provider: match format {
            Format::Anthropic => ProviderKind::Anthropic,
            Format::OpenAi => ProviderKind::OpenAi,
        },
        model: match format {
            Format::Anthropic => "claude-sonnet-4-5".into(),
            Format::OpenAi => "gpt-4o-mini".into(),
        },
        base_url: match format {
            Format::Anthropic => server.base_url(),
            Format::OpenAi => format!("{}/v1", server.base_url()),
        },
        api_key: ApiKey::new(KEY),
        stream,
        // Fast retries: these tests check behaviour, not timing.
        retry: RetryPolicy {
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
            ..RetryPolicy::default()
        },
        timeouts: Timeouts {
            idle: Duration::from_secs(10),
            ..Timeouts::default()
        },
        prices: Default::default(),
        scenario: None,
        context_window: None,
        temperature: 0.0,
        key_from: None,
    }
}

fn client(format: Format, server: &FakeModel, stream: bool) -> Arc<dyn ModelClient> {
    let config = config(format, server, stream);
    match format {
        Format::Anthropic => anthropic_client(&config).unwrap(),
        Format::OpenAi => openai_client(&config).unwrap(),
    }
}

fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "run_tests".into(),
            description: "Runs the project's tests for a target and returns the failures and the last 50 lines of output.".into(),
            input_schema: json!({"type": "object", "properties": {"target": {"type": "string"}}}),
        },
        ToolSpec {
            name: "read_file".into(),
            description: "Reads a file and returns its lines, numbered.".into(),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        },
    ]
}

fn request(format: Format, messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        model: match format {
            Format::Anthropic => "claude-sonnet-4-5".into(),
            Format::OpenAi => "gpt-4o-mini".into(),
        },
        system: vec![
            "You are Rein, a coding agent.".into(),
            "Project rules: run the tests before claiming success.".into(),
        ],
        messages,
        tools: tools(),
        max_output_tokens: 4096,
        temperature: None,
        seed: None,
        tool_choice: Default::default(),
        cache: CachePlan {
            enabled: true,
            stable_message: None,
        },
    }
}

fn call(id: &str, name: &str, arguments: Value) -> Part {
    Part::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
    })
}

fn result(id: &str, content: &str, is_error: bool) -> Part {
    Part::ToolResult(ToolResult {
        call_id: id.into(),
        content: content.into(),
        is_error,
    })
}

/// A conversation with every kind of part: text, calls, parallel calls,
/// results, an error result.
fn reference_conversation() -> Vec<Message> {
    vec![
        Message::user("Fix test_total in tests/test_cart.py"),
        Message::assistant(vec![
            Part::text("Running the test first."),
            call(
                "toolu_1",
                "run_tests",
                json!({"target": "tests/test_cart.py::test_total"}),
            ),
        ]),
        Message {
            role: rein_models::Role::User,
            parts: vec![result(
                "toolu_1",
                "FAILED tests/test_cart.py::test_total - assert 3 == 30",
                false,
            )],
        },
        Message::assistant(vec![
            call("toolu_2", "read_file", json!({"path": "cart.py"})),
            call("toolu_3", "read_file", json!({"path": "carts.py"})),
        ]),
        Message {
            role: rein_models::Role::User,
            parts: vec![
                result(
                    "toolu_2",
                    "1  def total(items):\n2      return len(items)",
                    false,
                ),
                result("toolu_3", "carts.py not found; did you mean cart.py?", true),
            ],
        },
    ]
}

fn no_violations(server: &FakeModel) {
    assert_eq!(server.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn tool_calls_streamed_and_not_in_both_formats() {
    for format in FORMATS {
        for stream in [true, false] {
            let server = FakeModel::start(
                Scenario::new().reply(
                    Reply::text("Reading both files.")
                        .tool_call("read_file", json!({"path": "cart.py"}))
                        .tool_call("read_file", json!({"path": "tests/test_cart.py"})),
                ),
            )
            .await
            .unwrap();
            let reply = collect(client(format, &server, stream).stream(
                request(format, vec![Message::user("go")]),
                CancellationToken::new(),
            ))
            .await
            .unwrap();
            let what = format!("{format:?} stream={stream}");
            assert_eq!(reply.text(), "Reading both files.", "{what}");
            let args: Vec<Value> = reply
                .tool_calls()
                .iter()
                .map(|c| c.arguments.clone())
                .collect();
            assert_eq!(
                args,
                vec![
                    json!({"path": "cart.py"}),
                    json!({"path": "tests/test_cart.py"})
                ],
                "{what}"
            );
            assert_eq!(reply.stop, StopReason::ToolUse, "{what}");
            assert_eq!(reply.retries, 0);
            no_violations(&server);
            assert_eq!(
                server.requests()[0].body["stream"]
                    .as_bool()
                    .unwrap_or(false),
                stream,
                "{what}"
            );
        }
    }
}

/// A required call goes out in each wire's words; without tools there is
/// nothing to require, and the key is left out (a server would refuse it).
#[tokio::test]
async fn a_required_tool_call_is_asked_in_each_wires_words() {
    for (format, said) in [
        (Format::Anthropic, json!({"type": "any"})),
        (Format::OpenAi, json!("required")),
    ] {
        let server = FakeModel::start(
            Scenario::new()
                .reply(Reply::tool_call("read_file", json!({"path": "cart.py"})))
                .reply(Reply::text("no tools")),
        )
        .await
        .unwrap();
        let mut forced = request(format, vec![Message::user("go")]);
        forced.tool_choice = ToolChoice::Required;
        let mut bare = forced.clone();
        bare.tools.clear();
        for req in [forced, bare] {
            collect(client(format, &server, true).stream(req, CancellationToken::new()))
                .await
                .unwrap();
        }
        let sent: Vec<Value> = server
            .requests()
            .iter()
            .map(|r| r.body["tool_choice"].clone())
            .collect();
        assert_eq!(sent, [said, Value::Null], "{format:?}");
        no_violations(&server);
    }
}

#[tokio::test]
async fn streamed_events_arrive_in_order_with_deltas() {
    for format in FORMATS {
        let server = FakeModel::start(
            Scenario::new().reply(
                Reply::text("Hello, wörld 😀 — a longer text to split")
                    .tool_call("run_tests", json!({"target": "tests/test_cart.py"})),
            ),
        )
        .await
        .unwrap();
        let mut events = client(format, &server, true).stream(
            request(format, vec![Message::user("go")]),
            CancellationToken::new(),
        );
        let mut kinds = Vec::new();
        let mut text = String::new();
        while let Some(event) = events.next().await {
            let event = event.unwrap();
            if let ModelEvent::TextDelta(t) = &event {
                text.push_str(t);
            }
            let kind = format!("{event:?}");
            let kind = kind.split(['(', ' ']).next().unwrap().to_owned();
            if kinds.last() != Some(&kind) {
                kinds.push(kind);
            }
        }
        assert_eq!(text, "Hello, wörld 😀 — a longer text to split");
        assert_eq!(
            kinds,
            [
                "TextDelta",
                "ToolCallStarted",
                "ToolArgumentsDelta",
                "ToolCallFinished",
                "Usage",
                "Stop"
            ],
            "{format:?}"
        );
    }
}

#[tokio::test]
async fn transient_faults_are_retried() {
    let faults = [
        Fault::Status {
            status: 529,
            retry_after: None,
            message: None,
        },
        Fault::Status {
            status: 500,
            retry_after: None,
            message: None,
        },
        Fault::Status {
            status: 429,
            retry_after: Some(1),
            message: None,
        },
        Fault::ConnectionReset,
        Fault::CutAfterEvents(3),
        Fault::StreamError {
            after_events: 2,
            error_type: "overloaded_error".into(),
            message: "Overloaded".into(),
        },
    ];
    for format in FORMATS {
        for fault in &faults {
            let first = match fault {
                Fault::CutAfterEvents(_) | Fault::StreamError { .. } => {
                    Reply::text("partial text that is thrown away").with_fault(fault.clone())
                }
                _ => Reply::fault(fault.clone()),
            };
            let server =
                FakeModel::start(Scenario::new().reply(first).reply(Reply::text("recovered")))
                    .await
                    .unwrap();
            let reply = collect(client(format, &server, true).stream(
                request(format, vec![Message::user("go")]),
                CancellationToken::new(),
            ))
            .await
            .unwrap_or_else(|e| panic!("{format:?} {fault:?}: {e}"));
            assert_eq!(reply.text(), "recovered", "{format:?} {fault:?}");
            assert_eq!(reply.retries, 1, "{format:?} {fault:?}");
            assert_eq!(server.requests().len(), 2, "{format:?} {fault:?}");
        }
    }
}

#[tokio::test]
async fn an_invalid_json_sse_event_is_retried() {
    // A garbled event is a damaged stream, like a cut one: the attempt is
    // dropped (consumers are told with `Retrying`) and the call retried.
    for format in FORMATS {
        for after in [0, 2, 1_000] {
            let server = FakeModel::start(
                Scenario::new()
                    .reply(
                        Reply::text("partial text that is thrown away")
                            .tool_call("read_file", json!({"path": "cart.py"}))
                            .with_fault(Fault::InvalidJsonEvent(after)),
                    )
                    .reply(Reply::text("recovered")),
            )
            .await
            .unwrap();
            let events: Vec<_> = client(format, &server, true)
                .stream(
                    request(format, vec![Message::user("go")]),
                    CancellationToken::new(),
                )
                .collect()
                .await;
            let retrying = events
                .iter()
                .position(|e| matches!(e, Ok(ModelEvent::Retrying { .. })))
                .unwrap_or_else(|| panic!("{format:?} after {after}: no retry in {events:?}"));
            let Ok(ModelEvent::Retrying {
                attempt, reason, ..
            }) = &events[retrying]
            else {
                unreachable!()
            };
            assert_eq!(*attempt, 1, "{format:?} after {after}");
            assert!(
                reason.contains("not JSON"),
                "{format:?} after {after}: {reason}"
            );
            // Whatever came before the retry belonged to the dropped attempt.
            let kept = events[retrying + 1..].to_vec();
            let reply = collect(Box::pin(futures::stream::iter(kept)))
                .await
                .unwrap_or_else(|e| panic!("{format:?} after {after}: {e}"));
            assert_eq!(reply.text(), "recovered", "{format:?} after {after}");
            assert_eq!(server.requests().len(), 2, "{format:?} after {after}");
            no_violations(&server);
        }
    }
}

#[tokio::test]
async fn retries_stop_after_the_limit() {
    for format in FORMATS {
        let mut scenario = Scenario::new();
        for _ in 0..4 {
            scenario = scenario.reply(Reply::fault(Fault::Status {
                status: 503,
                retry_after: None,
                message: Some("busy".into()),
            }));
        }
        let server = FakeModel::start(scenario).await.unwrap();
        let err = collect(client(format, &server, true).stream(
            request(format, vec![Message::user("go")]),
            CancellationToken::new(),
        ))
        .await
        .unwrap_err();
        assert!(
            matches!(err, ModelError::RetriesExhausted { attempts: 4, .. }),
            "{format:?}: {err}"
        );
        assert!(
            err.to_string().ends_with("(gave up after 4 attempts)"),
            "{err}"
        );
        assert_eq!(server.requests().len(), 4);
    }
}

#[tokio::test]
async fn permanent_errors_are_not_retried_and_say_what_to_fix() {
    for format in FORMATS {
        for (status, expect) in [
            (401, "check"),
            (400, "refused the request"),
            (403, "refused the request"),
        ] {
            let server = FakeModel::start(Scenario::new().reply(Reply::fault(Fault::Status {
                status,
                retry_after: None,
                message: None,
            })))
            .await
            .unwrap();
            let err = collect(client(format, &server, true).stream(
                request(format, vec![Message::user("go")]),
                CancellationToken::new(),
            ))
            .await
            .unwrap_err();
            assert!(!err.is_transient(), "{format:?} {status}: {err}");
            assert!(
                err.to_string().contains(expect),
                "{format:?} {status}: {err}"
            );
            assert_eq!(server.requests().len(), 1, "{format:?} {status}");
        }
    }
}

#[tokio::test]
async fn a_call_cut_by_max_tokens_or_broken_json_never_runs() {
    for format in FORMATS {
        for stream in [true, false] {
            let server = FakeModel::start(
                Scenario::new()
                    .reply(
                        Reply::text("Editing.")
                            .tool_call("edit_file", json!({"path": "cart.py", "old_text": "len(items)", "new_text": "sum(i.price for i in items)"}))
                            .stop(rein_testkit::fake_model::StopReason::MaxTokens),
                    )
                    .reply(Reply::tool_call("read_file", json!({"path": "cart.py"})).with_fault(Fault::MalformedToolJson)),
            )
            .await
            .unwrap();
            let client = client(format, &server, stream);
            let truncated = collect(client.stream(
                request(format, vec![Message::user("go")]),
                CancellationToken::new(),
            ))
            .await
            .unwrap();
            assert_eq!(truncated.stop, StopReason::MaxTokens);
            assert!(truncated.tool_calls().is_empty(), "{format:?} {stream}");
            assert_eq!(truncated.bad_calls[0].problem, BadArguments::Truncated);

            let broken = collect(client.stream(
                request(format, vec![Message::user("go")]),
                CancellationToken::new(),
            ))
            .await
            .unwrap();
            assert!(broken.tool_calls().is_empty(), "{format:?} {stream}");
            assert!(
                matches!(broken.bad_calls[0].problem, BadArguments::Invalid(_)),
                "{:?}",
                broken.bad_calls
            );
            // The bad call still stands in the reply, so the history stays paired.
            assert!(matches!(broken.parts.last(), Some(Part::ToolCall(_))));
        }
    }
}

#[tokio::test]
async fn cancellation_stops_the_call_mid_stream() {
    for format in FORMATS {
        let server = FakeModel::start(
            Scenario::new().reply(
                Reply::text("a slow answer that goes on and on and on")
                    .with_fault(Fault::Slow { delay_ms: 200 }),
            ),
        )
        .await
        .unwrap();
        let cancel = CancellationToken::new();
        let mut events = client(format, &server, true)
            .stream(request(format, vec![Message::user("go")]), cancel.clone());
        let first = events.next().await.unwrap().unwrap();
        assert!(matches!(first, ModelEvent::TextDelta(_)), "{first:?}");
        cancel.cancel();
        let mut tail = Vec::new();
        while let Some(event) = events.next().await {
            tail.push(event);
        }
        // Possibly a delta already in flight, then the cancellation; never a Stop.
        assert!(
            matches!(tail.last(), Some(Err(ModelError::Cancelled))),
            "{format:?}: {tail:?}"
        );
        assert!(!tail.iter().any(|e| matches!(e, Ok(ModelEvent::Stop(_)))));
    }
}

#[tokio::test]
async fn usage_and_cost() {
    let usage = FakeUsage {
        input: 1_000,
        output: 200,
        cache_read: 5_000,
        cache_write: 300,
    };
    for format in FORMATS {
        let server = FakeModel::start(Scenario::new().reply(Reply::text("ok").usage(usage)))
            .await
            .unwrap();
        let reply = collect(client(format, &server, true).stream(
            request(format, vec![Message::user("go")]),
            CancellationToken::new(),
        ))
        .await
        .unwrap();
        let prices = rein_models::pricing::PriceTable::default();
        match format {
            Format::Anthropic => {
                assert_eq!(
                    reply.usage,
                    Usage {
                        input_tokens: 1_000,
                        output_tokens: 200,
                        cache_read_tokens: 5_000,
                        cache_write_tokens: 300
                    }
                );
                // Sonnet 4.x: (1000×3 + 200×15 + 5000×0.30 + 300×3.75) / 1e6
                let cost = prices.cost_usd("claude-sonnet-4-5", &reply.usage).unwrap();
                assert!((cost - 0.008625).abs() < 1e-9, "{cost}");
            }
            Format::OpenAi => {
                // OpenAI reports cached tokens inside prompt_tokens and no writes.
                assert_eq!(
                    reply.usage,
                    Usage {
                        input_tokens: 1_300,
                        output_tokens: 200,
                        cache_read_tokens: 5_000,
                        cache_write_tokens: 0
                    }
                );
                assert_eq!(reply.usage.total_input(), 6_300);
            }
        }
    }
}

#[tokio::test]
async fn histories_are_repaired_or_refused_before_sending() {
    for format in FORMATS {
        let server = FakeModel::start(Scenario::new().reply(Reply::text("ok")))
            .await
            .unwrap();
        let client = client(format, &server, true);
        // The second call lost its result (say, a crash mid-tool).
        let mut history = reference_conversation();
        history[4].parts.pop();
        collect(client.call(request(format, history), CancellationToken::new()))
            .await
            .unwrap();
        no_violations(&server);
        let body = &server.requests()[0].body;
        let sent = body.to_string();
        assert!(
            sent.contains("cancelled: this call was not run to completion"),
            "{format:?}: {sent}"
        );

        // A result for a call nobody made is refused without a request.
        let orphan = vec![
            Message::user("go"),
            Message::tool_results(vec![ToolResult {
                call_id: "ghost".into(),
                content: "?".into(),
                is_error: false,
            }]),
        ];
        let err = collect(client.call(request(format, orphan), CancellationToken::new()))
            .await
            .unwrap_err();
        assert!(matches!(err, ModelError::InvalidRequest(_)), "{err}");
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn local_servers_need_no_key() {
    let server = FakeModel::start(
        Scenario::new()
            .require_api_key(false)
            .reply(Reply::text("hi")),
    )
    .await
    .unwrap();
    let mut config = config(Format::OpenAi, &server, true);
    config.api_key = None;
    let reply = collect(openai_client(&config).unwrap().stream(
        request(Format::OpenAi, vec![Message::user("go")]),
        CancellationToken::new(),
    ))
    .await
    .unwrap();
    assert_eq!(reply.text(), "hi");
    assert!(!server.requests()[0].headers.contains_key("authorization"));
    no_violations(&server);

    config.provider = ProviderKind::Anthropic;
    let err = rein_models::build_client(&config).err().unwrap();
    assert_eq!(
        err.to_string(),
        "ANTHROPIC_API_KEY is not set: Rein needs an API key for Anthropic (or set REIN_PROVIDER to another provider)"
    );
}

/// The exact bodies of a reference conversation, as the server received
/// them. Cache breakpoints (Anthropic): last tool, last system block, the
/// stable message and the last message.
#[tokio::test]
async fn reference_request_bodies() {
    let mut bodies = Vec::new();
    for format in FORMATS {
        let server = FakeModel::start(Scenario::new().reply(Reply::text("ok")))
            .await
            .unwrap();
        let mut req = request(format, reference_conversation());
        req.cache.stable_message = Some(2);
        req.temperature = Some(0.2);
        collect(client(format, &server, true).stream(req, CancellationToken::new()))
            .await
            .unwrap();
        no_violations(&server);
        let recorded = &server.requests()[0];
        bodies.push(serde_json::to_string_pretty(&recorded.body).unwrap());
        match format {
            Format::Anthropic => {
                assert_eq!(
                    recorded
                        .headers
                        .get("anthropic-version")
                        .map(String::as_str),
                    Some("2023-06-01")
                );
                assert_eq!(
                    recorded.headers.get("x-api-key").map(String::as_str),
                    Some(KEY)
                );
                assert_eq!(recorded.path, "/v1/messages");
            }
            Format::OpenAi => {
                assert_eq!(
                    recorded.headers.get("authorization"),
                    Some(&format!("Bearer {KEY}"))
                );
                assert_eq!(recorded.path, "/v1/chat/completions");
            }
        }
    }
    expect_test::expect_file!["snapshots/anthropic_request.json"].assert_eq(&bodies[0]);
    expect_test::expect_file!["snapshots/openai_request.json"].assert_eq(&bodies[1]);
}

/// Nothing Rein writes (logs, errors, `Debug` output) contains the key,
/// even when the provider echoes it back.
#[tokio::test(flavor = "current_thread")]
async fn the_key_never_leaks() {
    let logs = Arc::new(Mutex::new(Vec::<u8>::new()));
    let writer = {
        let logs = Arc::clone(&logs);
        move || Capture(Arc::clone(&logs))
    };
    let subscriber = tracing_subscriber::fmt()
        .with_writer(writer)
        .with_max_level(tracing::Level::TRACE)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let mut written = String::new();
    for format in FORMATS {
        let echo = Some(format!("Invalid API key: {KEY}"));
        let server = FakeModel::start(
            Scenario::new()
                .reply(Reply::fault(Fault::Status {
                    status: 529,
                    retry_after: None,
                    message: echo.clone(),
                }))
                .reply(Reply::fault(Fault::Status {
                    status: 401,
                    retry_after: None,
                    message: echo,
                })),
        )
        .await
        .unwrap();
        let config = config(format, &server, true);
        written.push_str(&format!("{config:?}\n"));
        let err = collect(client(format, &server, true).stream(
            request(format, vec![Message::user("go")]),
            CancellationToken::new(),
        ))
        .await
        .unwrap_err();
        written.push_str(&format!("{err}\n{err:?}\n"));
    }
    written.push_str(&String::from_utf8_lossy(&logs.lock().unwrap()));
    assert!(
        written.contains("retrying model call"),
        "the logs were not captured:\n{written}"
    );
    assert!(!written.contains("FAKEKEY"), "the key leaked:\n{written}");
}

struct Capture(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_silent_stream_times_out_and_is_retried() {
    for format in FORMATS {
        let server = FakeModel::start(
            Scenario::new()
                .reply(
                    Reply::text("too slow to wait for")
                        .with_fault(Fault::Slow { delay_ms: 60_000 }),
                )
                .reply(Reply::text("fast")),
        )
        .await
        .unwrap();
        let mut config = config(format, &server, true);
        // Far from both replies: the slow one's gap is a minute, the fast
        // one's are none, so a loaded machine can neither let the first
        // through nor time out the second.
        config.timeouts.idle = Duration::from_secs(2);
        let client = match format {
            Format::Anthropic => anthropic_client(&config).unwrap(),
            Format::OpenAi => openai_client(&config).unwrap(),
        };
        let mut events = client.stream(
            request(format, vec![Message::user("go")]),
            CancellationToken::new(),
        );
        let mut retry_reason = None;
        while let Some(event) = events.next().await {
            if let ModelEvent::Retrying { reason, .. } = event.unwrap() {
                retry_reason = Some(reason);
            }
        }
        let reason = retry_reason.unwrap();
        assert!(
            reason.contains("sent nothing for 2s"),
            "{format:?}: {reason}"
        );
        assert_eq!(server.requests().len(), 2);
    }
}

/// A local model reads a long prompt before its first token: that wait
/// has its own bound (`first_token`), longer than the silence tolerated
/// once it speaks (`idle`). Past it, the call times out as a silent one.
#[tokio::test]
async fn the_first_token_may_take_longer_than_the_silence_between_tokens() {
    for format in FORMATS {
        let server = FakeModel::start(
            Scenario::new()
                .reply(
                    Reply::text("thought first").with_fault(Fault::SlowStart { delay_ms: 1_500 }),
                )
                .reply(
                    Reply::text("never read in time")
                        .with_fault(Fault::SlowStart { delay_ms: 60_000 }),
                )
                .reply(Reply::text("fast")),
        )
        .await
        .unwrap();
        let mut config = config(format, &server, true);
        config.timeouts.idle = Duration::from_millis(500);
        config.timeouts.first_token = Duration::from_secs(20);
        let client = match format {
            Format::Anthropic => anthropic_client(&config).unwrap(),
            Format::OpenAi => openai_client(&config).unwrap(),
        };
        let reply = rein_models::collect(client.stream(
            request(format, vec![Message::user("go")]),
            CancellationToken::new(),
        ))
        .await
        .unwrap();
        assert_eq!(reply.text(), "thought first", "{format:?}");
        assert_eq!(reply.retries, 0, "{format:?}");

        config.timeouts.first_token = Duration::from_secs(2);
        let client = match format {
            Format::Anthropic => anthropic_client(&config).unwrap(),
            Format::OpenAi => openai_client(&config).unwrap(),
        };
        let mut events = client.stream(
            request(format, vec![Message::user("go")]),
            CancellationToken::new(),
        );
        let mut retry_reason = None;
        while let Some(event) = events.next().await {
            if let ModelEvent::Retrying { reason, .. } = event.unwrap() {
                retry_reason = Some(reason);
            }
        }
        let reason = retry_reason.unwrap();
        assert!(
            reason.contains("sent nothing for 2s"),
            "{format:?}: {reason}"
        );
    }
}

// ---------------------------------------------------------------------------
// The model list (`rein doctor`'s reachability check).

#[tokio::test]
async fn both_formats_list_the_providers_models() {
    for format in FORMATS {
        let server = FakeModel::start(Scenario::new().models(["m-one", "claude-sonnet-4-5"]))
            .await
            .unwrap();
        let models = rein_models::list_models(&config(format, &server, true))
            .await
            .unwrap();
        assert_eq!(models, vec!["m-one", "claude-sonnet-4-5"], "{format:?}");
        let requests = server.requests();
        assert_eq!(requests.len(), 1);
        // The OpenAI base URL ends in /v1 (as users configure it).
        assert_eq!(
            (requests[0].method.as_str(), requests[0].path.as_str()),
            ("GET", "/v1/models")
        );
        assert_eq!(server.violations(), Vec::<String>::new(), "{format:?}");
        // A listing uses no scenario step: the script is untouched.
        assert_eq!(server.remaining(), 0);
    }
}

#[tokio::test]
async fn a_rejected_key_and_an_absent_server_are_told_apart() {
    for format in FORMATS {
        let server = FakeModel::start(Scenario::new()).await.unwrap();
        let mut no_key = config(format, &server, true);
        no_key.api_key = None;
        let error = rein_models::list_models(&no_key).await.unwrap_err();
        match format {
            // Anthropic needs a key before anything is sent.
            Format::Anthropic => assert!(
                matches!(error, ModelError::MissingApiKey { .. }),
                "{error:?}"
            ),
            // An OpenAI-compatible server may not need one; this one does.
            Format::OpenAi => assert!(
                matches!(error, ModelError::Unauthorized { status: 401, .. }),
                "{error:?}"
            ),
        }

        let mut nowhere = config(format, &server, true);
        drop(server);
        let closed = ClosedPort::new().unwrap();
        nowhere.base_url = closed.url();
        let error = rein_models::list_models(&nowhere).await.unwrap_err();
        assert!(matches!(error, ModelError::Connect { .. }), "{error:?}");
        assert!(!format!("{error} {error:?}").contains(KEY));
    }
}

/// Regression (issue 35, "a wrong key names ANTHROPIC_API_KEY although the
/// key came from Set API Key"): a rejected key is said to come from where
/// the settings found it, for both formats, in the listing and in a task's
/// call alike.
#[tokio::test]
async fn a_rejected_key_names_where_the_key_came_from() {
    for format in FORMATS {
        let server = FakeModel::start(Scenario::new().api_key("sk-the-right-one"))
            .await
            .unwrap();
        let mut from_editor = config(format, &server, true);
        from_editor.key_from = Some("the editor's settings (VS Code: Rein: Set API Key)".into());
        let error = rein_models::list_models(&from_editor).await.unwrap_err();
        let text = error.to_string();
        assert!(
            matches!(error, ModelError::Unauthorized { .. }),
            "{error:?}"
        );
        assert!(
            text.ends_with("check the key from the editor's settings (VS Code: Rein: Set API Key)"),
            "{format:?}: {text}"
        );
        assert!(!text.contains("_API_KEY"), "{format:?}: {text}");

        let from_env = config(format, &server, true);
        let text = rein_models::list_models(&from_env)
            .await
            .unwrap_err()
            .to_string();
        let var = match format {
            Format::Anthropic => "ANTHROPIC_API_KEY",
            Format::OpenAi => "OPENAI_API_KEY",
        };
        assert!(
            text.ends_with(&format!("check the key from {var}")),
            "{format:?}: {text}"
        );
    }
}
