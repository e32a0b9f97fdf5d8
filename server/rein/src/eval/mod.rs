//! `rein eval`: runs a suite of fix-the-failing-test tasks end to end with
//! whatever provider is configured, and judges each by Rein's verdict *and*
//! the suite's independent check (held-out tests the agent never saw);
//! `rein eval compare` shows what a harness change won and lost.
//!
//! - `suite`: reading a suite from disk;
//! - `runner`: a fresh copy per task, `rein run` as a child process, the
//!   check in the sandbox, bounded parallelism;
//! - `report`: the per-task and overall figures, JSON and markdown;
//! - `html`: the same summary as a self-contained page, `report.html`;
//! - `compare`: two reports side by side.
//!
//! stdout carries the markdown summary; stderr the progress.

mod compare;
mod html;
pub mod report;
mod runner;
pub mod suite;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::cli::{EvalArgs, EvalCommand, EvalCompareArgs, EvalRunArgs};
use rein_app::setup as launch;
use report::{Report, TaskResult};
use suite::{Selection, Suite};

const EXIT_USAGE: u8 = 2;

pub fn main(args: EvalArgs) -> ExitCode {
    let result = match args.command {
        EvalCommand::Run(args) => run(args),
        EvalCommand::Compare(args) => compare(&args),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("rein eval: {message}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn run(args: EvalRunArgs) -> Result<ExitCode, String> {
    let suite = Suite::load(&args.suite)?;
    let selection = Selection {
        ids: args.task.clone(),
        split: args.split.clone(),
    };
    let tasks: Vec<Arc<suite::Task>> = suite
        .select(&selection)?
        .into_iter()
        .map(|t| Arc::new(t.clone()))
        .collect();
    if let Some(config) = &args.config
        && !config.is_file()
    {
        return Err(format!("--config {}: no such file", config.display()));
    }
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let out = match &args.out {
        Some(out) => out.clone(),
        None => PathBuf::from("eval-results").join(format!("{}-{started_unix}", suite.name)),
    };
    // Each task's folder (`out/tasks/<id>`) is cleared before its run:
    // `out` must not be in the suite, nor the suite in `out/tasks`.
    let overlaps =
        |out: &Path| out.starts_with(&suite.root) || suite.root.starts_with(out.join("tasks"));
    let absolute = std::path::absolute(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    if overlaps(&absolute) {
        return Err(format!(
            "--out {} overlaps the suite {}: results go elsewhere",
            out.display(),
            suite.root.display()
        ));
    }
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let out = out
        .canonicalize()
        .map_err(|e| format!("{}: {e}", out.display()))?;
    if overlaps(&out) {
        return Err(format!(
            "--out {} overlaps the suite {}: results go elsewhere",
            out.display(),
            suite.root.display()
        ));
    }
    let config = match &args.config {
        Some(c) => Some(
            c.canonicalize()
                .map_err(|e| format!("{}: {e}", c.display()))?,
        ),
        None => None,
    };
    let rein = launch::this_binary();
    let options = Arc::new(runner::Options {
        rein: rein.clone(),
        out: out.clone(),
        jobs: args.jobs.max(1),
        config,
        task_timeout: Duration::from_secs(args.task_timeout),
        check_timeout: Duration::from_secs(args.check_timeout),
    });
    let total = tasks.len();
    eprintln!(
        "rein eval · {} · {total} task{} · {} at a time · results in {}",
        suite.name,
        if total == 1 { "" } else { "s" },
        options.jobs,
        out.display()
    );
    if let Some(attribution) = &suite.attribution {
        eprintln!("  suite: {attribution}");
    }
    let finished = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let done: Arc<dyn Fn(&TaskResult) + Send + Sync> = Arc::new(move |r: &TaskResult| {
        let n = finished.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        eprintln!("[{n}/{total}] {}", progress_line(r));
    });

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let wall = Instant::now();
    let results = runtime.block_on(runner::run_all(tasks, Arc::clone(&options), done));
    let check_sandbox = runner::check_confinement(&rein, &out);
    runtime.shutdown_background();

    let first_run = results.iter().find_map(|r| {
        rein_cli::run_result::RunResult::read(&Path::new(&r.dir).join("result.json")).ok()
    });
    let report = Report {
        version: report::VERSION,
        suite: suite.name.clone(),
        label: args.label.unwrap_or_else(|| {
            out.file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        }),
        rein_version: env!("CARGO_PKG_VERSION").to_owned(),
        provider: first_run
            .as_ref()
            .map_or_else(|| "unknown".to_owned(), |r| r.provider.clone()),
        model: first_run
            .as_ref()
            .map_or_else(|| "unknown".to_owned(), |r| r.model.clone()),
        check_sandbox,
        jobs: options.jobs,
        started_unix,
        wall_ms: u64::try_from(wall.elapsed().as_millis()).unwrap_or(u64::MAX),
        tasks: results,
    };
    let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    let markdown = report.markdown();
    for (name, text) in [
        ("report.json", json + "\n"),
        ("report.md", markdown.clone()),
        ("report.html", html::html(&report)),
    ] {
        let path = out.join(name);
        // Replaced atomically in the report folder, never through a link.
        rein_core::os::atomic::replace(&path, text.as_bytes(), None)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(markdown.as_bytes());
    let _ = writeln!(stdout, "\nreport: {}", out.join("report.json").display());
    let _ = writeln!(stdout, "page: {}", out.join("report.html").display());
    let _ = stdout.flush();
    let errors = report.tasks.iter().filter(|t| t.error.is_some()).count();
    Ok(if errors == 0 {
        ExitCode::SUCCESS
    } else {
        eprintln!("rein eval: {errors} task(s) could not be run or judged; see their `note`");
        ExitCode::FAILURE
    })
}

fn compare(args: &EvalCompareArgs) -> Result<ExitCode, String> {
    let read = |p: &Path| {
        let path = if p.is_dir() {
            p.join("report.json")
        } else {
            p.to_path_buf()
        };
        Report::read(&path)
    };
    let (a, b) = (read(&args.a)?, read(&args.b)?);
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(compare::compare(&a, &b).as_bytes());
    let _ = stdout.flush();
    Ok(ExitCode::SUCCESS)
}

fn progress_line(r: &TaskResult) -> String {
    let verdict = if r.false_claim {
        "FALSE CLAIM"
    } else if r.fixed {
        "fixed"
    } else {
        "not fixed"
    };
    let mut line = format!(
        "{}: {verdict} ({}, {} turns, {:.1} s)",
        report::cell(&r.id),
        report::cell(&r.state),
        r.turns,
        r.wall_ms as f64 / 1000.0
    );
    if let Some(error) = &r.error {
        line.push_str(&format!(
            " · {}",
            report::cell(&report::shorten(error, 200))
        ));
    }
    line
}
