//! The routes where local OpenAI-compatible servers say what they run a
//! model with, answered from a scenario's [`ServerInfo`]: llama.cpp's
//! `GET /props` and Ollama's `POST /api/show` (vLLM's `max_model_len` is
//! in the model list: `plan::models_plan`), shaped as those servers shape
//! them, then misbehaving as its [`InfoFault`] says.

use std::time::Duration;

use serde_json::{Value, json};

use super::plan::{Context, Plan};
use super::scenario::{InfoFault, ServerInfo};

/// A server-info route other than the model list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InfoRoute {
    /// llama.cpp: `GET /props`.
    Props,
    /// Ollama: `POST /api/show`.
    Show,
}

/// What Ollama reports its models' architecture as: the prefix of the
/// `model_info` keys a client must look up.
const OLLAMA_ARCHITECTURE: &str = "qwen2";

/// How often an endless body sends one more space.
const ENDLESS_EVERY: Duration = Duration::from_millis(100);

/// The answer of `route`, or `None` when the scenario gives this route
/// nothing to say (it is then answered 404, as by a server without it).
/// `body`: the request's JSON; `models`: what the server serves.
pub(crate) fn info_plan(
    context: &Context,
    info: &ServerInfo,
    route: InfoRoute,
    body: &Value,
    models: &[String],
) -> Option<Plan> {
    match route {
        InfoRoute::Props => {
            let body = match (&info.props_body, &info.llama_cpp_n_ctx) {
                (Some(body), _) => body.clone(),
                (None, Some(n_ctx)) => {
                    props_body(n_ctx, models.first().map_or("model", String::as_str))
                }
                (None, None) => return None,
            };
            Some(json_plan(context, 200, &body))
        }
        InfoRoute::Show => {
            if let Some(body) = &info.show_body {
                return Some(json_plan(context, 200, body));
            }
            if info.ollama_num_ctx.is_none() && info.ollama_context_length.is_none() {
                return None;
            }
            // Ollama's own checks, in its own error shape.
            let model = body
                .get("model")
                .or_else(|| body.get("name"))
                .and_then(Value::as_str);
            Some(match model {
                None => json_plan(context, 400, &json!({"error": "model is required"})),
                Some(model) if !models.iter().any(|m| m == model) => json_plan(
                    context,
                    404,
                    &json!({"error": format!("model '{model}' not found")}),
                ),
                Some(model) => json_plan(context, 200, &show_body(info, model)),
            })
        }
    }
}

/// `plan` as `fault` spoils it; `target` is the request's, for a redirect.
pub(crate) fn with_fault(plan: Plan, fault: Option<&InfoFault>, target: &str) -> Plan {
    let Some(fault) = fault else {
        return plan;
    };
    let Plan::Whole {
        status,
        mut headers,
        mut body,
        delay,
        cut,
    } = plan
    else {
        return plan;
    };
    let status = match fault {
        InfoFault::Status(status) => *status,
        InfoFault::RedirectTo(base) => {
            headers.push(("location", format!("{base}{target}")));
            307
        }
        InfoFault::PadToBytes(bytes) => {
            // Spaces after a JSON value leave it the same value.
            body.resize(body.len().max(*bytes), b' ');
            status
        }
        InfoFault::Endless => {
            body.pop();
            return Plan::Endless {
                status,
                headers,
                start: body,
                every: ENDLESS_EVERY,
            };
        }
    };
    Plan::Whole {
        status,
        headers,
        body,
        delay,
        cut,
    }
}

/// A JSON answer with `status`.
pub(crate) fn json_plan(context: &Context, status: u16, body: &Value) -> Plan {
    Plan::Whole {
        status,
        headers: vec![
            (
                "content-type",
                "application/json; charset=utf-8".to_string(),
            ),
            ("x-request-id", context.request_id.clone()),
        ],
        body: body.to_string().into_bytes(),
        delay: None,
        cut: false,
    }
}

/// As `llama-server -m models/<model>.gguf -c <n_ctx>` answers `/props`.
fn props_body(n_ctx: &Value, model: &str) -> Value {
    json!({
        "default_generation_settings": {
            "id": 0,
            "id_task": -1,
            "n_ctx": n_ctx,
            "speculative": false,
            "is_processing": false,
            "params": {"n_predict": -1, "temperature": 0.8, "top_k": 40, "top_p": 0.95},
        },
        "total_slots": 1,
        "model_path": format!("models/{model}.gguf"),
        "chat_template": "{% for message in messages %}{{ message.content }}{% endfor %}",
        "build_info": "b0000-rein-fake",
    })
}

/// As Ollama shows a model: `parameters` is Modelfile text (names padded
/// to 30 columns, as Ollama prints them), `model_info` flat keys prefixed
/// by the architecture.
fn show_body(info: &ServerInfo, model: &str) -> Value {
    let mut parameters = Vec::new();
    if let Some(num_ctx) = &info.ollama_num_ctx {
        parameters.push(format!("{:<30} {}", "num_ctx", plain(num_ctx)));
    }
    parameters.push(format!("{:<30} \"<|im_end|>\"", "stop"));
    let mut model_info = json!({
        "general.architecture": OLLAMA_ARCHITECTURE,
        "general.parameter_count": 7_615_616_512_u64,
        format!("{OLLAMA_ARCHITECTURE}.embedding_length"): 3584,
    });
    if let (Some(length), Some(model_info)) =
        (&info.ollama_context_length, model_info.as_object_mut())
    {
        model_info.insert(
            format!("{OLLAMA_ARCHITECTURE}.context_length"),
            length.clone(),
        );
    }
    let modelfile = std::iter::once(format!("FROM {model}"))
        .chain(parameters.iter().map(|p| format!("PARAMETER {p}")))
        .collect::<Vec<_>>()
        .join("\n");
    json!({
        "license": "",
        "modelfile": format!("# Modelfile generated by \"ollama show\"\n{modelfile}\n"),
        "parameters": parameters.join("\n"),
        "template": "{{ .Prompt }}",
        "details": {
            "parent_model": "",
            "format": "gguf",
            "family": OLLAMA_ARCHITECTURE,
            "families": [OLLAMA_ARCHITECTURE],
            "parameter_size": "7.6B",
            "quantization_level": "Q4_K_M",
        },
        "model_info": model_info,
        "capabilities": ["completion", "tools"],
        "modified_at": "2025-01-01T00:00:00Z",
    })
}

/// A value as it reads in Modelfile text: a string without its quotes.
fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
