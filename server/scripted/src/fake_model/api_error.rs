//! Errors the fake model answers with, in a provider-neutral shape; each wire
//! module renders them in its own error format.

use super::WireFormat;

/// An error response: HTTP status, message, and OpenAI's `param`/`code`
/// (Anthropic derives its error type from the status alone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ApiError {
    pub(crate) status: u16,
    pub(crate) message: String,
    pub(crate) param: Option<String>,
    pub(crate) code: Option<String>,
}

impl ApiError {
    /// A 400 about the request.
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self {
            status: 400,
            message: message.into(),
            param: None,
            code: None,
        }
    }

    /// A 400 that names the offending parameter (OpenAI's `param`).
    pub(crate) fn invalid_param(message: impl Into<String>, param: impl Into<String>) -> Self {
        Self {
            param: Some(param.into()),
            ..Self::invalid(message)
        }
    }

    /// A 401 about the API key.
    pub(crate) fn unauthorized(message: impl Into<String>, code: Option<&str>) -> Self {
        Self {
            status: 401,
            message: message.into(),
            param: None,
            code: code.map(str::to_string),
        }
    }

    /// Any status with this message.
    pub(crate) fn with_status(status: u16, message: impl Into<String>) -> Self {
        Self {
            status,
            ..Self::invalid(message)
        }
    }

    /// What the provider answers with `status` when the scenario asks for it
    /// (a `Fault::Status`), with its usual message unless one is given.
    pub(crate) fn for_status(
        format: WireFormat,
        status: u16,
        message: Option<String>,
        model: &str,
    ) -> Self {
        let (default_message, code) = match format {
            WireFormat::Anthropic => (anthropic_default_message(status).to_string(), None),
            WireFormat::OpenAi => openai_defaults(status, model),
        };
        Self {
            status,
            message: message.unwrap_or(default_message),
            param: None,
            code: code.map(str::to_string),
        }
    }
}

/// Anthropic's `error.type` for an HTTP status, per its errors page.
pub(crate) fn anthropic_error_type(status: u16) -> &'static str {
    match status {
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        409 => "conflict_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        504 => "timeout_error",
        529 => "overloaded_error",
        500..=599 => "api_error",
        _ => "invalid_request_error",
    }
}

/// The HTTP status an Anthropic error type stands for (for in-stream errors
/// replayed on a non-streaming request).
pub(crate) fn anthropic_status(error_type: &str) -> u16 {
    match error_type {
        "authentication_error" => 401,
        "billing_error" => 402,
        "permission_error" => 403,
        "not_found_error" => 404,
        "conflict_error" => 409,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "api_error" => 500,
        "timeout_error" => 504,
        "overloaded_error" => 529,
        "invalid_request_error" => 400,
        _ => 500,
    }
}

fn anthropic_default_message(status: u16) -> &'static str {
    match status {
        401 => "invalid x-api-key",
        402 => "Your credit balance is too low to access the Anthropic API.",
        403 => "Your API key does not have permission to use the specified resource.",
        404 => "Not found",
        409 => "Conflict",
        413 => "Request exceeds the maximum allowed number of bytes.",
        429 => "Number of request tokens has exceeded your per-minute rate limit.",
        504 => "Request timed out",
        529 => "Overloaded",
        500..=599 => "Internal server error",
        _ => "Invalid request",
    }
}

/// OpenAI's `error.type` for an HTTP status.
pub(crate) fn openai_error_type(status: u16) -> &'static str {
    match status {
        429 => "requests",
        500..=599 => "server_error",
        _ => "invalid_request_error",
    }
}

/// The HTTP status an OpenAI error type stands for.
pub(crate) fn openai_status(error_type: &str) -> u16 {
    match error_type {
        "invalid_request_error" => 400,
        "requests" | "tokens" | "insufficient_quota" => 429,
        _ => 500,
    }
}

fn openai_defaults(status: u16, model: &str) -> (String, Option<&'static str>) {
    match status {
        401 => (
            "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys."
                .into(),
            Some("invalid_api_key"),
        ),
        403 => (
            "Country, region, or territory not supported".into(),
            Some("unsupported_country_region_territory"),
        ),
        404 => (
            format!("The model `{model}` does not exist or you do not have access to it."),
            Some("model_not_found"),
        ),
        429 => (
            format!(
                "Rate limit reached for {model} on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s."
            ),
            Some("rate_limit_exceeded"),
        ),
        413 => ("Request too large.".into(), None),
        500..=599 => (
            "The server had an error while processing your request. Sorry about that!".into(),
            None,
        ),
        _ => ("Invalid request".into(), None),
    }
}
