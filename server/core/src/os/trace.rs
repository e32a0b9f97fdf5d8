//! The trace of a task: one JSON line per event in
//! `<workspace>/.rein/traces/<task-id>.jsonl`, written as it happens (a
//! crash loses at most the line being written), with every secret the
//! process knows of redacted (by the task's [`Redactor`]) before it
//! reaches the disk.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use rein_models::Redactor;
use serde_json::{Map, Value, json};

use crate::ports::{ProgressSink, TaskEvent};
use crate::task::TaskId;

/// Where a task's trace lives.
pub fn trace_path(root: &Path, task: &TaskId) -> PathBuf {
    root.join(".rein/traces").join(format!("{}.jsonl", task.0))
}

/// Writes a task's events to its trace file.
pub struct TraceWriter {
    file: Mutex<Option<File>>,
    task: TaskId,
    step: AtomicU64,
    redactor: Redactor,
    path: PathBuf,
}

impl TraceWriter {
    /// Opens (appending: a resumed task continues its trace) the trace of
    /// `task` under `root`. A trace that cannot be opened is logged and
    /// skipped: tracing must never stop the work.
    pub fn open(root: &Path, task: &TaskId, redactor: Redactor) -> Self {
        let path = trace_path(root, task);
        let rel = format!("traces/{}.jsonl", task.0);
        // Opened beneath `.rein/`, never through a link.
        let opened = rein_store::state_dir(root).and_then(|state| {
            let file = state.append(&rel)?;
            // Continue the step count of an existing trace.
            let steps = state
                .read(&rel)
                .map(|bytes| String::from_utf8_lossy(&bytes).lines().count() as u64)
                .unwrap_or(0);
            Ok((file, steps))
        });
        let (file, steps) = match opened {
            Ok((file, steps)) => (Some(file), steps),
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cannot write the trace");
                (None, 0)
            }
        };
        Self {
            file: Mutex::new(file),
            task: task.clone(),
            step: AtomicU64::new(steps),
            redactor,
            path,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write(&self, record: Value) {
        let line = self.redactor.json(&record);
        if let Ok(mut file) = self.file.lock()
            && let Some(file) = file.as_mut()
            && let Err(error) = writeln!(file, "{line}")
        {
            tracing::warn!(%error, "trace write failed");
        }
    }
}

impl ProgressSink for TraceWriter {
    fn event(&self, _task: &TaskId, event: &TaskEvent) {
        // The whole text is traced once the reply is complete; the
        // progress is in every checkpoint; test outcomes are in the
        // command results and the evidence.
        if matches!(
            event,
            TaskEvent::TextDelta { .. }
                | TaskEvent::ProgressNote { .. }
                | TaskEvent::TestOutcomes { .. }
        ) {
            return;
        }
        let step = self.step.fetch_add(1, Ordering::SeqCst) + 1;
        self.write(record(&self.task, step, event, now_ms()));
    }
}

/// One trace record, written at `now_ms` (unix milliseconds): the common
/// fields, then the event's own.
pub fn record(task: &TaskId, step: u64, event: &TaskEvent, now_ms: i64) -> Value {
    let ts = rfc3339(now_ms);
    let mut fields = match serde_json::to_value(event) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let kind = fields.remove("kind").unwrap_or(Value::Null);
    let mut out =
        json!({"trace_id": task.0, "task_id": task.0, "step": step, "ts": ts, "kind": kind});
    // The common names the issue asks for, where an event has them.
    match event {
        TaskEvent::ModelCall {
            usage,
            cost_usd,
            latency_ms,
            ..
        } => {
            out["latency_ms"] = json!(latency_ms);
            // `ts` is when the reply was complete; a timeline wants both.
            let latency = i64::try_from(*latency_ms).unwrap_or(i64::MAX);
            out["started_ts"] = json!(rfc3339(now_ms.saturating_sub(latency)));
            out["tokens"] = json!({"in": usage.input_tokens, "out": usage.output_tokens, "cache_read": usage.cache_read_tokens, "cache_write": usage.cache_write_tokens});
            out["cost_usd"] = json!(cost_usd);
        }
        TaskEvent::Compaction {
            usage, cost_usd, ..
        } => {
            out["tokens"] = json!({"in": usage.input_tokens, "out": usage.output_tokens, "cache_read": usage.cache_read_tokens, "cache_write": usage.cache_write_tokens});
            out["cost_usd"] = json!(cost_usd);
        }
        TaskEvent::ToolCall { arguments, .. } => out["inputs"] = arguments.clone(),
        TaskEvent::ToolResult {
            summary,
            duration_ms,
            is_error,
            ..
        } => {
            out["result"] = json!(summary);
            out["latency_ms"] = json!(duration_ms);
            out["is_error"] = json!(is_error);
        }
        _ => {}
    }
    if let Value::Object(map) = &mut out {
        for (k, v) in fields {
            map.entry(k).or_insert(v);
        }
    }
    out
}

/// The current time in unix milliseconds.
pub fn now_ms() -> i64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
}

