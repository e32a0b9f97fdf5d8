//! Figure 4: input tokens over a scripted 30-turn fix session, Rein's
//! context management against resending the full history, and how much
//! of each falls under prompt-cache breakpoints.
//!
//! The session runs the real agent loop (`rein_core::agent::run`) with the
//! real Anthropic client against the fake model server, an in-memory
//! workspace and a scripted test runner that prints full `pytest -v` logs
//! (`project.rs`). Every request the loop sends is recorded as the
//! provider-neutral `ModelRequest` (the wire body is built from it; the
//! fake server checks that body like the real API).
//!
//! The naive figure is computed from the same history: before turn *t* the
//! naive agent sends every item so far, each tool result as the tool
//! produced it (the whole test log, every read in full, nothing
//! summarized), no progress note, with the same system prompt and tools.
//!
//! One more replay of the same history shows what Rein's shedding costs
//! in cache reads: append-only (Rein's recorded results, nothing stubbed
//! or summarized later). Rein sheds in batches (`ContextManager::
//! assemble_with`), so its history is a stable, cached prefix between
//! batches.
//!
//! Tokens are counted with `o200k_base` (`rein_models::tokens`, Rein's
//! own estimate). The cache is simulated (`cache.rs`) with Anthropic's
//! rules: Rein's breakpoints as `rein-models` places them; the naive agent
//! marks the end of each request (an append-only history, the best case
//! for caching). Cost at Rein's price table for `claude-sonnet-4-5`.

mod cache;
mod project;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail, ensure};
use rein_core::agent::{self, AgentConfig, Ports};
use rein_core::context::history::{Item, ResultMeta, to_messages};
use rein_core::exec::{CommandKind, CommandResult, TAIL_LINES};
use rein_core::fakes::{MemoryWorkspace, RecordingProgress, ScriptedApprover, ScriptedExec};
use rein_core::permissions::Policy;
use rein_core::task::{TaskId, TaskSpec, TaskState};
use rein_core::testing::command::TestCommand;
use rein_core::testing::failures::FailureScanner;
use rein_core::verify::TestVerifier;
use rein_models::{
    ApiKey, EventStream, ModelClient, ModelRequest, ProviderConfig, ProviderKind, Timeouts, Usage,
    anthropic_client,
};
use rein_testkit::fake_model::FakeModel;
use tokio_util::sync::CancellationToken;

use crate::report::{self, bytes};
use cache::Billed;
use project::State;

const MODEL: &str = "claude-sonnet-4-5";

/// Keeps every request the loop sends.
struct Recording {
    inner: Arc<dyn ModelClient>,
    requests: Mutex<Vec<ModelRequest>>,
}

impl ModelClient for Recording {
    fn provider(&self) -> &'static str {
        self.inner.provider()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    fn stream(&self, request: ModelRequest, cancel: CancellationToken) -> EventStream {
        if let Ok(mut r) = self.requests.lock() {
            r.push(request.clone());
        }
        self.inner.stream(request, cancel)
    }
}

/// The full output of each command, by its log path.
type Logs = Arc<Mutex<HashMap<String, String>>>;

fn runner(ws: Arc<MemoryWorkspace>, logs: Logs) -> ScriptedExec {
    ScriptedExec::new(move |spec| {
        let text = |p: &str| ws.text(p).unwrap_or_default();
        let state = State {
            discount_fixed: text("shop/discounts.py").contains("ROUND_HALF_UP)"),
            cart_wrong: text("shop/cart.py").contains("round_cents(sum"),
            pricing_wrong: text("shop/pricing.py").contains("quantize(CENT, rounding"),
        };
        let target = spec
            .command
            .strip_prefix("python3 -m pytest -v")
            .unwrap_or_default()
            .trim()
            .trim_matches('\'');
        let (output, code) = project::pytest_output(target, &state);
        let mut scanner = FailureScanner::new();
        let lines: Vec<&str> = output.lines().collect();
        for line in &lines {
            scanner.line(line);
        }
        if let Ok(mut logs) = logs.lock() {
            logs.insert(spec.log_path.to_string_lossy().into_owned(), output.clone());
        }
        CommandResult {
            exit_code: Some(code),
            duration: std::time::Duration::from_millis(14_210),
            tail: lines[lines.len().saturating_sub(TAIL_LINES)..]
                .iter()
                .map(|l| (*l).to_owned())
                .collect(),
            failures: scanner.into_failures(),
            log_path: spec.log_path.clone(),
            total_lines: lines.len() as u64,
            total_bytes: output.len() as u64,
            ..CommandResult::default()
        }
    })
}

pub fn run() -> Result<String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(session())
}

