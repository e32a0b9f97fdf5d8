//! Server→client requests, always spawned and always bounded in time.
//!
//! A handler that awaited a client request would hold one of the
//! transport's concurrency slots while the client's answer waits to be read
//! by the same transport: enough of those and the server deadlocks. So
//! handlers call [`spawn`] and carry on; the answer, if any, is handled by
//! the spawned task.

use std::future::Future;
use std::time::Duration;

use serde_json::Value;
use tokio::task::JoinHandle;
use tower::Service;
use tower_lsp_server::ls_types::notification::Cancel;
use tower_lsp_server::ls_types::{CancelParams, NumberOrString};
use tower_lsp_server::{Client, jsonrpc};

/// Sends a client request in the background. The task yields `None` (and
/// logs why) if the client errors or does not answer within `timeout`.
pub fn spawn<T, F>(what: &'static str, timeout: Duration, request: F) -> JoinHandle<Option<T>>
where
    F: Future<Output = jsonrpc::Result<T>> + Send + 'static,
    T: Send + 'static,
{
    tokio::spawn(async move {
        match tokio::time::timeout(timeout, request).await {
            Ok(Ok(value)) => Some(value),
            Ok(Err(error)) => {
                tracing::warn!(what, %error, "client request failed");
                None
            }
            Err(_) => {
                tracing::warn!(what, ?timeout, "client did not answer in time");
                None
            }
        }
    })
}

/// Why a [`withdrawable`] request got no usable answer.
#[derive(Debug)]
pub enum Unanswered {
    /// Not within the time given (the request was withdrawn).
    Timeout,
    /// The client answered with an error.
    Error(jsonrpc::Error),
    /// The connection is gone.
    Gone,
}

/// Sends a request and waits at most `timeout` for the answer, from a task
/// (never a handler: see the module doc). A request nobody waits for any
/// more — timed out, or the waiting task was cancelled and dropped this
/// future — is withdrawn with `$/cancelRequest`, so an editor that honours
/// it closes a prompt whose answer would no longer be used (an edit the
/// user accepted after the task had moved on would otherwise still land).
pub async fn withdrawable(
    client: &Client,
    method: &'static str,
    params: Value,
    timeout: Duration,
) -> Result<Value, Unanswered> {
    let id = client.next_request_id();
    let request = jsonrpc::Request::build(method)
        .id(id.clone())
        .params(params)
        .finish();
    let mut pending = Withdraw {
        client: Some(client.clone()),
        id: id.clone(),
    };
    let mut service = client.clone();
    let answer = tokio::time::timeout(timeout, service.call(request)).await;
    let response = match answer {
        Err(_) => {
            tracing::warn!(method, ?timeout, "client did not answer in time; withdrawn");
            return Err(Unanswered::Timeout);
        }
        Ok(result) => {
            pending.client = None;
            match result {
                Ok(Some(response)) => response,
                Ok(None) | Err(_) => return Err(Unanswered::Gone),
            }
        }
    };
    let (_, result) = response.into_parts();
    result.map_err(Unanswered::Error)
}

/// Sends `$/cancelRequest` for `id` when dropped while still armed.
struct Withdraw {
    client: Option<Client>,
    id: jsonrpc::Id,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        let Some(client) = self.client.take() else {
            return;
        };
        let id = match &self.id {
            jsonrpc::Id::Number(n) => NumberOrString::Number(*n as i32),
            jsonrpc::Id::String(s) => NumberOrString::String(s.clone()),
            jsonrpc::Id::Null => return,
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                client
                    .send_notification::<Cancel>(CancelParams { id })
                    .await;
            });
        }
    }
}
