//! Figure 2: how fast `textDocument/codeAction` answers while a task runs.
//!
//! The real `rein lsp`, driven by the headless editor of `rein-testkit`
//! (it accepts edits and saves buffers as an editor would), on a copy of
//! the demo project whose test module also burns ~2 s of CPU and prints
//! 5,000 lines at import, so every test run loads the machine. The
//! scripted model (`provider: scripted`: the fake model server, started
//! inside `rein` and streaming SSE over HTTP to the real Anthropic client)
//! streams each reply slowly: 4 characters per event, 8 ms between events,
//! ~1,200 characters per reply.
//!
//! The editor asks for the code actions at the cursor in the test file
//! every 20 ms, waiting for each answer (round trip: request written →
//! response received, the editor answering the server's own requests in
//! between). Each sample is put in a phase after the task, from exact
//! intervals: `test running` if it overlaps a run of the test module (the
//! module appends its start and end times to a file; the run_tests calls
//! and the verifier's runs alike), `model streaming` if it overlaps a
//! model call (the trace's `model_call` events: end time and latency),
//! `other` otherwise (edits, approvals, bookkeeping); `idle` is before the
//! task starts. In one task the model and the tests take turns, so the
//! two loads alternate; `task running` pools every sample of the task.
//!
//! Separately, idle: the same request on a 1 MB test file (5,000 tests),
//! where finding the test under the cursor parses the whole file.

use rein_core::task::{TaskState, run_is_over};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use rein_testkit::LspClient;
use rein_testkit::editor::{EditorOptions, HeadlessEditor};
use serde_json::{Value, json};
use tokio::process::ChildStdin;

use crate::report::{self, Spread, secs};
use crate::scripted;

pub struct Options {
    pub rein: PathBuf,
    pub runs: usize,
    pub interval: Duration,
}

const PHASES: [&str; 6] = [
    "idle",
    "model streaming",
    "test running",
    "other",
    "task running (all of the above three)",
    "idle, 1 MB file",
];
/// Indexes into `PHASES`.
const IDLE: usize = 0;
const STREAMING: usize = 1;
const TESTING: usize = 2;
const OTHER: usize = 3;
const TASK: usize = 4;
const IDLE_BIG: usize = 5;

/// Appended to the demo's test module: every run of it loads the machine
/// and marks itself running.
const LOAD: &str = r#"

# --- rein-bench: a suite that costs something ---------------------------
import atexit as _atexit
import os as _os
import time as _time

_TIMES = _os.path.join(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))), ".bench-test-times")
_START = _time.time()
_atexit.register(lambda: open(_TIMES, "a").write(f"{_START} {_time.time()}\n"))
_end = _time.time() + 2.0
_n = 0
while _time.time() < _end:
    _n += 1
    if _n % 400 == 0 and _n <= 2_000_000:
        print(f"fixture: warming cache shard {_n} of the integration dataset ... ok")
"#;

fn reply_text(lead: &str) -> String {
    let filler = " I am checking how the totals are computed, which values the test expects, and whether anything else in the module depends on the same behaviour before I change it.";
    let mut text = lead.to_owned();
    while text.len() < 1_200 {
        text.push_str(filler);
    }
    text
}

fn scenario() -> Value {
    let slow = json!([{"delay_ms": 8}]);
    json!({
        "require_api_key": false,
        "text_chunk_chars": 4,
        "replies": [
            {"text": reply_text("I'll run the failing test first."), "tool_calls": [{"name": "run_tests", "input": {"target": "tests/test_cart.py::TestCart::test_total"}}], "faults": slow},
            {"text": reply_text("total() returned 3 instead of 30. Let me read cart.py."), "tool_calls": [{"name": "read_file", "input": {"path": "cart.py"}}], "faults": slow},
            {"text": reply_text("total() sums the quantities and ignores the prices."), "tool_calls": [{"name": "edit_file", "input": {"path": "cart.py", "old_text": "    return sum(item.qty for item in items)\n\n\ndef count", "new_text": "    return sum(item.price * item.qty for item in items)\n\n\ndef count"}}], "faults": slow},
            {"text": reply_text("Now the test file again."), "tool_calls": [{"name": "run_tests", "input": {"target": "tests/test_cart.py"}}], "faults": slow},
            {"text": reply_text("Fixed: total() multiplies price by quantity."), "faults": slow}
        ]
    })
}

fn demo_project() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/app/demo/project")
}

/// A 1 MB Python test module: 5,000 small test functions.
fn big_test_module() -> String {
    let mut out = String::from(
        "import unittest\n\nfrom cart import Item, total\n\n\nclass TestBig(unittest.TestCase):\n",
    );
    let mut i = 0;
    while out.len() < 1_000_000 {
        i += 1;
        out.push_str(&format!(
            "    def test_case_{i}(self):\n        items = [Item(\"item {i}\", {i}, qty={q})]\n        # The total of one line is its price times its quantity.\n        self.assertEqual(total(items), {i} * {q})\n\n",
            q = i % 7 + 1
        ));
    }
    out
}