async fn session() -> Result<String> {
    // Paths are resolved against a real directory (symlink checks); the
    // files themselves live in memory.
    let root = tempfile::tempdir()?;
    let mut ws = MemoryWorkspace::new(root.path().canonicalize()?);
    for (path, text) in project::files() {
        ws = ws.with_file(path, &text);
    }
    let ws = Arc::new(ws);
    let logs: Logs = Arc::default();
    let exec = Arc::new(runner(Arc::clone(&ws), Arc::clone(&logs)));
    let server = FakeModel::start(project::scenario()).await?;
    let provider = ProviderConfig {
        provider: ProviderKind::Anthropic,
        model: MODEL.into(),
        base_url: server.base_url(),
        api_key: ApiKey::new("sk-ant-bench-key-000000"),
        stream: true,
        retry: Default::default(),
        timeouts: Timeouts::default(),
        prices: Default::default(),
        scenario: None,
        context_window: None,
        temperature: 0.0,
        key_from: None,
    };
    let recording = Arc::new(Recording {
        inner: anthropic_client(&provider)?,
        requests: Mutex::new(Vec::new()),
    });
    let task = TaskSpec::fix_test(
        TaskId("t-bench".into()),
        project::TEST_FILE,
        project::TEST_NAME,
    );
    let test_command = TestCommand::custom("python3 -m pytest -v {target}");
    let mut config = AgentConfig::new(Policy::with_builtins(Vec::new()));
    config.test_command = Some(test_command.clone());
    config.budgets.max_turns = 40;
    let verifier = TestVerifier::prepare(
        &task,
        ws.as_ref(),
        exec.as_ref(),
        Some(test_command),
        config.budgets.test_timeout,
        std::path::Path::new(".rein/artifacts/t-bench"),
        &CancellationToken::new(),
    )
    .await;
    let ports = Ports {
        model: recording.clone(),
        workspace: ws.clone(),
        exec: exec.clone(),
        approver: Arc::new(ScriptedApprover::new()),
        progress: RecordingProgress::new(),
        verifier: Arc::new(verifier),
        artifacts: ws.clone(),
        journal: None,
    };
    let outcome = agent::run(task, config, ports, CancellationToken::new()).await;
    if std::env::var_os("REIN_BENCH_DEBUG").is_some() {
        for item in &outcome.history.items {
            eprintln!(
                "{}",
                serde_json::to_string(item)
                    .unwrap_or_default()
                    .chars()
                    .take(300)
                    .collect::<String>()
            );
        }
        eprintln!("{}: {}", outcome.state, outcome.reason);
    }
    let violations = server.violations();
    ensure!(
        violations.is_empty(),
        "the fake model refused requests: {violations:?}"
    );
    if outcome.state != TaskState::Succeeded {
        bail!("the session ended {}: {}", outcome.state, outcome.reason);
    }
    let requests = recording
        .requests
        .lock()
        .map(|r| r.clone())
        .map_err(|_| anyhow::anyhow!("poisoned"))?;
    ensure!(
        requests.len() == 30,
        "{} model calls, expected 30",
        requests.len()
    );
    let logs = logs
        .lock()
        .map(|l| l.clone())
        .map_err(|_| anyhow::anyhow!("poisoned"))?;
    summary(&requests, &outcome.history.items, &logs)
}

/// The naive agent's request before each turn: the same system and tools,
/// every item so far with each result whole.
fn naive_requests(
    rein: &[ModelRequest],
    items: &[Item],
    logs: &HashMap<String, String>,
) -> Result<Vec<ModelRequest>> {
    let full = |r: &rein_core::context::history::RecordedResult| -> String {
        match &r.meta {
            ResultMeta::Command {
                kind: CommandKind::Test,
                command,
                result,
                ..
            } => {
                let log = logs
                    .get(&result.log_path.to_string_lossy().into_owned())
                    .cloned()
                    .unwrap_or_default();
                format!("$ {command}\nexit code {:?}\n{log}", result.exit_code)
            }
            _ => r.content.clone(),
        }
    };
    let assistants = assistant_positions(items);
    rein.iter()
        .enumerate()
        .map(|(t, r)| {
            let end = assistants
                .get(t)
                .copied()
                .context("fewer replies than requests")?;
            let mut naive = r.clone();
            naive.messages = to_messages(&items[..end], full);
            naive.cache.stable_message = None;
            Ok(naive)
        })
        .collect()
}

/// Where each of the model's replies is in the history: request *t* was
/// built from the items before reply *t*.
fn assistant_positions(items: &[Item]) -> Vec<usize> {
    items
        .iter()
        .enumerate()
        .filter(|(_, i)| matches!(i, Item::Assistant { .. }))
        .map(|(n, _)| n)
        .collect()
}

