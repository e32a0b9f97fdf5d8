//! What a wire format (Anthropic's, OpenAI's) supplies to the HTTP driver
//! in `client.rs`: how to phrase a request and read the answer. Adapters
//! implement these; they never drive a call themselves.

use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::error::ModelError;
use crate::sse::SseEvent;
use crate::types::{ModelEvent, ModelRequest};

/// A wire format: how to phrase a request and read the answer.
pub(crate) trait Wire: Send + Sync + 'static {
    fn provider(&self) -> &'static str;
    fn url(&self) -> String;
    /// Where the provider lists its models (a free `GET`).
    fn models_url(&self) -> String;
    fn headers(&self) -> Result<HeaderMap, ModelError>;
    fn body(&self, request: &ModelRequest, stream: bool) -> Value;
    fn decoder(&self) -> Box<dyn Decoder>;
    /// A whole non-streamed reply as events.
    fn parse_reply(&self, body: &[u8]) -> Result<Vec<ModelEvent>, ModelError>;
    /// A non-2xx response as an error.
    fn error(&self, status: u16, headers: &HeaderMap, body: &[u8], model: &str) -> ModelError;
    /// See [`crate::ModelClient::constrains_calls`].
    fn constrains_calls(&self) -> bool;
}

/// Turns SSE events into model events, statefully.
pub(crate) trait Decoder: Send {
    fn event(&mut self, event: SseEvent) -> Result<Vec<ModelEvent>, ModelError>;
    /// The stream ended: the closing events, or why the reply is incomplete.
    fn end(&mut self) -> Result<Vec<ModelEvent>, ModelError>;
    /// The reply is complete; nothing more is expected.
    fn is_done(&self) -> bool;
}
