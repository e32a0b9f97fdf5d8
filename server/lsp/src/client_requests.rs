//! Server→client requests, always spawned and always bounded in time.
//!
//! A handler that awaited a client request would hold one of the
//! transport's concurrency slots while the client's answer waits to be read
//! by the same transport: enough of those and the server deadlocks. So
//! handlers call [`spawn`] and carry on; the answer, if any, is handled by
//! the spawned task.

use std::future::Future;
use std::time::Duration;

use tokio::task::JoinHandle;
use tower_lsp_server::jsonrpc;

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
