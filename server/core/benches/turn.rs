//! The harness's own work per turn, with 10, 100 and 1000 turns of
//! history, model and tools excluded: what `agent::run` does around one
//! model call and one tool call, step by step, with the real types.
//!
//! - `assemble`: the progress note and the context (as `prepare_request`).
//! - `tokens`: counting the new result when it is recorded (the spill
//!   check and `RecordedResult::new`); the request's estimate comes with
//!   the assembly, from counts recorded once.
//! - `persist`: the request archived as an artifact and its row, the
//!   turn's row, the task state, the op log of one call (requested,
//!   started, finished) and the two checkpoints, in SQLite (WAL) on a real
//!   temporary directory.
//! - `trace`: the turn's events written by `TraceWriter` (the context
//!   transformation that started this turn, model call, text, status, tool
//!   call, permission, result).
//! - `total`: all of it, in the loop's order.
//!
//! Run: `cargo bench -p rein-core --bench turn`

// Bench code: a panic is a failed run, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rein_core::budget::{Budgets, Spent};
use rein_core::context::history::{History, Item, RecordedResult, ResultMeta};
use rein_core::context::progress::Progress;
use rein_core::context::{Assembled, ContextConfig, ContextManager};
use rein_core::journal::{Journal, LoopState, file_hash};
use rein_core::os::trace::TraceWriter;
use rein_core::permissions::Decision;
use rein_core::ports::{ProgressSink, TaskEvent, TaskStatus};
use rein_core::task::{TaskId, TaskSpec, TaskState};
use rein_core::workspace::ReadVersion;
use rein_models::{ModelReply, Part, Redactor, StopReason, ToolCall, Usage};
use rein_store::{CheckpointPhase, Store};
use serde_json::json;
use support::history;

mod support;

/// One harness: a context manager, a journal on a real SQLite file and a
/// trace file, all in a temporary directory.
struct Harness {
    task: TaskSpec,
    context: ContextManager,
    journal: Journal,
    trace: TraceWriter,
    root: tempfile::TempDir,
    /// The result recorded this turn: a file read like those in the history.
    file: String,
}