/// Rein's requests without shedding: every result as Rein recorded it
/// (test runs already cut to their tail), nothing stubbed or summarized
/// later, the progress note last, Rein's breakpoints. What the shedding
/// costs in cache hits.
fn append_only_requests(rein: &[ModelRequest], items: &[Item]) -> Result<Vec<ModelRequest>> {
    let assistants = assistant_positions(items);
    rein.iter()
        .enumerate()
        .map(|(t, r)| {
            let end = assistants
                .get(t)
                .copied()
                .context("fewer replies than requests")?;
            let mut plain = r.clone();
            plain.messages = to_messages(&items[..end], |r| r.content.clone());
            let note = r
                .messages
                .last()
                .and_then(|m| m.parts.last())
                .cloned()
                .context("a request without messages")?;
            if let Some(last) = plain.messages.last_mut() {
                last.parts.push(note);
            }
            plain.cache.stable_message = plain.messages.len().checked_sub(2);
            Ok(plain)
        })
        .collect()
}

fn summary(
    rein: &[ModelRequest],
    items: &[Item],
    logs: &HashMap<String, String>,
) -> Result<String> {
    use std::fmt::Write as _;
    let naive = naive_requests(rein, items, logs)?;
    let plain = append_only_requests(rein, items)?;
    let plain_billed = cache::simulate(&plain.iter().map(cache::blocks).collect::<Vec<_>>());
    let rein_billed = cache::simulate(&rein.iter().map(cache::blocks).collect::<Vec<_>>());
    let naive_billed = cache::simulate(&naive.iter().map(cache::blocks).collect::<Vec<_>>());
    let total = |b: &[Billed]| {
        let mut t = Billed::default();
        for x in b {
            t.add(x);
        }
        t
    };
    let (r, n, p) = (
        total(&rein_billed),
        total(&naive_billed),
        total(&plain_billed),
    );
    let estimated: u64 = rein.iter().map(rein_models::tokens::estimate_request).sum();
    let log_bytes: u64 = logs.values().map(|l| l.len() as u64).sum();
    let prices = rein_models::pricing::PriceTable::default();
    let cost = |b: &Billed, cached: bool| {
        let usage = if cached {
            Usage {
                input_tokens: b.uncached(),
                cache_read_tokens: b.read,
                cache_write_tokens: b.written,
                output_tokens: 0,
            }
        } else {
            Usage {
                input_tokens: b.total,
                ..Usage::default()
            }
        };
        prices.cost_usd(MODEL, &usage).unwrap_or(f64::NAN)
    };
    let pct = |a: u64, b: u64| 100.0 * a as f64 / b.max(1) as f64;

    let mut out = String::new();
    let _ = writeln!(out, "## Tokens sent over a 30-turn fix session\n");
    let _ = writeln!(out, "machine: {}\n", report::machine());
    let _ = writeln!(
        out,
        "{} model calls; {} test runs printing {} of logs in all; tokens counted with o200k_base.\n",
        rein.len(),
        logs.len(),
        bytes(log_bytes)
    );
    let _ = writeln!(
        out,
        "| | input tokens | last request | under a breakpoint | read from cache | written to cache | uncached | cost, no cache | cost, cached |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|");
    for (name, b, per) in [
        ("Rein", &r, &rein_billed),
        (
            "Rein, append-only (no stubs or summaries)",
            &p,
            &plain_billed,
        ),
        ("naive resend", &n, &naive_billed),
    ] {
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {:.0}% | {} ({:.0}%) | {} ({:.0}%) | {} ({:.0}%) | ${:.2} | ${:.2} |",
            b.total,
            per.last().map_or(0, |l| l.total),
            pct(b.marked, b.total),
            b.read,
            pct(b.read, b.total),
            b.written,
            pct(b.written, b.total),
            b.uncached(),
            pct(b.uncached(), b.total),
            cost(b, false),
            cost(b, true),
        );
    }
    let _ = writeln!(
        out,
        "\nRein sends {:.1}× fewer input tokens than the naive resend ({:.0}% less). With prompt caching, Rein's input costs {:.0}% of the naive resend's (${:.2} against ${:.2}) and {:.0}% of the append-only variant's (${:.2}): a batch of stubs and summaries rewrites an earlier part of the history once, and the cache is read only up to the first change, so between batches Rein's requests only grow at the end. Rein's own estimate of its requests (`estimate_request`): {estimated} tokens.",
        n.total as f64 / r.total.max(1) as f64,
        100.0 - pct(r.total, n.total),
        100.0 * cost(&r, true) / cost(&n, true),
        cost(&r, true),
        cost(&n, true),
        100.0 * cost(&r, true) / cost(&p, true),
        cost(&p, true),
    );
    let _ = writeln!(out, "\nPer turn (input tokens; read from cache):\n");
    let _ = writeln!(
        out,
        "| turn | Rein | Rein cached | append-only | append-only cached | naive | naive cached |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for (t, ((a, b), c)) in rein_billed
        .iter()
        .zip(&plain_billed)
        .zip(&naive_billed)
        .enumerate()
    {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            t + 1,
            a.total,
            a.read,
            b.total,
            b.read,
            c.total,
            c.read
        );
    }
    Ok(out)
}
