//! What goes back on the socket for one request: a [`Plan`] built from the
//! rendered reply and the faults, then sent. Fault behaviour that is the same
//! for both providers (cutting, slowing, resetting) lives here once.

use std::time::Duration;

use super::WireFormat;
use super::api_error::{ApiError, anthropic_status, openai_status};
use super::http::{Connection, response_head};
use super::openai::StreamStyle;
use super::resolve::ResolvedReply;
use super::scenario::Fault;
use super::sse::split_point;
use super::streamed::Streamed;
use super::{anthropic, openai};

/// How to answer one request.
#[derive(Debug)]
pub(crate) enum Plan {
    /// A body with `Content-Length`.
    Whole {
        status: u16,
        headers: Vec<(&'static str, String)>,
        body: Vec<u8>,
        delay: Option<Duration>,
        /// Send half the body, then drop the connection.
        cut: bool,
    },
    /// SSE events in a chunked body.
    Stream {
        headers: Vec<(&'static str, String)>,
        events: Vec<String>,
        delay: Option<Duration>,
        /// Before the first event.
        first_delay: Option<Duration>,
        /// Drop the connection after the events, without the final chunk.
        cut: bool,
    },
    /// Reset the connection without answering.
    Reset,
    /// A chunked body that never ends: `start`, then a space every
    /// `every`, until the client goes away.
    Endless {
        status: u16,
        headers: Vec<(&'static str, String)>,
        start: Vec<u8>,
        every: Duration,
    },
}

/// Everything about the request that shapes the answer.
pub(crate) struct Context {
    pub(crate) format: WireFormat,
    pub(crate) stream: bool,
    pub(crate) request_id: String,
    /// Unix seconds for OpenAI's `created`.
    pub(crate) created: u64,
    pub(crate) style: StreamStyle,
}

impl Context {
    fn headers(&self, content_type: &str) -> Vec<(&'static str, String)> {
        let request_id_header = match self.format {
            WireFormat::Anthropic => "request-id",
            WireFormat::OpenAi => "x-request-id",
        };
        vec![
            ("content-type", content_type.to_string()),
            (request_id_header, self.request_id.clone()),
        ]
    }
}

/// An error answer in the provider's format.
pub(crate) fn error_plan(context: &Context, error: &ApiError, retry_after: Option<u64>) -> Plan {
    let body = match context.format {
        WireFormat::Anthropic => anthropic::error_body(error, &context.request_id),
        WireFormat::OpenAi => openai::error_body(error),
    };
    let mut headers = context.headers("application/json");
    if let Some(seconds) = retry_after {
        headers.push(("retry-after", seconds.to_string()));
    }
    Plan::Whole {
        status: error.status,
        headers,
        body,
        delay: None,
        cut: false,
    }
}

/// An error answer no retry can change (the scenario has run out), which
/// says so as the real APIs do: `x-should-retry: false`. A client that
/// retried it would only wait, then report an outage of a script.
pub(crate) fn final_error_plan(context: &Context, error: &ApiError) -> Plan {
    let mut plan = error_plan(context, error, None);
    if let Plan::Whole { headers, .. } = &mut plan {
        headers.push(("x-should-retry", "false".to_owned()));
    }
    plan
}

/// `GET /v1/models`: Anthropic's page (`data`, `has_more`, `first_id`,
/// `last_id`) or OpenAI's list (`object: "list"`, `data`); with
/// `max_model_len`, vLLM's (each entry also has `root`, `parent` and
/// that `max_model_len`).
pub(crate) fn models_plan(
    context: &Context,
    models: &[String],
    max_model_len: Option<&serde_json::Value>,
) -> Plan {
    let body = match context.format {
        WireFormat::Anthropic => serde_json::json!({
            "data": models.iter().map(|id| serde_json::json!({
                "type": "model",
                "id": id,
                "display_name": id,
                "created_at": "2025-01-01T00:00:00Z",
            })).collect::<Vec<_>>(),
            "has_more": false,
            "first_id": models.first(),
            "last_id": models.last(),
        }),
        WireFormat::OpenAi => serde_json::json!({
            "object": "list",
            "data": models.iter().map(|id| {
                let mut entry = serde_json::json!({
                    "id": id,
                    "object": "model",
                    "created": context.created,
                    "owned_by": "rein-fake",
                });
                if let (Some(len), Some(entry)) = (max_model_len, entry.as_object_mut()) {
                    entry.insert("owned_by".into(), "vllm".into());
                    entry.insert("root".into(), id.as_str().into());
                    entry.insert("parent".into(), serde_json::Value::Null);
                    entry.insert("max_model_len".into(), len.clone());
                }
                entry
            }).collect::<Vec<_>>(),
        }),
    };
    Plan::Whole {
        status: 200,
        headers: context.headers("application/json"),
        body: body.to_string().into_bytes(),
        delay: None,
        cut: false,
    }
}

/// The answer for a scripted reply, faults applied.
pub(crate) fn reply_plan(context: &Context, reply: &ResolvedReply, faults: &[Fault]) -> Plan {
    for fault in faults {
        match fault {
            Fault::ConnectionReset => return Plan::Reset,
            Fault::Status {
                status,
                retry_after,
                message,
            } => {
                let error =
                    ApiError::for_status(context.format, *status, message.clone(), &reply.model);
                return error_plan(context, &error, *retry_after);
            }
            _ => {}
        }
    }
    let delay = faults.iter().find_map(|fault| match fault {
        Fault::Slow { delay_ms } => Some(Duration::from_millis(*delay_ms)),
        _ => None,
    });
    let first_delay = faults.iter().find_map(|fault| match fault {
        Fault::SlowStart { delay_ms } => Some(Duration::from_millis(*delay_ms)),
        _ => None,
    });
    let stream_error = faults.iter().find_map(|fault| match fault {
        Fault::StreamError {
            after_events,
            error_type,
            message,
        } => Some((*after_events, error_type.as_str(), message.as_str())),
        _ => None,
    });
    let cut_after = faults.iter().find_map(|fault| match fault {
        Fault::CutAfterEvents(events) => Some(*events),
        _ => None,
    });
    if !context.stream {
        if let Some((_, error_type, message)) = stream_error {
            // Without a stream to break, the same failure is an HTTP status.
            let status = match context.format {
                WireFormat::Anthropic => anthropic_status(error_type),
                WireFormat::OpenAi => openai_status(error_type),
            };
            return error_plan(context, &ApiError::with_status(status, message), None);
        }
        let body = match context.format {
            WireFormat::Anthropic => anthropic::message_body(reply),
            WireFormat::OpenAi => openai::completion_body(reply, context.created),
        };
        return Plan::Whole {
            status: 200,
            headers: context.headers("application/json"),
            body,
            delay: delay.or(first_delay),
            cut: cut_after.is_some(),
        };
    }
    let mut events = match context.format {
        WireFormat::Anthropic => anthropic::stream_events(reply, context.style.chunk_chars),
        WireFormat::OpenAi => openai::stream_events(reply, context.created, context.style),
    };
    if let Some((after, error_type, message)) = stream_error {
        events.truncate(after);
        events.push(match context.format {
            WireFormat::Anthropic => anthropic::error_event(error_type, message),
            WireFormat::OpenAi => openai::error_event(error_type, message),
        });
    }
    if let Some(after) = faults.iter().find_map(|fault| match fault {
        Fault::InvalidJsonEvent(events) => Some(*events),
        _ => None,
    }) {
        // Never after the last event: a client stops reading there.
        let at = after.min(events.len().saturating_sub(1));
        if let Some(garbled) = events.get(at).map(|e| garble(e)) {
            events.insert(at, garbled);
        }
    }
    if let Some(after) = cut_after {
        events.truncate(after);
    }
    let mut headers = context.headers("text/event-stream; charset=utf-8");
    headers.push(("cache-control", "no-cache".to_string()));
    Plan::Stream {
        headers,
        events,
        delay,
        first_delay,
        cut: cut_after.is_some(),
    }
}

impl Plan {
    /// Sends the answer; returns the connection if it can serve another
    /// request. `close` is the client's wish (or ours) to end after this one.
    /// `watch`: told of each event of a stream as it goes out (the
    /// scenario's watcher, and the step this answers).
    pub(crate) async fn send(
        self,
        mut connection: Connection,
        close: bool,
        watch: Option<(&Streamed, usize)>,
    ) -> Option<Connection> {
        let keep = match self {
            Plan::Reset => {
                connection.reset();
                return None;
            }
            Plan::Whole {
                status,
                mut headers,
                body,
                delay,
                cut,
            } => {
                // Announce the close when we know we will cut, so pooling
                // clients do not reuse the connection on their own.
                let close = close || cut;
                headers.push(("content-length", body.len().to_string()));
                headers.push(("connection", connection_value(close)));
                if let Some(delay) = delay {
                    tokio::time::sleep(delay).await;
                }
                let sent_body = if cut {
                    &body[..body.len() / 2]
                } else {
                    &body[..]
                };
                let mut bytes = response_head(status, &headers);
                bytes.extend_from_slice(sent_body);
                connection.write_all(&bytes).await.ok()?;
                !close
            }
            Plan::Endless {
                status,
                mut headers,
                start,
                every,
            } => {
                headers.push(("transfer-encoding", "chunked".to_string()));
                headers.push(("connection", connection_value(true)));
                connection
                    .write_all(&response_head(status, &headers))
                    .await
                    .ok()?;
                connection.write_chunk(&start).await.ok()?;
                // Ends when a write fails: the client has gone.
                loop {
                    tokio::time::sleep(every).await;
                    connection.write_chunk(b" ").await.ok()?;
                }
            }
            Plan::Stream {
                mut headers,
                events,
                delay,
                first_delay,
                cut,
            } => {
                let close = close || cut;
                headers.push(("transfer-encoding", "chunked".to_string()));
                headers.push(("connection", connection_value(close)));
                connection
                    .write_all(&response_head(200, &headers))
                    .await
                    .ok()?;
                let sent = |n| {
                    if let Some((streamed, step)) = watch {
                        streamed.record(step, n, events.len());
                    }
                };
                sent(0);
                for (index, event) in events.iter().enumerate() {
                    let wait = if index == 0 { first_delay } else { delay };
                    if let Some(wait) = wait {
                        tokio::time::sleep(wait).await;
                    }
                    let bytes = event.as_bytes();
                    let (first, second) = bytes.split_at(split_point(bytes, index).unwrap_or(0));
                    connection.write_chunk(first).await.ok()?;
                    connection.write_chunk(second).await.ok()?;
                    sent(index + 1);
                }
                if cut {
                    return None;
                }
                connection.finish_chunks().await.ok()?;
                !close
            }
        };
        keep.then_some(connection)
    }
}

/// The event with each `data:` line's JSON cut in half: a proper prefix
/// of a JSON object is never JSON, so a client cannot read it by chance.
fn garble(event: &str) -> String {
    event
        .split_inclusive('\n')
        .map(|line| match line.strip_prefix("data: ") {
            Some(data) => {
                let data = data.trim_end_matches('\n');
                let mut half = data.len() / 2;
                while !data.is_char_boundary(half) {
                    half -= 1;
                }
                // `{` alone when there is no half to keep.
                let kept = if half == 0 { "{" } else { &data[..half] };
                format!("data: {kept}\n")
            }
            None => line.to_string(),
        })
        .collect()
}

fn connection_value(close: bool) -> String {
    if close { "close" } else { "keep-alive" }.to_string()
}