pub fn run(opts: &Options) -> Result<String> {
    // The machine and its load as the run starts (the machine is shared).
    let machine = report::machine();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); PHASES.len()];
    let mut task_times = Vec::new();
    for n in 0..opts.runs {
        eprintln!("load: run {}/{}", n + 1, opts.runs);
        let (got, took) = runtime.block_on(one(opts))?;
        for (all, these) in samples.iter_mut().zip(got) {
            all.extend(these);
        }
        task_times.push(took.as_secs_f64());
    }
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## codeAction latency under agent load ({} runs, a request every {} ms)\n",
        opts.runs,
        opts.interval.as_millis()
    );
    let _ = writeln!(out, "machine (at the start): {machine}\n");
    let _ = writeln!(
        out,
        "A task took {} (median) from `rein.fixTest` to its final status.\n",
        secs(report::median(&task_times))
    );
    let _ = writeln!(out, "| phase | samples | p50 | p99 | max |");
    let _ = writeln!(out, "|---|---|---|---|---|");
    for (phase, s) in PHASES.iter().zip(&samples) {
        let spread = Spread::of_durations(s);
        let _ = writeln!(
            out,
            "| {phase} | {} | {} | {} | {} |",
            spread.n,
            secs(spread.p50),
            secs(spread.p99),
            secs(spread.max)
        );
    }
    Ok(out)
}

/// One task under observation: samples per phase, and the task's duration.
async fn one(opts: &Options) -> Result<(Vec<Vec<Duration>>, Duration)> {
    let dir = tempfile::tempdir()?;
    let tmp = dir.path().canonicalize()?;
    let root = tmp.join("project");
    rein_testkit::copy_project(&demo_project(), &root)?;
    let test_file = root.join("tests/test_cart.py");
    let mut test_text = std::fs::read_to_string(&test_file)?;
    test_text.push_str(LOAD);
    std::fs::write(&test_file, &test_text)?;
    std::fs::write(root.join("tests/test_big.py"), big_test_module())?;
    let (mut child, scenario_path) = scripted::spawn(&opts.rein, &tmp, &root, &scenario())?;
    let stdin = child.stdin.take().context("stdin")?;
    let stdout = child.stdout.take().context("stdout")?;
    let client = LspClient::new(stdout, stdin).with_timeout(Duration::from_secs(120));
    let settings = json!({
        "provider": "scripted",
        "scenario": scenario_path,
        "approvalTimeoutSecs": 60,
        "confirmTimeoutSecs": 30,
        "maxTurns": 10
    });
    let options = EditorOptions {
        settings,
        ..EditorOptions::default()
    };
    let mut editor =
        HeadlessEditor::new(client, &root, options).with_timeout(Duration::from_secs(120));
    editor.initialize().await?;
    editor.open("tests/test_cart.py").await?;
    editor.open("cart.py").await?;
    editor.open("tests/test_big.py").await?;
    let line = test_text
        .lines()
        .position(|l| l.contains("def test_total"))
        .context("no test_total")? as u32;
    let cart_uri = editor.uri("tests/test_cart.py");
    let big_uri = editor.uri("tests/test_big.py");
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); PHASES.len()];

    // Idle, on the small file and on the 1 MB one (cursor mid-file).
    for _ in 0..100 {
        samples[IDLE].push(code_action(&mut editor, &cart_uri, line + 1).await?.1);
        tokio::time::sleep(opts.interval).await;
    }
    for _ in 0..100 {
        samples[IDLE_BIG].push(code_action(&mut editor, &big_uri, 12_000).await?.1);
        tokio::time::sleep(opts.interval).await;
    }

    let started = Instant::now();
    let response = editor
        .request(
            "workspace/executeCommand",
            json!({"command": "rein.fixTest", "arguments": [{"uri": cart_uri, "position": {"line": line, "character": 8}, "testName": "TestCart.test_total"}]}),
        )
        .await?;
    let task = response["result"]["taskId"]
        .as_str()
        .with_context(|| format!("no task: {response}"))?
        .to_owned();
    // (sent, round trip) of every sample while the task runs: classified
    // once the task is over and its intervals are known.
    let mut during: Vec<(f64, Duration)> = Vec::new();
    let mut seen = 0;
    let outcome = loop {
        during.push(code_action(&mut editor, &cart_uri, line + 1).await?);
        let mut ended = None;
        for m in &editor.received()[seen..] {
            // A review open in the middle of the run is `waiting_user`
            // with `waitingFor`: not the end.
            if m["method"] == "rein/taskStatus"
                && m["params"]["taskId"] == task.as_str()
                && m["params"]["state"]
                    .as_str()
                    .and_then(|s| s.parse().ok())
                    .is_some_and(|state| run_is_over(state, !m["params"]["waitingFor"].is_null()))
            {
                ended = Some(m["params"].clone());
            }
        }
        seen = editor.received().len();
        if let Some(status) = ended {
            break status;
        }
        if started.elapsed() > Duration::from_secs(600) {
            bail!("the task did not end within 10 minutes");
        }
        tokio::time::sleep(opts.interval).await;
    };
    let took = started.elapsed();
    if outcome["state"].as_str().and_then(|s| s.parse().ok()) != Some(TaskState::Succeeded) {
        bail!("the task ended {outcome}");
    }
    let _ = editor.shutdown().await;
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;

    let tests = test_runs(&root.join(".bench-test-times"))?;
    let models = model_calls(&root.join(".rein/traces").join(format!("{task}.jsonl")))?;
    ensure!(!tests.is_empty(), "no test run was recorded");
    ensure!(!models.is_empty(), "no model call in the trace");
    let overlaps = |spans: &[(f64, f64)], (sent, took): (f64, Duration)| {
        let end = sent + took.as_secs_f64();
        spans.iter().any(|&(a, b)| sent <= b && end >= a)
    };
    for &sample in &during {
        let phase = if overlaps(&tests, sample) {
            TESTING
        } else if overlaps(&models, sample) {
            STREAMING
        } else {
            OTHER
        };
        samples[phase].push(sample.1);
        samples[TASK].push(sample.1);
    }
    eprintln!(
        "  {} test runs ({:.1} s), {} model calls ({:.1} s) in {:.1} s",
        tests.len(),
        tests.iter().map(|(a, b)| b - a).sum::<f64>(),
        models.len(),
        models.iter().map(|(a, b)| b - a).sum::<f64>(),
        took.as_secs_f64()
    );
    Ok((samples, took))
}

