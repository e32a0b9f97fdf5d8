//! A panic in one handler must not take the server (and the user's
//! unsaved work in other documents) down with it.

use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use tower_lsp_server::jsonrpc;

/// Runs a request handler, turning a panic into an internal-error response.
pub async fn request<T>(
    method: &'static str,
    fut: impl Future<Output = jsonrpc::Result<T>>,
) -> jsonrpc::Result<T> {
    match AssertUnwindSafe(fut).catch_unwind().await {
        Ok(result) => result,
        Err(panic) => {
            let message = panic_message(&*panic);
            tracing::error!(method, %message, "request handler panicked");
            Err(jsonrpc::Error {
                code: jsonrpc::ErrorCode::InternalError,
                message: format!("rein: internal error in {method}: {message}").into(),
                data: None,
            })
        }
    }
}

/// Runs a synchronous notification handler; returns `None` if it panicked.
pub fn notification<T>(method: &'static str, f: impl FnOnce() -> T) -> Option<T> {
    match std::panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => Some(value),
        Err(panic) => {
            tracing::error!(method, message = %panic_message(&*panic), "notification handler panicked");
            None
        }
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}
