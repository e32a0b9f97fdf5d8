//! Streamable HTTP for MCP servers, on Rein's one HTTP stack (reqwest
//! 0.12): rmcp's transport speaks the protocol (sessions, streams,
//! retries), [`HttpClient`] carries its requests. rmcp's own client needs
//! reqwest 0.13, a second stack we do not want.
//!
//! What a server sends back is bounded before it is parsed: a JSON body
//! to [`StreamableHttpResponseLimits::max_json_response_size`], an SSE
//! event to its `max_sse_event_size`, an error page to its
//! `max_error_response_size` (rmcp's defaults: 16 MiB, 16 MiB, 64 KiB).
//! Redirects are not followed: a server's URL is the one configured, and
//! the headers (tokens) go nowhere else.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, WWW_AUTHENTICATE};
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorData, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, SseError, StreamableHttpClient,
    StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::{Sse, SseStream};

const SESSION_ID: &str = "mcp-session-id";
const LAST_EVENT_ID: &str = "last-event-id";
const PROTOCOL_VERSION: &str = "mcp-protocol-version";
const JSON: &str = "application/json";
const EVENT_STREAM: &str = "text/event-stream";
/// A `Retry-After` value longer than this is dropped (rmcp keeps 128 bytes).
const RETRY_AFTER_KEPT: usize = 128;
/// How long a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

type Failure = StreamableHttpError<HttpError>;

/// A request that failed in the HTTP client, with its causes (reqwest's
/// own text leaves out why: "connection refused", a TLS failure…).
#[derive(Debug)]
pub struct HttpError(reqwest::Error);

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = std::error::Error::source(&self.0);
        while let Some(error) = cause {
            write!(f, ": {error}")?;
            cause = error.source();
        }
        Ok(())
    }
}

impl std::error::Error for HttpError {}

impl HttpError {
    /// The connection could not be made: the request never left.
    pub(crate) fn is_connect(&self) -> bool {
        self.0.is_connect()
    }
}

fn client_error(error: reqwest::Error) -> Failure {
    StreamableHttpError::Client(HttpError(error))
}
type Events = BoxStream<'static, Result<Sse, SseError>>;

/// rmcp's [`StreamableHttpClient`] on a reqwest 0.12 client.
#[derive(Clone, Debug)]
pub struct HttpClient {
    client: reqwest::Client,
}

impl HttpClient {
    /// A client that follows no redirect and gives up opening a connection
    /// after [`CONNECT_TIMEOUT`] (a response may take as long as it takes:
    /// the caller's timeouts bound the calls).
    pub fn new() -> Result<HttpClient, reqwest::Error> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(CONNECT_TIMEOUT)
            .build()?;
        Ok(HttpClient { client })
    }

    /// A request with the headers every one carries: what it accepts, the
    /// session, the token, then the configured headers (none of which may
    /// take the place of the protocol's own).
    fn request(
        &self,
        method: Method,
        uri: &str,
        accept: &'static str,
        session: Option<&str>,
        token: Option<String>,
        custom: HashMap<HeaderName, HeaderValue>,
    ) -> Result<RequestBuilder, Failure> {
        let mut request = self
            .client
            .request(method, uri)
            .header(ACCEPT, HeaderValue::from_static(accept));
        if let Some(session) = session {
            request = request.header(SESSION_ID, session);
        }
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        for (name, value) in custom {
            let reserved = name == ACCEPT || name == SESSION_ID || name == LAST_EVENT_ID;
            // The protocol version is set by rmcp's worker through here.
            if reserved && name != PROTOCOL_VERSION {
                return Err(StreamableHttpError::ReservedHeaderConflict(
                    name.as_str().to_owned(),
                ));
            }
            request = request.header(name, value);
        }
        Ok(request)
    }
}

async fn send(request: RequestBuilder) -> Result<Response, Failure> {
    request.send().await.map_err(client_error)
}

/// Whether a `Content-Type` value names `expected` (case and parameters
/// aside).
fn media_type_is(value: Option<&HeaderValue>, expected: &str) -> bool {
    value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case(expected))
}

