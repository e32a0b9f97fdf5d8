//! How scenarios look in JSON files: flat objects meant to be written by
//! hand. Each type here mirrors one in `scenario.rs`; the conversions check
//! what serde's derive cannot (exactly one kind of fault, no branch inside a
//! branch), and their messages gain serde_json's line and column.

use std::path::PathBuf;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

use serde_json::Value;

use super::scenario::{
    Block, Case, Fault, InfoFault, Reply, ReplyParts, ServerInfo, Step, StopReason, ToolCall, Usage,
};

/// A step or a reply. `branch`/`otherwise` are only accepted for a step.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReplyFile {
    #[serde(default, skip_serializing, rename = "comment")]
    _comment: IgnoredAny,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    thinking: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ToolCall>,
    /// The general form, for blocks in any order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    content: Vec<BlockFile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stop: Option<StopReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    usage: Option<Usage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fault: Option<Fault>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    faults: Vec<Fault>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    branch: Option<Vec<Case>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    otherwise: Option<Reply>,
}

/// One element of `content`: `{"thinking": "…"}`, `{"text": "…"}` or
/// `{"tool_call": {"name": …, "input": …}}`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum BlockFile {
    Thinking(String),
    Text(String),
    ToolCall(ToolCall),
}

/// Serde for the scenario types goes through their file forms. Written
/// here, next to those forms, so that `scenario.rs` never names them.
macro_rules! through_file_form {
    ($ty:ty, $file:ty) => {
        impl Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                <$file>::from(self.clone()).serialize(serializer)
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let file = <$file>::deserialize(deserializer)?;
                Self::try_from(file).map_err(serde::de::Error::custom)
            }
        }
    };
}

through_file_form!(Step, ReplyFile);
through_file_form!(Reply, ReplyFile);
through_file_form!(Fault, FaultFile);
through_file_form!(ServerInfo, ServerInfoFile);
through_file_form!(InfoFault, InfoFaultFile);

impl TryFrom<ReplyFile> for Step {
    type Error = String;

    fn try_from(file: ReplyFile) -> Result<Self, String> {
        let Some(cases) = file.branch else {
            return Reply::try_from(file).map(Step::Reply);
        };
        let Some(otherwise) = file.otherwise else {
            return Err("a `branch` needs an `otherwise` reply".into());
        };
        let has_reply_fields = file.thinking.is_some()
            || file.text.is_some()
            || !file.tool_calls.is_empty()
            || !file.content.is_empty()
            || file.stop.is_some()
            || file.usage.is_some()
            || file.fault.is_some()
            || !file.faults.is_empty();
        if has_reply_fields {
            return Err(
                "a step with `branch` only takes `branch` and `otherwise`; put the reply fields in the cases"
                    .into(),
            );
        }
        Ok(Step::Branch { cases, otherwise })
    }
}

impl TryFrom<ReplyFile> for Reply {
    type Error = String;

    fn try_from(file: ReplyFile) -> Result<Self, String> {
        if file.branch.is_some() || file.otherwise.is_some() {
            return Err(
                "`branch`/`otherwise` are only allowed for a step of `replies`, not inside a branch"
                    .into(),
            );
        }
        let shorthand =
            file.thinking.is_some() || file.text.is_some() || !file.tool_calls.is_empty();
        if shorthand && !file.content.is_empty() {
            return Err("use either `content` or `thinking`/`text`/`tool_calls`, not both".into());
        }
        let mut content: Vec<Block> = file.thinking.into_iter().map(Block::Thinking).collect();
        content.extend(file.text.map(Block::Text));
        content.extend(file.tool_calls.into_iter().map(Block::ToolCall));
        content.extend(file.content.into_iter().map(|block| match block {
            BlockFile::Thinking(text) => Block::Thinking(text),
            BlockFile::Text(text) => Block::Text(text),
            BlockFile::ToolCall(call) => Block::ToolCall(call),
        }));
        if let Some(call) = content.iter().find_map(|block| match block {
            Block::ToolCall(call) if !call.input.is_object() => Some(call),
            _ => None,
        }) {
            return Err(format!(
                "the input of tool call `{}` must be a JSON object",
                call.name
            ));
        }
        Ok(Reply {
            parts: ReplyParts {
                content,
                stop: file.stop,
                usage: file.usage,
                faults: file.fault.into_iter().chain(file.faults).collect(),
            },
        })
    }
}

