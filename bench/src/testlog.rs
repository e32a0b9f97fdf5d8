//! Figure 6: a command printing 1 GiB through Rein's `ProcessExec`, the
//! code behind `run_tests` and `run_command`, run in this process so its
//! memory is this process's memory.
//!
//! The command is this binary's `emit`: deterministic lines on stdout, a
//! build log (`run_command`) or a verbose pytest run with a failure every
//! 1,000 tests (`run_tests`, which also scans every line for failing
//! tests). Measured: wall time and throughput; this process's peak RSS
//! during the run (`VmHWM`, reset before each run through
//! `/proc/self/clear_refs`) against its RSS before. Checked afterwards:
//! the byte and line counts, the spilled log's size and BLAKE3 against
//! the same stream generated again here, the 50-line tail, the exit code,
//! and (pytest) the failures kept (at most 200, the first ones in order).
//!
//! Then the same through the whole server: `rein lsp` with the scripted
//! model, a `rein.runTask` whose model calls `run_command` with the pytest
//! stream, approved by the headless editor. Measured: the server's RSS
//! sampled every 10 ms and its `VmHWM` at the end (reset just before the
//! task), against its RSS idle before the task. Checked: the spilled `run-1.log` (size, BLAKE3), and
//! that the next request the server archived (`request-2.json`, what the
//! model was sent) holds the stream's last 50 lines and the log's path.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use rein_core::exec::{CommandKind, CommandSpec, Exec, TAIL_LINES};
use rein_core::os::process::ProcessExec;
use tokio_util::sync::CancellationToken;

use crate::procfs;
use crate::report::{self, bytes, median, secs};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Style {
    /// A build log.
    Plain,
    /// `pytest -v`, a failure every 1,000 tests.
    Pytest,
}

pub struct Options {
    pub bytes: u64,
    pub runs: usize,
    /// The server for the whole-process run (`None`: in-process only).
    pub rein: Option<PathBuf>,
}

struct Run {
    style: Style,
    took: Duration,
    before: procfs::Mem,
    peak_kb: u64,
    total_bytes: u64,
    failures: usize,
}

/// Line `i` (from 1) of a stream.
fn line(style: Style, i: u64, out: &mut Vec<u8>) {
    match style {
        Style::Plain => {
            let _ = writeln!(
                out,
                "[{i:>10}] Compiling crate_{:03} v0.{}.{} (/work/project/crates/crate_{:03}) in {} ms",
                i % 997,
                i % 13,
                i % 7,
                i % 997,
                i % 1000
            );
        }
        Style::Pytest if i.is_multiple_of(1000) => {
            let _ = writeln!(
                out,
                "tests/test_module_{:03}.py::test_case_{i} FAILED{:>40}",
                i % 500,
                format!("[{:>3}%]", i % 100)
            );
        }
        Style::Pytest => {
            let _ = writeln!(
                out,
                "tests/test_module_{:03}.py::test_case_{i} PASSED{:>40}",
                i % 500,
                format!("[{:>3}%]", i % 100)
            );
        }
    }
}

/// The whole stream, in pieces of about 64 KiB: lines until `total`
/// bytes are reached or passed.
pub fn generate(style: Style, total: u64, mut sink: impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
    let mut buf = Vec::with_capacity(1 << 17);
    let mut written = 0u64;
    let mut i = 0u64;
    while written < total {
        i += 1;
        let before = buf.len();
        line(style, i, &mut buf);
        written += (buf.len() - before) as u64;
        if buf.len() >= 1 << 16 {
            sink(&buf)?;
            buf.clear();
        }
    }
    if !buf.is_empty() {
        sink(&buf)?;
    }
    Ok(())
}

/// `rein-bench emit`: the stream on stdout.
pub fn emit(style: Style, total: u64) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    generate(style, total, |piece| Ok(out.write_all(piece)?))?;
    out.flush()?;
    Ok(())
}