/// 401 and 403 with a challenge: the server wants (other) credentials.
fn auth_failure(response: &Response) -> Option<Failure> {
    let status = response.status();
    if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
        return None;
    }
    let challenge = response.headers().get(WWW_AUTHENTICATE)?;
    let Ok(challenge) = challenge.to_str() else {
        return Some(StreamableHttpError::UnexpectedServerResponse(
            "the WWW-Authenticate header is not text".into(),
        ));
    };
    let challenge = challenge.to_owned();
    Some(if status == StatusCode::UNAUTHORIZED {
        StreamableHttpError::AuthRequired(AuthRequiredError::new(challenge))
    } else {
        let scope = scope_of(&challenge);
        StreamableHttpError::InsufficientScope(InsufficientScopeError::new(challenge, scope))
    })
}

/// The `scope="…"` parameter of a challenge.
fn scope_of(challenge: &str) -> Option<String> {
    let at = challenge.find("scope=")?;
    let rest = &challenge[at + "scope=".len()..];
    let value = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next()?,
        None => rest.split([',', ' ']).next()?,
    };
    (!value.is_empty()).then(|| value.to_owned())
}

/// 429 and 5xx: the status (and when to retry), nothing of the body.
fn status_failure(status: StatusCode, headers: &HeaderMap) -> Option<HttpStatusError> {
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    let retry_after = headers
        .get(reqwest::header::RETRY_AFTER)
        .filter(|v| v.len() <= RETRY_AFTER_KEPT)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    Some(HttpStatusError::new(status.as_u16(), retry_after))
}