impl From<Step> for ReplyFile {
    fn from(step: Step) -> Self {
        match step {
            Step::Reply(reply) => reply.into(),
            Step::Branch { cases, otherwise } => ReplyFile {
                branch: Some(cases),
                otherwise: Some(otherwise),
                ..ReplyFile::default()
            },
        }
    }
}

impl From<Reply> for ReplyFile {
    fn from(reply: Reply) -> Self {
        let reply = reply.parts;
        let mut file = ReplyFile {
            stop: reply.stop,
            usage: reply.usage,
            ..ReplyFile::default()
        };
        if reply.faults.len() == 1 {
            file.fault = reply.faults.into_iter().next();
        } else {
            file.faults = reply.faults;
        }
        if fits_shorthand(&reply.content) {
            for block in reply.content {
                match block {
                    Block::Thinking(text) => file.thinking = Some(text),
                    Block::Text(text) => file.text = Some(text),
                    Block::ToolCall(call) => file.tool_calls.push(call),
                }
            }
        } else {
            file.content = reply
                .content
                .into_iter()
                .map(|block| match block {
                    Block::Thinking(text) => BlockFile::Thinking(text),
                    Block::Text(text) => BlockFile::Text(text),
                    Block::ToolCall(call) => BlockFile::ToolCall(call),
                })
                .collect();
        }
        file
    }
}

/// Whether `thinking`/`text`/`tool_calls` can say it: at most one thinking
/// block, then at most one text block, then tool calls.
fn fits_shorthand(content: &[Block]) -> bool {
    let rank = |block: &Block| match block {
        Block::Thinking(_) => 0,
        Block::Text(_) => 1,
        Block::ToolCall(_) => 2,
    };
    content.windows(2).all(|pair| match (&pair[0], &pair[1]) {
        (Block::ToolCall(_), Block::ToolCall(_)) => true,
        (a, b) => rank(a) < rank(b),
    })
}

/// A fault: an object whose one "kind" key says what goes wrong.
///
/// `{"status": 429, "retry_after": 1, "message": "…"}`, `{"connection_reset": true}`,
/// `{"cut_after_events": 5}`, `{"invalid_json_event": 2}`, `{"malformed_tool_json": true}`, `{"delay_ms": 20}`,
/// `{"stream_error": "overloaded_error", "after_events": 3, "message": "Overloaded"}`.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FaultFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    retry_after: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    connection_reset: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cut_after_events: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    invalid_json_event: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    malformed_tool_json: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    delay_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    first_event_delay_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    wait_for_file: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stream_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    after_events: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

const FAULT_KINDS: &str = "`status`, `connection_reset`, `cut_after_events`, `invalid_json_event`, `malformed_tool_json`, `delay_ms`, `first_event_delay_ms`, `wait_for_file`, `stream_error`";

impl TryFrom<FaultFile> for Fault {
    type Error = String;

    fn try_from(file: FaultFile) -> Result<Self, String> {
        let kinds = [
            ("status", file.status.is_some()),
            ("connection_reset", file.connection_reset.is_some()),
            ("cut_after_events", file.cut_after_events.is_some()),
            ("invalid_json_event", file.invalid_json_event.is_some()),
            ("malformed_tool_json", file.malformed_tool_json.is_some()),
            ("delay_ms", file.delay_ms.is_some()),
            ("first_event_delay_ms", file.first_event_delay_ms.is_some()),
            ("wait_for_file", file.wait_for_file.is_some()),
            ("stream_error", file.stream_error.is_some()),
        ];
        let present: Vec<&str> = kinds
            .iter()
            .filter(|(_, present)| *present)
            .map(|(name, _)| *name)
            .collect();
        let [kind] = present.as_slice() else {
            return Err(format!(
                "a fault needs exactly one of {FAULT_KINDS}; found {}",
                if present.is_empty() {
                    "none".to_string()
                } else {
                    present.join(", ")
                }
            ));
        };
        if file.retry_after.is_some() && *kind != "status" {
            return Err("`retry_after` only goes with `status`".into());
        }
        if file.after_events.is_some() && *kind != "stream_error" {
            return Err("`after_events` only goes with `stream_error`".into());
        }
        if file.message.is_some() && !matches!(*kind, "status" | "stream_error") {
            return Err("`message` only goes with `status` or `stream_error`".into());
        }
        let fault = match *kind {
            "status" => Fault::Status {
                status: file.status.unwrap_or_default(),
                retry_after: file.retry_after,
                message: file.message,
            },
            "connection_reset" => flag(
                file.connection_reset,
                "connection_reset",
                Fault::ConnectionReset,
            )?,
            "cut_after_events" => Fault::CutAfterEvents(file.cut_after_events.unwrap_or_default()),
            "invalid_json_event" => {
                Fault::InvalidJsonEvent(file.invalid_json_event.unwrap_or_default())
            }
            "malformed_tool_json" => flag(
                file.malformed_tool_json,
                "malformed_tool_json",
                Fault::MalformedToolJson,
            )?,
            "delay_ms" => Fault::Slow {
                delay_ms: file.delay_ms.unwrap_or_default(),
            },
            "first_event_delay_ms" => Fault::SlowStart {
                delay_ms: file.first_event_delay_ms.unwrap_or_default(),
            },
            "wait_for_file" => Fault::WaitForFile(file.wait_for_file.unwrap_or_default()),
            _ => {
                let error_type = file.stream_error.unwrap_or_default();
                Fault::StreamError {
                    after_events: file.after_events.unwrap_or_default(),
                    message: file
                        .message
                        .unwrap_or_else(|| default_stream_error_message(&error_type)),
                    error_type,
                }
            }
        };
        Ok(fault)
    }
}