impl Harness {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let task = TaskSpec::fix_test(TaskId("t-bench".into()), "tests/test_cart.py", "test_total");
        let tools = rein_core::tools::builtin().specs();
        let context = ContextManager::new(
            ContextConfig::default(),
            "claude-sonnet-4-5",
            &task,
            tools,
            None,
        );
        let store = Arc::new(Store::open(&root.path().join(".rein/state.db")).unwrap());
        // What a task's sinks get: one known key, and the key shapes.
        let redactor = Redactor::new([], ["bench-key-0123456789".to_owned()]);
        let journal = Journal::begin(
            store,
            &task,
            &Budgets::default(),
            "bench:1:0",
            None,
            redactor.clone(),
        )
        .unwrap();
        let trace = TraceWriter::open(root.path(), &task.id, redactor);
        let file = (1..=120)
            .map(|l| format!("    let value_{l} = compute(items, {l}); // step {l}\n"))
            .collect();
        Self {
            task,
            context,
            journal,
            trace,
            root,
            file,
        }
    }

    fn assemble(&self, h: &History, turn: u32) -> Assembled {
        let note = Progress::default().render(turn, 20, &self.task, 5);
        self.context.assemble(h, &note)
    }

    /// Counting as the loop does: the new result twice (the spill check,
    /// then `RecordedResult::new`).
    fn count(&self, _assembled: &Assembled) -> RecordedResult {
        black_box(rein_models::tokens::count_text(&self.file));
        RecordedResult::new(
            "call_new".into(),
            "read_file".into(),
            self.file.clone(),
            false,
            ResultMeta::FileRead {
                path: "src/new.rs".into(),
                version: ReadVersion::of_disk(&self.file),
            },
        )
    }

    /// One turn's writes. `h` is the task's history so far, already
    /// stored ([`Harness::stored`]): the turn adds the model's reply and
    /// its result to it, as the loop does.
    fn persist(&self, h: &mut History, turn: u32, assembled: &Assembled, result: &RecordedResult) {
        let j = &self.journal;
        // save_request: the exact request as an artifact, and its index row.
        let rel = format!(".rein/artifacts/t-bench/request-{turn}.json");
        let json = serde_json::to_string_pretty(&assembled.request).unwrap();
        let path = self.root.path().join(&rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &json).unwrap();
        j.artifact(
            &format!("request-{turn}.json"),
            "request",
            json.len() as u64,
        )
        .unwrap();
        // The model call's row, then the state back to running.
        j.turn(turn, &rel, &reply(), Some(0.01), 1200).unwrap();
        j.state(TaskState::Running, None, &Spent::default())
            .unwrap();
        let state = loop_state(turn);
        h.push(Item::assistant(reply().parts));
        j.checkpoint(CheckpointPhase::AfterModel, &state, h)
            .unwrap();
        // The op log of one read.
        let op = j
            .op_requested(
                turn,
                "call_new",
                "read_file",
                &json!({"path": "src/new.rs"}),
                vec![file_hash("src/new.rs", None)],
                Vec::new(),
                rein_core::tools::OnCrash::NotRun,
            )
            .unwrap();
        j.op_started(op, "read_file").unwrap();
        j.op_finished(op, "read_file", result, Vec::new()).unwrap();
        h.push(Item::Results {
            results: vec![result.clone()],
            notes: Vec::new(),
        });
        j.checkpoint(CheckpointPhase::AfterTools, &state, h)
            .unwrap();
    }

    /// A task's database after `h.items.len()` items: the history stored
    /// by an earlier checkpoint (not timed), and a copy to grow.
    fn stored(&self, h: &History) -> History {
        self.journal
            .checkpoint(CheckpointPhase::AfterTools, &loop_state(0), h)
            .unwrap();
        h.clone()
    }

    fn trace(&self, turn: u32, assembled: &Assembled) {
        let t = &self.trace;
        let id = &self.task.id;
        // The loop traces a transformation once, when it starts: in a
        // steady turn that is the newest one (a read just superseded),
        // whatever the history's length.
        if let Some((transformation, detail)) = assembled.transformations.last() {
            t.event(
                id,
                &TaskEvent::Context {
                    transformation: transformation.clone(),
                    detail: detail.clone(),
                },
            );
        }
        let status = TaskEvent::Status(TaskStatus {
            task_id: id.clone(),
            state: TaskState::Running,
            reason: None,
            turn,
            max_turns: 20,
            input_tokens: 120_000,
            output_tokens: 3_000,
            cost_usd: 0.4,
            unpriced_calls: 0,
            cause: None,
        });
        let events = [
            TaskEvent::ModelCall {
                turn,
                usage: Usage::default(),
                cost_usd: Some(0.01),
                latency_ms: 1200,
                stop: "tool_use".into(),
                retries: 0,
                estimated_input_tokens: 120_000,
            },
            status.clone(),
            TaskEvent::Text {
                turn,
                text: "Looking.".into(),
            },
            TaskEvent::ToolCall {
                turn,
                call_id: "call_new".into(),
                tool: "read_file".into(),
                arguments: json!({"path": "src/new.rs"}),
                title: "reading src/new.rs".into(),
                detail: "src/new.rs".into(),
                kind: rein_core::tools::ToolKind::Read,
            },
            TaskEvent::Permission {
                call_id: "call_new".into(),
                tool: "read_file".into(),
                decision: Decision::Allow,
                rule: "built-in: reads are allowed".into(),
            },
            TaskEvent::ToolResult {
                call_id: "call_new".into(),
                tool: "read_file".into(),
                is_error: false,
                summary: "src/new.rs: 120 lines".into(),
                duration_ms: 1,
                output_bytes: 20,
            },
        ];
        for event in &events {
            t.event(id, event);
        }
    }
}

fn reply() -> ModelReply {
    ModelReply {
        parts: vec![
            Part::text("Looking."),
            Part::ToolCall(ToolCall {
                id: "call_new".into(),
                name: "read_file".into(),
                arguments: json!({"path": "src/new.rs"}),
            }),
        ],
        bad_calls: Vec::new(),
        usage: Usage::default(),
        stop: StopReason::ToolUse,
        retries: 0,
    }
}

