//! What the server has streamed so far, for a test to act at the moment
//! that matters ("the reply is streaming") instead of after a guessed delay.

use std::sync::Arc;

use tokio::sync::watch;

/// The SSE events each scripted step's streamed reply has sent so far.
/// Give a clone to [`Scenario::watch_streams`](super::Scenario::watch_streams)
/// and keep one: clones share the counts.
#[derive(Clone)]
pub struct Streamed {
    steps: Arc<watch::Sender<Vec<StepStream>>>,
}

/// One step's streamed reply: `sent` of its `total` events are on the wire.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StepStream {
    pub sent: usize,
    pub total: usize,
}

impl StepStream {
    /// Begun and not finished: a client reading it is mid-stream.
    pub fn in_flight(&self) -> bool {
        self.sent > 0 && self.sent < self.total
    }
}

impl Streamed {
    pub fn new() -> Self {
        Self {
            steps: Arc::new(watch::channel(Vec::new()).0),
        }
    }

    /// Step `step`'s stream so far (zero events if it has not begun, or its
    /// reply is not streamed; steps count from 0).
    pub fn of(&self, step: usize) -> StepStream {
        self.steps.borrow().get(step).copied().unwrap_or_default()
    }

    /// Waits until step `step` has sent at least `events` events.
    pub async fn until_sent(&self, step: usize, events: usize) {
        let mut steps = self.steps.subscribe();
        // The sender lives in `self`, so the channel never closes here.
        let _ = steps
            .wait_for(|s| s.get(step).is_some_and(|s| s.sent >= events))
            .await;
    }

    /// The server has sent `sent` of the `total` events of `step`'s reply.
    pub(crate) fn record(&self, step: usize, sent: usize, total: usize) {
        self.steps.send_modify(|steps| {
            if steps.len() <= step {
                steps.resize(step + 1, StepStream::default());
            }
            steps[step] = StepStream { sent, total };
        });
    }
}

impl Default for Streamed {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Streamed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Streamed")
            .field(&*self.steps.borrow())
            .finish()
    }
}

/// The same watcher: a watcher is no part of what a scenario says, so
/// scenarios are equal when their scripts are and they share one (or none).
impl PartialEq for Streamed {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.steps, &other.steps)
    }
}