pub fn run(opts: &Options) -> Result<String> {
    use std::fmt::Write as _;
    let exe = std::env::current_exe()?;
    // The machine and its load as the run starts (the machine is shared).
    let machine = report::machine();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let mut runs = Vec::new();
    for n in 0..opts.runs {
        for style in [Style::Plain, Style::Pytest] {
            eprintln!("testlog: run {}/{} {style:?}", n + 1, opts.runs);
            let run = runtime.block_on(one(&exe, style, opts.bytes))?;
            eprintln!(
                "  {} in {} ({:.0} MiB/s); RSS {} before, peak {}",
                bytes(run.total_bytes),
                secs(run.took.as_secs_f64()),
                run.total_bytes as f64 / run.took.as_secs_f64() / (1 << 20) as f64,
                bytes(run.before.rss_bytes()),
                bytes(run.peak_kb * 1024)
            );
            runs.push(run);
        }
    }
    let mut server_runs = Vec::new();
    if let Some(rein) = &opts.rein {
        for n in 0..opts.runs {
            eprintln!("testlog: run {}/{} whole server", n + 1, opts.runs);
            let run = runtime.block_on(server_run(rein, &exe, opts.bytes))?;
            eprintln!(
                "  {} in {}; server RSS {} idle, peak {} (sampled max {})",
                bytes(run.total_bytes),
                secs(run.took.as_secs_f64()),
                bytes(run.before.rss_bytes()),
                bytes(run.peak_kb * 1024),
                bytes(run.sampled_max_kb * 1024)
            );
            server_runs.push(run);
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Test-log handling ({} of output, {} runs each)\n",
        bytes(opts.bytes),
        opts.runs
    );
    let _ = writeln!(out, "machine (at the start): {machine}\n");
    let _ = writeln!(
        out,
        "| command | time (median, range) | throughput | RSS before | peak RSS during (median, max) | failures kept |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    for style in [Style::Plain, Style::Pytest] {
        let these: Vec<&Run> = runs.iter().filter(|r| r.style == style).collect();
        let name = match style {
            Style::Plain => "`run_command`: build log",
            Style::Pytest => "`run_tests`: pytest -v, scanned",
        };
        let measured: Vec<_> = these
            .iter()
            .map(|r| (r.took, &r.before, r.peak_kb, r.total_bytes))
            .collect();
        let failures = these.first().map_or(0, |r| r.failures).to_string();
        row(&mut out, name, &measured, &failures);
    }
    if !server_runs.is_empty() {
        let measured: Vec<_> = server_runs
            .iter()
            .map(|r| (r.took, &r.before, r.peak_kb, r.total_bytes))
            .collect();
        row(
            &mut out,
            "whole `rein lsp`: task → `run_command` (pytest stream)",
            &measured,
            "n/a",
        );
        let _ = writeln!(
            out,
            "\nWhole server: time is the task's, `rein.runTask` to its final status (model turns included); RSS is the server process's: idle before the task, then its peak (`VmHWM`, reset when the task starts) during the task."
        );
    }
    let _ = writeln!(
        out,
        "\nEvery run: byte and line counts, the spilled log's size and BLAKE3, the last {TAIL_LINES} lines and the exit code matched the stream generated again in-process."
    );
    Ok(out)
}

async fn one(exe: &Path, style: Style, total: u64) -> Result<Run> {
    let dir = tempfile::tempdir()?;
    let log_path = dir.path().join(".rein/artifacts/t-bench/run.log");
    let style_arg = match style {
        Style::Plain => "plain",
        Style::Pytest => "pytest",
    };
    let spec = CommandSpec {
        command: format!(
            "'{}' emit --bytes {total} --style {style_arg}",
            exe.display()
        ),
        cwd: dir.path().to_owned(),
        timeout: Duration::from_secs(3600),
        log_path: log_path.clone(),
        kind: match style {
            Style::Plain => CommandKind::Other,
            Style::Pytest => CommandKind::Test,
        },
        network: false,
        sandbox_mode: None,
        report: None,
        layer: None,
    };
    let exec = ProcessExec::new();
    reset_peak();
    let before = procfs::own()?;
    let started = Instant::now();
    let result = exec.run(spec, CancellationToken::new()).await?;
    let took = started.elapsed();
    let peak_kb = procfs::own()?.peak_kb;

    // Now check, away from the measured part.
    ensure!(
        result.exit_code == Some(0),
        "the command failed: {result:?}"
    );
    let expected = expected(style, total)?;
    ensure!(
        result.total_bytes == expected.bytes,
        "{} bytes counted, {} printed",
        result.total_bytes,
        expected.bytes
    );
    ensure!(
        result.total_lines == expected.lines,
        "{} lines counted, {} printed",
        result.total_lines,
        expected.lines
    );
    check_log(&log_path, &expected)?;
    ensure!(
        result.tail == expected.tail,
        "the tail differs: {:?} … vs {:?} …",
        result.tail.first(),
        expected.tail.first()
    );
    if style == Style::Pytest {
        // A failure every 1,000th line; the first ones are kept, up to the cap.
        let kept = (expected.lines / 1000).min(rein_core::testing::failures::MAX_FAILURES as u64);
        let first: Vec<String> = (1..=kept.min(3))
            .map(|k| {
                format!(
                    "tests/test_module_{:03}.py::test_case_{}",
                    (k * 1000) % 500,
                    k * 1000
                )
            })
            .collect();
        ensure!(
            result.failures.len() as u64 == kept && result.failures[..first.len()] == first[..],
            "unexpected failures: {} kept, first {:?}",
            result.failures.len(),
            result.failures.get(..3)
        );
    }
    Ok(Run {
        style,
        took,
        before,
        peak_kb,
        total_bytes: result.total_bytes,
        failures: result.failures.len(),
    })
}

struct Expected {
    bytes: u64,
    lines: u64,
    hash: blake3::Hash,
    tail: Vec<String>,
}

fn expected(style: Style, total: u64) -> Result<Expected> {
    let mut hasher = blake3::Hasher::new();
    let mut bytes = 0u64;
    let mut lines = 0u64;
    let mut tail = std::collections::VecDeque::with_capacity(TAIL_LINES + 1);
    let mut last_piece: Vec<u8> = Vec::new();
    generate(style, total, |piece| {
        hasher.update(piece);
        bytes += piece.len() as u64;
        lines += piece.iter().filter(|&&b| b == b'\n').count() as u64;
        last_piece.clear();
        last_piece.extend_from_slice(piece);
        for l in String::from_utf8_lossy(piece).lines() {
            if tail.len() == TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(l.to_owned());
        }
        Ok(())
    })?;
    Ok(Expected {
        bytes,
        lines,
        hash: hasher.finalize(),
        tail: tail.into(),
    })
}

/// The spilled log holds exactly the stream that was printed.
fn check_log(log: &Path, expected: &Expected) -> Result<()> {
    let (log_size, log_hash) = hash_file(log)?;
    ensure!(
        log_size == expected.bytes,
        "the log holds {log_size} bytes, {} were printed",
        expected.bytes
    );
    ensure!(
        log_hash == expected.hash,
        "the log's BLAKE3 differs from the stream's"
    );
    Ok(())
}

fn hash_file(path: &Path) -> Result<(u64, blake3::Hash)> {
    let mut file =
        std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0; 1 << 16];
    let mut size = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        size += n as u64;
    }
    Ok((size, hasher.finalize()))
}

