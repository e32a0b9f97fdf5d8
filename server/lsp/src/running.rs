//! The tasks a session runs, by id: what cancels, answers and shuts them
//! down. Only the table; starting and running a task is `tasks.rs` (which
//! needs the session that holds this table).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use rein_core::cancel::CancelReason;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// A task cancelled because the editor shut the server down says so: the
/// user may not have meant to stop it.
const SHUTDOWN_REASON: &str =
    "cancelled: the editor shut the language server down while the task ran";

/// See `Tasks::shutdown`.
const FLUSH_BEFORE_SHUTDOWN_ANSWER: Duration = Duration::from_millis(100);

#[derive(Debug, Default)]
pub struct Tasks {
    running: Mutex<HashMap<String, Running>>,
}

#[derive(Debug)]
struct Running {
    cancel: CancellationToken,
    /// Said before `cancel` fires when the user is not the one cancelling.
    reason: CancelReason,
    token: String,
    answer: Option<oneshot::Sender<String>>,
    handle: Option<JoinHandle<()>>,
    /// Its final status is out; it is only cleaning up.
    ended: bool,
}

impl Tasks {
    /// A task just started.
    pub fn register(
        &self,
        id: &str,
        cancel: CancellationToken,
        reason: CancelReason,
        token: String,
    ) {
        if let Ok(mut running) = self.running.lock() {
            running.insert(
                id.to_owned(),
                Running {
                    cancel,
                    reason,
                    token,
                    answer: None,
                    handle: None,
                    ended: false,
                },
            );
        }
    }

    /// The background task running it (what `shutdown` waits for).
    pub fn set_handle(&self, id: &str, handle: JoinHandle<()>) {
        if let Ok(mut running) = self.running.lock()
            && let Some(r) = running.get_mut(id)
        {
            r.handle = Some(handle);
        }
    }

    /// It is over, cleaned up too.
    pub fn remove(&self, id: &str) {
        if let Ok(mut running) = self.running.lock() {
            running.remove(id);
        }
    }

    /// Whether this session is running the task.
    pub fn is_running(&self, id: &str) -> bool {
        self.running
            .lock()
            .map(|r| r.get(id).is_some_and(|t| !t.ended))
            .unwrap_or(false)
    }

    /// The task's final status is out: from now on it cannot be cancelled
    /// or answered, though it may still be cleaning up.
    pub fn mark_ended(&self, id: &str) {
        if let Ok(mut running) = self.running.lock()
            && let Some(task) = running.get_mut(id)
        {
            task.ended = true;
            task.answer = None;
        }
    }

    /// Cancels a running task; `false` if there is none with that id.
    pub fn cancel(&self, id: &str) -> bool {
        self.running
            .lock()
            .ok()
            .and_then(|r| r.get(id).filter(|t| !t.ended).map(|t| t.cancel.cancel()))
            .is_some()
    }

    /// Cancels the task a progress token belongs to.
    pub fn cancel_by_token(&self, token: &str) -> bool {
        self.running
            .lock()
            .ok()
            .and_then(|r| {
                r.values()
                    .find(|t| t.token == token && !t.ended)
                    .map(|t| t.cancel.cancel())
            })
            .is_some()
    }

    /// Delivers the user's answer to a task waiting for one.
    pub fn answer(&self, id: &str, text: String) -> Result<(), String> {
        let sender = self
            .running
            .lock()
            .ok()
            .and_then(|mut r| r.get_mut(id).filter(|t| !t.ended).map(|t| t.answer.take()))
            .ok_or_else(|| format!("there is no running task {id}"))?
            .ok_or_else(|| format!("task {id} is not waiting for an answer"))?;
        sender
            .send(text)
            .map_err(|_| format!("task {id} stopped waiting for an answer"))
    }

    pub fn wait_for_answer(&self, id: &str) -> Option<oneshot::Receiver<String>> {
        let (tx, rx) = oneshot::channel();
        let mut running = self.running.lock().ok()?;
        running.get_mut(id)?.answer = Some(tx);
        Some(rx)
    }

    /// Cancels every task and waits (briefly) for them to wind down, so
    /// their histories end consistently.
    pub async fn shutdown(&self) {
        let handles: Vec<JoinHandle<()>> = match self.running.lock() {
            Ok(mut running) => running
                .values_mut()
                .filter_map(|t| {
                    t.reason.set(SHUTDOWN_REASON);
                    t.cancel.cancel();
                    t.handle.take()
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        let waited = !handles.is_empty();
        for handle in handles {
            let _ = tokio::time::timeout(Duration::from_secs(5), handle).await;
        }
        if waited {
            // The tasks' final statuses are queued for the client, but
            // tower-lsp-server writes its notifications and its responses
            // from two streams it picks between at random when both are
            // ready: without a moment for the writer, the `shutdown` answer
            // can overtake them, and an editor that exits at once would
            // never hear how its tasks ended.
            tokio::time::sleep(FLUSH_BEFORE_SHUTDOWN_ANSWER).await;
        }
    }

    pub fn running_count(&self) -> usize {
        self.running
            .lock()
            .map(|r| r.values().filter(|t| !t.ended).count())
            .unwrap_or(0)
    }
}