fn turn(c: &mut Criterion) {
    let mut group = c.benchmark_group("turn");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(10));
    for turns in [10, 100, 1000] {
        let h = history(turns);
        let t = turns as u32 + 1;
        let harness = Harness::new();
        let assembled = harness.assemble(&h, t);
        let result = harness.count(&assembled);

        group.bench_with_input(BenchmarkId::new("assemble", turns), &h, |b, h| {
            b.iter(|| black_box(harness.assemble(h, t)))
        });
        group.bench_with_input(BenchmarkId::new("tokens", turns), &h, |b, _| {
            b.iter(|| black_box(harness.count(&assembled)))
        });
        // A fresh database per sample: what a task writes grows with every
        // iteration, and a sample should see a task's database, not one
        // holding thousands of runs.
        group.bench_with_input(BenchmarkId::new("persist", turns), &h, |b, h| {
            b.iter_custom(|iters| {
                let harness = Harness::new();
                let mut grown = harness.stored(h);
                let start = Instant::now();
                for _ in 0..iters {
                    harness.persist(&mut grown, t, &assembled, &result);
                }
                start.elapsed()
            })
        });
        group.bench_with_input(BenchmarkId::new("trace", turns), &h, |b, _| {
            b.iter(|| harness.trace(t, &assembled))
        });
        group.bench_with_input(BenchmarkId::new("total", turns), &h, |b, h| {
            b.iter_custom(|iters| {
                let harness = Harness::new();
                let mut grown = harness.stored(h);
                let start = Instant::now();
                for _ in 0..iters {
                    // The request is built from the history of `turns`
                    // turns (what the figure is about); the writes add to a
                    // copy, as a task's would.
                    let assembled = harness.assemble(h, t);
                    let result = harness.count(&assembled);
                    harness.persist(&mut grown, t, &assembled, &result);
                    harness.trace(t, &assembled);
                }
                start.elapsed()
            })
        });
        report_sizes(&harness, turns, &assembled, &h);
    }
    group.finish();
}

/// What one turn writes, for BENCHMARKS.md (printed once per size).
fn report_sizes(harness: &Harness, turns: usize, assembled: &Assembled, h: &History) {
    let request = serde_json::to_string_pretty(&assembled.request)
        .map(|s| s.len())
        .unwrap_or(0);
    // One turn on a task's database: its checkpoint and the items it added.
    let fresh = Harness::new();
    let mut grown = fresh.stored(h);
    let result = fresh.count(assembled);
    fresh.persist(&mut grown, turns as u32 + 1, assembled, &result);
    let store = fresh.journal.store();
    let checkpoint = store
        .last_checkpoint("t-bench")
        .unwrap()
        .map_or(0, |c| c.data_json.len());
    let at = rein_store::HistoryRef {
        epoch: 0,
        len: grown.items.len(),
    };
    let items = store.history_items("t-bench", at).unwrap();
    let added: usize = items[h.items.len()..].iter().map(String::len).sum();
    let trace_before = std::fs::metadata(harness.trace.path()).map_or(0, |m| m.len());
    harness.trace(turns as u32 + 1, assembled);
    let trace = std::fs::metadata(harness.trace.path()).map_or(0, |m| m.len()) - trace_before;
    eprintln!(
        "turn/{turns}: writes a {request}-byte request artifact, two checkpoints of {checkpoint} bytes (each replacing the one before) with {} new history items of {added} bytes in all, {trace} bytes of trace ({} context transformations standing, the newest reported)",
        items.len() - h.items.len(),
        assembled.transformations.len()
    );
}

fn loop_state(turn: u32) -> LoopState {
    LoopState {
        turn,
        progress: Progress::default(),
        spent: Spent::default(),
        elapsed_ms: 1000,
        reads: Vec::new(),
        runs: 0,
        compactions: 0,
        verifier: serde_json::Value::Null,
    }
}

criterion_group!(benches, turn);
criterion_main!(benches);