/// Unix milliseconds as RFC 3339 UTC (`2026-11-30T07:12:01.234Z`).
pub fn rfc3339(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = crate::task::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::TaskEvent;

    /// The streamed pieces of a reply would each be a record; the whole
    /// text is one.
    #[test]
    #[allow(clippy::unwrap_used)]
    fn the_trace_keeps_a_replys_text_once_not_its_pieces() {
        let dir = tempfile::TempDir::new().unwrap();
        let task = TaskId("t-1".into());
        let trace = TraceWriter::open(dir.path(), &task, Redactor::default());
        for piece in ["Fix", "ed."] {
            trace.event(
                &task,
                &TaskEvent::TextDelta {
                    turn: 1,
                    text: piece.into(),
                },
            );
        }
        trace.event(
            &task,
            &TaskEvent::Text {
                turn: 1,
                text: "Fixed.".into(),
            },
        );
        let written = std::fs::read_to_string(trace.path()).unwrap();
        assert_eq!(written.lines().count(), 1, "{written}");
        assert!(written.contains(r#""kind":"text""#), "{written}");
    }

    #[test]
    fn timestamps_are_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_796_022_721_234), "2026-11-30T07:12:01.234Z");
    }

    #[test]
    fn a_compaction_record_carries_its_calls_tokens_and_cost() {
        let event = TaskEvent::Compaction {
            summarized_items: 12,
            tokens_before: 90_000,
            tokens_after: 9_000,
            archive: ".rein/artifacts/t-1/history-1.json".into(),
            usage: rein_models::Usage {
                input_tokens: 80_000,
                output_tokens: 700,
                ..rein_models::Usage::default()
            },
            cost_usd: Some(0.25),
        };
        let record = record(&TaskId("t-1".into()), 7, &event, 0);
        assert_eq!(record["kind"], "compaction");
        assert_eq!(
            record["tokens"],
            json!({"in": 80_000, "out": 700, "cache_read": 0, "cache_write": 0})
        );
        assert_eq!(record["cost_usd"], 0.25);
    }

    #[test]
    fn a_model_call_says_when_it_started_and_ended() {
        let event = TaskEvent::ModelCall {
            turn: 3,
            usage: rein_models::Usage::default(),
            cost_usd: None,
            latency_ms: 2_500,
            stop: "tool_use".into(),
            retries: 0,
            estimated_input_tokens: 0,
        };
        let record = record(&TaskId("t-1".into()), 9, &event, 1_796_022_721_234);
        assert_eq!(record["ts"], "2026-11-30T07:12:01.234Z");
        assert_eq!(record["started_ts"], "2026-11-30T07:11:58.734Z");
    }

    #[test]
    fn secrets_never_reach_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let redactor = Redactor::new(
            [
                (
                    "ANTHROPIC_API_KEY".into(),
                    "sk-ant-api03-SECRETSECRET".into(),
                ),
                ("HOME".into(), "/root/home".into()),
            ],
            [
                "editor-key-12345678".to_owned(),
                "pa\"ss\\word-12".to_owned(),
            ],
        );
        let task = TaskId("t-1".into());
        let writer = TraceWriter::open(dir.path(), &task, redactor);
        writer.event(
            &task,
            &TaskEvent::Activity {
                text: "key sk-ant-api03-SECRETSECRET and editor-key-12345678 and sk-proj-abc0123456789defghijkl and pa\"ss\\word-12"
                    .into(),
            },
        );
        writer.event(
            &task,
            &TaskEvent::Activity {
                text: "home is /root/home".into(),
            },
        );
        let text = std::fs::read_to_string(trace_path(dir.path(), &task)).unwrap();
        assert!(
            !text.contains("SECRET")
                && !text.contains("editor-key")
                && !text.contains("defghijkl")
                && !text.contains("word-12"),
            "{text}"
        );
        assert!(text.contains("/root/home"), "non-secret variables are kept");
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            (lines[0]["step"].clone(), lines[1]["step"].clone()),
            (json!(1), json!(2))
        );
        assert_eq!(lines[0]["kind"], "activity");
        // A resumed task continues the numbering.
        let again = TraceWriter::open(dir.path(), &task, Redactor::default());
        again.event(
            &task,
            &TaskEvent::Activity {
                text: "resumed".into(),
            },
        );
        let last: Value = serde_json::from_str(
            std::fs::read_to_string(trace_path(dir.path(), &task))
                .unwrap()
                .lines()
                .last()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(last["step"], 3);
    }
}