/// The whole body, refused past `limit` bytes (a declared length past it
/// is refused before reading).
async fn read_whole(mut response: Response, limit: usize) -> Result<Vec<u8>, Failure> {
    let too_large = || StreamableHttpError::ResponseBodyTooLarge { max_size: limit };
    if response
        .content_length()
        .is_some_and(|length| length > limit as u64)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(client_error)? {
        if chunk.len() > limit - body.len() {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// At most the first `limit` bytes of the body, as text (for a message).
async fn read_prefix(mut response: Response, limit: usize) -> String {
    let mut body = Vec::new();
    while body.len() < limit {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let take = chunk.len().min(limit - body.len());
                body.extend_from_slice(&chunk[..take]);
            }
            Ok(None) => break,
            Err(_) => {
                body.extend_from_slice(b" <the rest could not be read>");
                break;
            }
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// Why an SSE body stopped.
#[derive(Debug, thiserror::Error)]
enum EventsError {
    #[error("an SSE event from the server exceeded the maximum size of {0} bytes")]
    TooLarge(usize),
    #[error("reading the SSE stream: {0}")]
    Read(HttpError),
}

/// Counts the bytes of the SSE event being received: an event ends at an
/// empty line (`\n`, `\r` or `\r\n` ending it).
struct EventSize {
    limit: usize,
    event: usize,
    line: usize,
    after_cr: bool,
}

impl EventSize {
    fn new(limit: usize) -> EventSize {
        EventSize {
            limit,
            event: 0,
            line: 0,
            after_cr: false,
        }
    }

    /// Takes `chunk` into account; `false` once the event is too large.
    fn take(&mut self, chunk: &[u8]) -> bool {
        for &byte in chunk {
            let after_cr = std::mem::replace(&mut self.after_cr, byte == b'\r');
            match byte {
                b'\n' if after_cr => continue,
                b'\n' | b'\r' => {
                    if self.line == 0 {
                        self.event = 0;
                        continue;
                    }
                    self.line = 0;
                }
                _ => self.line += 1,
            }
            self.event += 1;
            if self.event > self.limit {
                return false;
            }
        }
        true
    }
}

/// The body's events, each bounded to `limit` bytes: past it, an error
/// and the end of the stream.
fn events(
    body: impl Stream<Item = Result<Bytes, reqwest::Error>> + Send + 'static,
    limit: usize,
) -> Events {
    let mut size = EventSize::new(limit);
    let mut ended = false;
    let bounded = body.scan((), move |(), item| {
        let out = if ended {
            None
        } else {
            Some(match item {
                Ok(chunk) if size.take(&chunk) => Ok(chunk),
                Ok(_) => {
                    ended = true;
                    Err(EventsError::TooLarge(limit))
                }
                Err(error) => {
                    ended = true;
                    Err(EventsError::Read(HttpError(error)))
                }
            })
        };
        std::future::ready(out)
    });
    SseStream::from_bytes_stream(bounded).boxed()
}

/// A `server/discover` a legacy server rejected (4xx, no session yet): the
/// rejection as the request's JSON-RPC error, so rmcp falls back to
/// `initialize`.
fn discover_rejected(
    message: &ClientJsonRpcMessage,
    session: bool,
    status: StatusCode,
    body: &str,
) -> Option<StreamableHttpPostResponse> {
    if session
        || !status.is_client_error()
        || status == StatusCode::UNAUTHORIZED
        || status == StatusCode::FORBIDDEN
    {
        return None;
    }
    let ClientJsonRpcMessage::Request(request) = message else {
        return None;
    };
    if !matches!(request.request, ClientRequest::DiscoverRequest(_)) {
        return None;
    }
    let error = match serde_json::from_str::<ServerJsonRpcMessage>(body) {
        Ok(ServerJsonRpcMessage::Error(error)) => error.error,
        _ => ErrorData::invalid_request(
            format!("server/discover rejected with HTTP {status}: {body}"),
            None,
        ),
    };
    Some(StreamableHttpPostResponse::Json(
        ServerJsonRpcMessage::error(error, Some(request.id.clone())),
        None,
    ))
}

impl StreamableHttpClient for HttpClient {
    type Error = HttpError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        let has_session = session_id.is_some();
        let request = self
            .request(
                Method::POST,
                &uri,
                "application/json, text/event-stream",
                session_id.as_deref(),
                auth_header,
                custom_headers,
            )?
            .json(&message);
        let response = send(request).await?;
        if let Some(failure) = auth_failure(&response) {
            return Err(failure);
        }
        let status = response.status();
        if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && has_session {
            return Err(StreamableHttpError::SessionExpired);
        }
        let content_type = response.headers().get(CONTENT_TYPE).cloned();
        let is_json = media_type_is(content_type.as_ref(), JSON);
        let session = response
            .headers()
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        // Nothing is awaited in return for a notification or a reply.
        let no_reply_awaited = !matches!(message, ClientJsonRpcMessage::Request(_));

        if !status.is_success() {
            let status_error = status_failure(status, response.headers());
            if status == StatusCode::TOO_MANY_REQUESTS {
                return Err(status_error.map_or_else(
                    || StreamableHttpError::UnexpectedServerResponse("HTTP 429".into()),
                    Into::into,
                ));
            }
            let body = if is_json {
                // A JSON-RPC error is the server's answer: passed on whole.
                match read_whole(response, limits.max_json_response_size).await {
                    Ok(body) => {
                        if let Ok(error @ ServerJsonRpcMessage::Error(_)) =
                            serde_json::from_slice::<ServerJsonRpcMessage>(&body)
                        {
                            if let Some(answer) = discover_rejected(
                                &message,
                                has_session,
                                status,
                                &String::from_utf8_lossy(&body),
                            ) {
                                return Ok(answer);
                            }
                            return Ok(StreamableHttpPostResponse::Json(error, session));
                        }
                        let cut = body.len().min(limits.max_error_response_size);
                        String::from_utf8_lossy(&body[..cut]).into_owned()
                    }
                    Err(error) => return Err(status_error.map_or(error, Into::into)),
                }
            } else if let Some(error) = status_error {
                return Err(error.into());
            } else {
                read_prefix(response, limits.max_error_response_size).await
            };
            if let Some(answer) = discover_rejected(&message, has_session, status, &body) {
                return Ok(answer);
            }
            if let Some(error) = status_error {
                return Err(error.into());
            }
            let body = body.trim();
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                if body.is_empty() {
                    format!("HTTP {status}")
                } else {
                    format!("HTTP {status}: {body}")
                },
            )));
        }

        if no_reply_awaited && response.content_length() == Some(0) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if media_type_is(content_type.as_ref(), EVENT_STREAM) {
            let stream = events(response.bytes_stream(), limits.max_sse_event_size);
            return Ok(StreamableHttpPostResponse::Sse(stream, session));
        }
        if is_json {
            let body = read_whole(response, limits.max_json_response_size).await?;
            return match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                Ok(answer) => Ok(StreamableHttpPostResponse::Json(answer, session)),
                Err(_) if no_reply_awaited => Ok(StreamableHttpPostResponse::Accepted),
                Err(error) => {
                    let cut = body.len().min(256);
                    Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                        format!(
                            "the server's JSON is no JSON-RPC message ({error}): {}",
                            String::from_utf8_lossy(&body[..cut])
                        ),
                    )))
                }
            };
        }
        if no_reply_awaited {
            // Some servers answer a notification with 200 and anything.
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        Err(StreamableHttpError::UnexpectedContentType(
            content_type.map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
        ))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Failure> {
        let request = self.request(
            Method::DELETE,
            &uri,
            "application/json, text/event-stream",
            Some(&session_id),
            auth_header,
            custom_headers,
        )?;
        let response = send(request).await?;
        let status = response.status();
        // 405: the server does not let clients end sessions; nothing to do.
        if status.is_success() || status == StatusCode::METHOD_NOT_ALLOWED {
            return Ok(());
        }
        if let Some(failure) = auth_failure(&response) {
            return Err(failure);
        }
        Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
            format!("ending the session: HTTP {status}"),
        )))
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Events, Failure> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default().max_sse_event_size,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<Events, Failure> {
        let mut request = self.request(
            Method::GET,
            &uri,
            EVENT_STREAM,
            session_id.as_deref(),
            auth_header,
            custom_headers,
        )?;
        if let Some(last) = last_event_id {
            request = request.header(LAST_EVENT_ID, last);
        }
        let response = send(request).await?;
        let status = response.status();
        // 405: the server offers no stream of its own (allowed by the spec).
        if status == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if let Some(failure) = auth_failure(&response) {
            return Err(failure);
        }
        if let Some(error) = status_failure(status, response.headers()) {
            return Err(error.into());
        }
        if !status.is_success() {
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!("opening the event stream: HTTP {status}"),
            )));
        }
        let content_type = response.headers().get(CONTENT_TYPE);
        if !media_type_is(content_type, EVENT_STREAM) {
            return Err(StreamableHttpError::UnexpectedContentType(
                content_type.map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
            ));
        }
        Ok(events(response.bytes_stream(), max_sse_event_size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_counted_up_to_its_empty_line() {
        let mut size = EventSize::new(12);
        assert!(size.take(b"data: 1234\n\n"));
        assert!(size.take(b"data: 12\r\n\r\ndata: 1"));
        assert!(size.take(b"234\r"));
        assert!(size.take(b"\n\r\n"));
        assert!(!size.take(b"data: 12345678"));
        let mut split = EventSize::new(12);
        assert!(split.take(b"data: 1\n"));
        assert!(!split.take(b"data: 2\n"));
    }

    #[test]
    fn media_types_ignore_case_and_parameters() {
        let value = HeaderValue::from_static("Application/JSON; charset=utf-8");
        assert!(media_type_is(Some(&value), JSON));
        assert!(!media_type_is(Some(&value), EVENT_STREAM));
        assert!(!media_type_is(None, JSON));
    }

    #[test]
    fn a_challenge_names_its_scope() {
        assert_eq!(
            scope_of(r#"Bearer error="insufficient_scope", scope="files:read""#).as_deref(),
            Some("files:read")
        );
        assert_eq!(scope_of("Bearer scope=a, realm=x").as_deref(), Some("a"));
        assert_eq!(scope_of("Bearer realm=x"), None);
    }
}