/// The (start, end) Unix times of each run of the test module.
fn test_runs(path: &Path) -> Result<Vec<(f64, f64)>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .map(|l| {
            let (a, b) = l.split_once(' ').context("a malformed time line")?;
            Ok((a.trim().parse()?, b.trim().parse()?))
        })
        .collect()
}

/// The (start, end) Unix times of each model call in a task's trace: the
/// event is written when the reply is complete, with the call's latency.
fn model_calls(path: &Path) -> Result<Vec<(f64, f64)>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Vec::new();
    for line in text.lines() {
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if event["kind"] != "model_call" {
            continue;
        }
        let end = event["ts"]
            .as_str()
            .and_then(unix_of_rfc3339)
            .context("a model call without a time")?;
        let latency = event["latency_ms"]
            .as_f64()
            .context("a model call without latency")?;
        out.push((end - latency / 1000.0, end));
    }
    Ok(out)
}

/// `2026-11-30T07:12:01.234Z` as Unix seconds.
fn unix_of_rfc3339(ts: &str) -> Option<f64> {
    let (date, time) = ts.strip_suffix('Z')?.split_once('T')?;
    let mut d = date.split('-').map(|x| x.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let mut t = time.split(':');
    let (h, min) = (
        t.next()?.parse::<i64>().ok()?,
        t.next()?.parse::<i64>().ok()?,
    );
    let sec: f64 = t.next()?.parse().ok()?;
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + h * 3600 + min * 60) as f64 + sec)
}

/// Now, as Unix seconds.
fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// One codeAction round trip: when it was sent (Unix seconds) and how
/// long the answer took.
async fn code_action(
    editor: &mut HeadlessEditor<ChildStdin>,
    uri: &str,
    line: u32,
) -> Result<(f64, Duration)> {
    let params = json!({
        "textDocument": {"uri": uri},
        "range": {"start": {"line": line, "character": 8}, "end": {"line": line, "character": 8}},
        "context": {"diagnostics": []}
    });
    let at = unix_now();
    let sent = Instant::now();
    let response = editor.request("textDocument/codeAction", params).await?;
    let took = sent.elapsed();
    if response.get("error").is_some() {
        bail!("codeAction failed: {response}");
    }
    Ok((at, took))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_to_unix() {
        assert_eq!(unix_of_rfc3339("1970-01-01T00:00:01.500Z"), Some(1.5));
        assert_eq!(
            unix_of_rfc3339("2026-11-30T07:12:01.234Z").map(|s| (s * 1000.0).round()),
            Some(1_796_022_721_234.0)
        );
        assert_eq!(unix_of_rfc3339("garbage"), None);
    }
}
