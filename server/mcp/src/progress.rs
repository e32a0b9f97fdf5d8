//! A call's progress, as the server reports it: each call goes with a
//! progress token of its own (rmcp gives every request one), and the
//! server's `notifications/progress` for that token reach whoever made the
//! call — as progress (the editor's
//! progress line, the panel's tool call), not as log lines. What a server
//! sends is untrusted: the text is cleaned and cut, the channel is bounded
//! (a flood is dropped, never queued), and the caller shows a few.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{NumberOrString, ProgressNotificationParam, ProgressToken};
use tokio::sync::mpsc;

/// How many progress reports wait for the caller at most; more are dropped.
const QUEUED: usize = 8;
/// The most of a server's progress message shown.
const MESSAGE: usize = 200;

/// One progress report of a call.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

impl Progress {
    /// "2/5: Indexing" (or "2", "2: Indexing"), cleaned: for a progress line.
    pub fn line(&self) -> String {
        let number = |n: f64| {
            if n.fract() == 0.0 && n.abs() < 1e15 {
                format!("{}", n as i64)
            } else {
                format!("{n:.2}")
            }
        };
        let mut line = number(self.progress);
        if let Some(total) = self.total {
            line.push('/');
            line.push_str(&number(total));
        }
        if let Some(message) = self.message.as_deref().map(clean).filter(|m| !m.is_empty()) {
            line.push_str(": ");
            line.push_str(&message);
        }
        line
    }
}

/// One line of at most [`MESSAGE`] characters, no control characters.
fn clean(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let flat = flat.trim();
    if flat.chars().count() > MESSAGE {
        let mut cut: String = flat.chars().take(MESSAGE).collect();
        cut.push('…');
        cut
    } else {
        flat.to_owned()
    }
}

/// The calls waiting for progress, by token: shared by a connection and
/// its handler (across restarts).
#[derive(Clone, Default)]
pub struct Progresses {
    waiting: Arc<Mutex<HashMap<String, mpsc::Sender<Progress>>>>,
}

/// A call's token; dropping it stops its reports.
pub struct Watch {
    pub token: ProgressToken,
    key: String,
    waiting: Arc<Mutex<HashMap<String, mpsc::Sender<Progress>>>>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.remove(&self.key);
        }
    }
}

fn key(token: &ProgressToken) -> String {
    match &token.0 {
        NumberOrString::Number(n) => format!("n{n}"),
        NumberOrString::String(s) => format!("s{s}"),
    }
}

impl Progresses {
    /// The reports for `token` go to `to` until the watch is dropped.
    pub fn watch(&self, token: ProgressToken, to: mpsc::Sender<Progress>) -> Watch {
        let key = key(&token);
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.insert(key.clone(), to);
        }
        Watch {
            token,
            key,
            waiting: Arc::clone(&self.waiting),
        }
    }

    /// A report from the server: to its call, if one waits for it (else,
    /// or when the call's queue is full, it is dropped).
    pub fn report(&self, params: ProgressNotificationParam) {
        let Some(to) = self
            .waiting
            .lock()
            .ok()
            .and_then(|w| w.get(&key(&params.progress_token)).cloned())
        else {
            return;
        };
        let _ = to.try_send(Progress {
            progress: params.progress,
            total: params.total,
            message: params.message,
        });
    }

    /// A channel for one call's reports.
    pub fn channel() -> (mpsc::Sender<Progress>, mpsc::Receiver<Progress>) {
        mpsc::channel(QUEUED)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn report(
        token: &ProgressToken,
        progress: f64,
        message: Option<&str>,
    ) -> ProgressNotificationParam {
        let mut params = ProgressNotificationParam::new(token.clone(), progress).with_total(5.0);
        params.message = message.map(str::to_owned);
        params
    }

    /// Reports reach their own call only, cleaned; a flood is dropped past
    /// the queue; a finished call's token is forgotten.
    #[test]
    fn a_calls_reports_reach_it_bounded_and_cleaned() {
        let progresses = Progresses::default();
        let (to_a, mut a) = Progresses::channel();
        let (to_b, mut b) = Progresses::channel();
        let token = |n| ProgressToken(NumberOrString::Number(n));
        let watch_a = progresses.watch(token(1), to_a);
        let watch_b = progresses.watch(token(2), to_b);
        progresses.report(report(
            &watch_a.token,
            1.0,
            Some("Indexing\u{1b}[2J\nfiles"),
        ));
        for n in 0..100 {
            progresses.report(report(&watch_b.token, f64::from(n), None));
        }
        assert_eq!(a.try_recv().unwrap().line(), "1/5: Indexing [2J files");
        assert!(a.try_recv().is_err());
        let mut got = 0;
        while b.try_recv().is_ok() {
            got += 1;
        }
        assert_eq!(got, QUEUED);
        let token = watch_a.token.clone();
        drop(watch_a);
        progresses.report(report(&token, 2.0, None));
        assert!(a.try_recv().is_err());
        let long = "x".repeat(1000);
        let line = Progress {
            progress: 0.5,
            total: None,
            message: Some(long),
        }
        .line();
        assert!(
            line.starts_with("0.50: xxx") && line.ends_with('…'),
            "{line}"
        );
    }
}