/// `true` selects the fault; `false` would be a confusing way to say nothing.
fn flag<T>(value: Option<bool>, name: &str, fault: T) -> Result<T, String> {
    match value {
        Some(true) => Ok(fault),
        _ => Err(format!(
            "`{name}` must be true (leave the fault out instead)"
        )),
    }
}

fn default_stream_error_message(error_type: &str) -> String {
    match error_type {
        "overloaded_error" => "Overloaded".into(),
        "api_error" | "server_error" => "Internal server error".into(),
        other => other.to_string(),
    }
}

impl From<Fault> for FaultFile {
    fn from(fault: Fault) -> Self {
        match fault {
            Fault::Status {
                status,
                retry_after,
                message,
            } => FaultFile {
                status: Some(status),
                retry_after,
                message,
                ..FaultFile::default()
            },
            Fault::ConnectionReset => FaultFile {
                connection_reset: Some(true),
                ..FaultFile::default()
            },
            Fault::CutAfterEvents(events) => FaultFile {
                cut_after_events: Some(events),
                ..FaultFile::default()
            },
            Fault::InvalidJsonEvent(events) => FaultFile {
                invalid_json_event: Some(events),
                ..FaultFile::default()
            },
            Fault::MalformedToolJson => FaultFile {
                malformed_tool_json: Some(true),
                ..FaultFile::default()
            },
            Fault::Slow { delay_ms } => FaultFile {
                delay_ms: Some(delay_ms),
                ..FaultFile::default()
            },
            Fault::SlowStart { delay_ms } => FaultFile {
                first_event_delay_ms: Some(delay_ms),
                ..FaultFile::default()
            },
            Fault::WaitForFile(path) => FaultFile {
                wait_for_file: Some(path),
                ..FaultFile::default()
            },
            Fault::StreamError {
                after_events,
                error_type,
                message,
            } => FaultFile {
                stream_error: Some(error_type),
                after_events: Some(after_events),
                message: Some(message),
                ..FaultFile::default()
            },
        }
    }
}

/// `server_info`: what the server says about itself, e.g.
/// `{"llama_cpp_n_ctx": 4096}`, `{"vllm_max_model_len": 8192}`,
/// `{"ollama_num_ctx": 8192, "ollama_context_length": 32768}`,
/// `{"props_body": <any JSON>, "fault": {"status": 500}}`. A `null`
/// value is the same as none.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServerInfoFile {
    #[serde(default, skip_serializing, rename = "comment")]
    _comment: IgnoredAny,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    llama_cpp_n_ctx: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    vllm_max_model_len: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ollama_num_ctx: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ollama_context_length: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    props_body: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    models_body: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    show_body: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fault: Option<InfoFault>,
}

impl TryFrom<ServerInfoFile> for ServerInfo {
    type Error = String;