/// Resets this process's `VmHWM` to its current RSS (Linux ≥ 4.0).
fn reset_peak() {
    reset_peak_of("/proc/self/clear_refs");
}

/// Resets the `VmHWM` behind a `clear_refs` file.
fn reset_peak_of(clear_refs: &str) {
    if let Err(error) = std::fs::write(clear_refs, "5") {
        eprintln!("  cannot reset the peak RSS ({error}): the peak is since start");
    }
}

struct ServerRun {
    took: Duration,
    before: procfs::Mem,
    peak_kb: u64,
    sampled_max_kb: u64,
    total_bytes: u64,
}

/// One row of the table from its runs' (time, memory before, peak KiB,
/// bytes printed).
fn row(out: &mut String, name: &str, runs: &[(Duration, &procfs::Mem, u64, u64)], failures: &str) {
    use std::fmt::Write as _;
    let times: Vec<f64> = runs.iter().map(|r| r.0.as_secs_f64()).collect();
    let before: Vec<f64> = runs.iter().map(|r| r.1.rss_bytes() as f64).collect();
    let peaks: Vec<f64> = runs.iter().map(|r| (r.2 * 1024) as f64).collect();
    let total = runs.first().map_or(0, |r| r.3);
    let _ = writeln!(
        out,
        "| {name} | {} ({}) | {:.0} MiB/s | {} | {} ({}) | {failures} |",
        secs(median(&times)),
        report::range(&times, secs),
        total as f64 / median(&times) / (1 << 20) as f64,
        bytes(median(&before) as u64),
        bytes(median(&peaks) as u64),
        bytes(peaks.iter().copied().fold(0.0, f64::max) as u64),
    );
}

