//! The tasks a front end is running, by id: what cancels them, answers
//! their questions and shuts them down. Only the table: a front end
//! registers each task it starts (with its own tag for it: an LSP progress
//! token, an ACP session id) and removes it when it is over. ACP registers
//! a prompt under its session's id before the prompt's task has one (one
//! prompt at a time per session: [`RunningTasks::register_unless_tagged`]).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use crate::cancel::CancelReason;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How long `shutdown` waits for each task to wind down.
const WIND_DOWN: Duration = Duration::from_secs(5);

#[derive(Debug, Default)]
pub struct RunningTasks {
    running: Mutex<HashMap<String, Running>>,
}

#[derive(Debug)]
struct Running {
    cancel: CancellationToken,
    /// Said before `cancel` fires when the user is not the one cancelling.
    reason: CancelReason,
    /// The front end's own name for the task.
    tag: String,
    answer: Option<oneshot::Sender<String>>,
    handle: Option<JoinHandle<()>>,
    /// Its final status is out; it is only cleaning up.
    ended: bool,
}

impl RunningTasks {
    /// A task just started.
    pub fn register(&self, id: &str, cancel: CancellationToken, reason: CancelReason, tag: String) {
        if let Ok(mut running) = self.running.lock() {
            running.insert(
                id.to_owned(),
                Running {
                    cancel,
                    reason,
                    tag,
                    answer: None,
                    handle: None,
                    ended: false,
                },
            );
        }
    }

    /// Registers like [`register`](Self::register) unless a task tagged
    /// `tag` is running; whether it did. One check and insert, so two
    /// starts at once cannot both win.
    pub fn register_unless_tagged(
        &self,
        id: &str,
        cancel: CancellationToken,
        reason: CancelReason,
        tag: String,
    ) -> bool {
        let Ok(mut running) = self.running.lock() else {
            return false;
        };
        if running.values().any(|t| t.tag == tag && !t.ended) || running.contains_key(id) {
            return false;
        }
        running.insert(
            id.to_owned(),
            Running {
                cancel,
                reason,
                tag,
                answer: None,
                handle: None,
                ended: false,
            },
        );
        true
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

    /// Cancels the task the front end tagged `tag`.
    pub fn cancel_by_tag(&self, tag: &str) -> bool {
        self.running
            .lock()
            .ok()
            .and_then(|r| {
                r.values()
                    .find(|t| t.tag == tag && !t.ended)
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

    /// Cancels every task, saying `reason` (the user may not have meant to
    /// stop them), and waits (briefly) for them to wind down, so their
    /// histories end consistently. Whether there was any to wait for.
    pub async fn shutdown(&self, reason: &str) -> bool {
        let handles: Vec<JoinHandle<()>> = match self.running.lock() {
            Ok(mut running) => running
                .values_mut()
                .filter_map(|t| {
                    t.reason.set(reason);
                    t.cancel.cancel();
                    t.handle.take()
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        let waited = !handles.is_empty();
        for handle in handles {
            let _ = tokio::time::timeout(WIND_DOWN, handle).await;
        }
        waited
    }

    pub fn running_count(&self) -> usize {
        self.running
            .lock()
            .map(|r| r.values().filter(|t| !t.ended).count())
            .unwrap_or(0)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn table_with(id: &str, tag: &str) -> (RunningTasks, CancellationToken, CancelReason) {
        let tasks = RunningTasks::default();
        let (cancel, reason) = (CancellationToken::new(), CancelReason::default());
        tasks.register(id, cancel.clone(), reason.clone(), tag.into());
        (tasks, cancel, reason)
    }

    #[tokio::test]
    async fn an_answer_reaches_only_a_task_that_waits_for_one() {
        let (tasks, _, _) = table_with("t-1", "tag-1");
        assert_eq!(
            tasks.answer("t-1", "yes".into()),
            Err("task t-1 is not waiting for an answer".into())
        );
        assert_eq!(
            tasks.answer("t-2", "yes".into()),
            Err("there is no running task t-2".into())
        );
        let waiting = tasks.wait_for_answer("t-1").unwrap();
        tasks.answer("t-1", "the second one".into()).unwrap();
        assert_eq!(waiting.await.unwrap(), "the second one");
        // One answer per question.
        assert!(tasks.answer("t-1", "again".into()).is_err());
    }

    #[test]
    fn a_task_is_cancelled_by_id_or_by_its_front_ends_tag_until_it_ends() {
        let (tasks, cancel, _) = table_with("t-1", "tag-1");
        assert!(!tasks.cancel_by_tag("tag-2"));
        assert!(!cancel.is_cancelled());
        assert!(tasks.cancel_by_tag("tag-1"));
        assert!(cancel.is_cancelled());

        let (tasks, cancel, _) = table_with("t-1", "tag-1");
        tasks.mark_ended("t-1");
        assert!(!tasks.is_running("t-1"));
        assert_eq!(tasks.running_count(), 0);
        assert!(!tasks.cancel("t-1"), "its final status is out");
        assert!(!cancel.is_cancelled());
        let _late = tasks.wait_for_answer("t-1");
        assert!(tasks.answer("t-1", "late".into()).is_err());
    }

    #[tokio::test]
    async fn shutdown_cancels_every_task_saying_why_and_waits_for_it() {
        let (tasks, cancel, reason) = table_with("t-1", "tag-1");
        let watched = cancel.clone();
        let handle = tokio::spawn(async move { watched.cancelled().await });
        tasks.set_handle("t-1", handle);
        assert!(tasks.shutdown("cancelled: the front end closed").await);
        assert!(cancel.is_cancelled());
        assert_eq!(reason.text(), "cancelled: the front end closed");
        // Nothing left to wait for.
        assert!(!RunningTasks::default().shutdown("x").await);
    }

    #[test]
    fn one_task_per_tag_when_asked() {
        let tasks = RunningTasks::default();
        let tag = || "s-1".to_owned();
        assert!(tasks.register_unless_tagged(
            "s-1",
            CancellationToken::new(),
            CancelReason::default(),
            tag()
        ));
        assert!(!tasks.register_unless_tagged(
            "s-1b",
            CancellationToken::new(),
            CancelReason::default(),
            tag()
        ));
        assert!(!tasks.register_unless_tagged(
            "s-1",
            CancellationToken::new(),
            CancelReason::default(),
            "other".into()
        ));
        assert!(tasks.cancel_by_tag("s-1"));
        tasks.remove("s-1");
        assert!(tasks.register_unless_tagged(
            "s-1",
            CancellationToken::new(),
            CancelReason::default(),
            tag()
        ));
        assert_eq!(tasks.running_count(), 1);
    }
}