    fn try_from(file: ServerInfoFile) -> Result<Self, String> {
        // A raw body replaces the answer the fields would shape: both at
        // once would leave one silently unused.
        let clashes = [
            (
                "llama_cpp_n_ctx",
                "props_body",
                file.llama_cpp_n_ctx.is_some() && file.props_body.is_some(),
            ),
            (
                "vllm_max_model_len",
                "models_body",
                file.vllm_max_model_len.is_some() && file.models_body.is_some(),
            ),
            (
                "ollama_num_ctx",
                "show_body",
                file.ollama_num_ctx.is_some() && file.show_body.is_some(),
            ),
            (
                "ollama_context_length",
                "show_body",
                file.ollama_context_length.is_some() && file.show_body.is_some(),
            ),
        ];
        if let Some((field, body, _)) = clashes.iter().find(|(_, _, both)| *both) {
            return Err(format!(
                "use either `{field}` or `{body}` (the whole answer), not both"
            ));
        }
        Ok(ServerInfo {
            llama_cpp_n_ctx: file.llama_cpp_n_ctx,
            vllm_max_model_len: file.vllm_max_model_len,
            ollama_num_ctx: file.ollama_num_ctx,
            ollama_context_length: file.ollama_context_length,
            props_body: file.props_body,
            models_body: file.models_body,
            show_body: file.show_body,
            fault: file.fault,
        })
    }
}

impl From<ServerInfo> for ServerInfoFile {
    fn from(info: ServerInfo) -> Self {
        ServerInfoFile {
            _comment: IgnoredAny,
            llama_cpp_n_ctx: info.llama_cpp_n_ctx,
            vllm_max_model_len: info.vllm_max_model_len,
            ollama_num_ctx: info.ollama_num_ctx,
            ollama_context_length: info.ollama_context_length,
            props_body: info.props_body,
            models_body: info.models_body,
            show_body: info.show_body,
            fault: info.fault,
        }
    }
}

/// A server-info fault: one kind key, as for a reply's fault.
/// `{"status": 500}`, `{"redirect_to": "http://127.0.0.1:PORT"}`,
/// `{"pad_to_bytes": 5000000}`, `{"endless": true}`.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct InfoFaultFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    redirect_to: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pad_to_bytes: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    endless: Option<bool>,
}

const INFO_FAULT_KINDS: &str = "`status`, `redirect_to`, `pad_to_bytes`, `endless`";

impl TryFrom<InfoFaultFile> for InfoFault {
    type Error = String;

    fn try_from(file: InfoFaultFile) -> Result<Self, String> {
        let present: Vec<&str> = [
            ("status", file.status.is_some()),
            ("redirect_to", file.redirect_to.is_some()),
            ("pad_to_bytes", file.pad_to_bytes.is_some()),
            ("endless", file.endless.is_some()),
        ]
        .iter()
        .filter(|(_, present)| *present)
        .map(|(name, _)| *name)
        .collect();
        if present.len() != 1 {
            return Err(format!(
                "a server_info fault needs exactly one of {INFO_FAULT_KINDS}; found {}",
                if present.is_empty() {
                    "none".to_string()
                } else {
                    present.join(", ")
                }
            ));
        }
        match file {
            // A 1xx is not a final answer; beyond 599 is not HTTP.
            InfoFaultFile {
                status: Some(status),
                ..
            } if !(200..=599).contains(&status) => {
                Err(format!("`status` must be 200 to 599, got {status}"))
            }
            InfoFaultFile {
                status: Some(status),
                ..
            } => Ok(InfoFault::Status(status)),
            InfoFaultFile {
                redirect_to: Some(base),
                ..
            } if base.starts_with("http://") || base.starts_with("https://") => {
                Ok(InfoFault::RedirectTo(base.trim_end_matches('/').to_owned()))
            }
            InfoFaultFile {
                redirect_to: Some(base),
                ..
            } => Err(format!(
                "`redirect_to` must be an http(s) URL, got {base:?}"
            )),
            InfoFaultFile {
                pad_to_bytes: Some(bytes),
                ..
            } => Ok(InfoFault::PadToBytes(bytes)),
            InfoFaultFile { endless, .. } => flag(endless, "endless", InfoFault::Endless),
        }
    }
}

impl From<InfoFault> for InfoFaultFile {
    fn from(fault: InfoFault) -> Self {
        match fault {
            InfoFault::Status(status) => InfoFaultFile {
                status: Some(status),
                ..InfoFaultFile::default()
            },
            InfoFault::RedirectTo(base) => InfoFaultFile {
                redirect_to: Some(base),
                ..InfoFaultFile::default()
            },
            InfoFault::PadToBytes(bytes) => InfoFaultFile {
                pad_to_bytes: Some(bytes),
                ..InfoFaultFile::default()
            },
            InfoFault::Endless => InfoFaultFile {
                endless: Some(true),
                ..InfoFaultFile::default()
            },
        }
    }
}