/// One task in a real `rein lsp` whose only tool call prints the stream.
async fn server_run(rein: &Path, exe: &Path, total: u64) -> Result<ServerRun> {
    use rein_testkit::LspClient;
    use rein_testkit::editor::{EditorOptions, HeadlessEditor};
    use serde_json::json;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    let dir = tempfile::tempdir()?;
    let tmp = dir.path().canonicalize()?;
    let root = tmp.join("project");
    std::fs::create_dir_all(&root)?;
    std::fs::write(root.join("README.md"), "A project.\n")?;
    let command = format!("'{}' emit --bytes {total} --style pytest", exe.display());
    let scenario = json!({
        "require_api_key": false,
        "replies": [
            {"text": "Running it.", "tool_calls": [{"name": "run_command", "input": {"command": command, "timeout_s": 3600}}]},
            {"text": "Done."}
        ]
    });
    let (mut child, scenario_path) = crate::scripted::spawn(rein, &tmp, &root, &scenario)?;
    let pid = child.id().context("no pid")?;
    let stdin = child.stdin.take().context("stdin")?;
    let stdout = child.stdout.take().context("stdout")?;
    let client = LspClient::new(stdout, stdin).with_timeout(Duration::from_secs(3600));
    let options = EditorOptions {
        settings: json!({
            "provider": "scripted",
            "scenario": scenario_path,
            "approvalTimeoutSecs": 60,
            "maxTurns": 5
        }),
        ..EditorOptions::default()
    };
    let mut editor =
        HeadlessEditor::new(client, &root, options).with_timeout(Duration::from_secs(3600));
    editor.initialize().await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    // The peak of the task, not of start-up (the tokenizer's tables).
    reset_peak_of(&format!("/proc/{pid}/clear_refs"));
    let before = procfs::mem(pid)?;

    // The sampler: the server's RSS every 10 ms while the task runs.
    let stop = Arc::new(AtomicBool::new(false));
    let max_kb = Arc::new(AtomicU64::new(0));
    let sampler = {
        let (stop, max_kb) = (Arc::clone(&stop), Arc::clone(&max_kb));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Ok(m) = procfs::mem(pid) {
                    max_kb.fetch_max(m.rss_kb, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    let started = Instant::now();
    let response = editor
        .request(
            "workspace/executeCommand",
            json!({"command": "rein.runTask", "arguments": [{"instruction": "Run the suite and report."}]}),
        )
        .await?;
    let task = response["result"]["taskId"]
        .as_str()
        .with_context(|| format!("no task: {response}"))?
        .to_owned();
    let status = editor.until_task_ends(&task).await?;
    let took = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    let peak_kb = procfs::mem(pid)?.peak_kb;
    let _ = editor.shutdown().await;
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    ensure!(
        status["state"].as_str().and_then(|s| s.parse().ok())
            == Some(rein_core::task::TaskState::Succeeded),
        "the task ended {status}"
    );

    let artifacts = root.join(".rein/artifacts").join(&task);
    let expected = expected(Style::Pytest, total)?;
    check_log(&artifacts.join("run-1.log"), &expected)?;
    let request = std::fs::read_to_string(artifacts.join("request-2.json"))
        .context("the second request's artifact")?;
    let request: serde_json::Value = serde_json::from_str(&request)?;
    let sent = request.to_string();
    let shown = format!("last {TAIL_LINES} lines of {}:", expected.lines);
    ensure!(sent.contains(&shown), "the model was not shown {shown:?}");
    for line in &expected.tail {
        ensure!(
            sent.contains(line.as_str()),
            "the model was not shown the tail line {line:?}"
        );
    }
    ensure!(
        sent.contains(&format!("run-1.log ({} lines)", expected.lines)),
        "the model was not given the log's path"
    );
    Ok(ServerRun {
        took,
        before,
        peak_kb,
        sampled_max_kb: max_kb.load(Ordering::Relaxed),
        total_bytes: expected.bytes,
    })
}
