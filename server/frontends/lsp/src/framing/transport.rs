//! What the transport accepts as a message body.
//!
//! tower-lsp-server's reader ends the session at the first body it cannot
//! decode, so the pump passes a body on only if the transport's decoder
//! (its `LanguageServerCodec`) will take it: UTF-8 text that serde_json
//! parses into the transport's `jsonrpc::Message`.

use serde::Deserialize;
use tower_lsp_server::jsonrpc;

use super::{MalformedFrame, malformed};

/// serde_json's parser gives up at this nesting depth (its recursion
/// limit, 128, counts the outer object): the deframer must stop below.
pub(super) const PARSER_MAX_DEPTH: usize = 127;

/// tower-lsp-server 0.23's `jsonrpc::Message`, which is private: the exact
/// type (and variant order) its decoder parses every frame into.
#[derive(Deserialize)]
#[serde(untagged)]
#[allow(dead_code, reason = "only parsed, to check what the transport accepts")]
enum Message {
    Response(jsonrpc::Response),
    Request(jsonrpc::Request),
}

/// `Ok` if the transport will decode `body`; else the error the transport
/// would have answered (and ended the session with).
pub(super) fn check(body: &[u8]) -> Result<(), MalformedFrame> {
    let text = std::str::from_utf8(body).map_err(|error| {
        malformed(
            jsonrpc::ErrorCode::ParseError,
            format!("Parse error: the message is not UTF-8 ({error})"),
        )
    })?;
    let Err(error) = serde_json::from_str::<Message>(text) else {
        return Ok(());
    };
    // The untagged enum's own error says nothing; a request's says which
    // field is wrong.
    let detail = match serde_json::from_str::<jsonrpc::Request>(text) {
        Err(request_error) => request_error.to_string(),
        Ok(_) => error.to_string(),
    };
    Err(if error.is_data() {
        malformed(
            jsonrpc::ErrorCode::InvalidRequest,
            format!(
                "Invalid request: not a JSON-RPC 2.0 request, notification or response ({detail})"
            ),
        )
    } else {
        malformed(
            jsonrpc::ErrorCode::ParseError,
            format!("Parse error: {detail}"),
        )
    })
}
