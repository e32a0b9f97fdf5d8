//! `rein trace TASK_ID [--html FILE]`: what a task did, read back from its
//! trace (`<workspace>/.rein/traces/<task-id>.jsonl`, written by
//! `rein_core::os::trace`). On stdout, a timeline: a header that says how
//! the task went, then one line per meaningful event, grouped by turn. With
//! `--html`, one self-contained HTML file instead: the timeline, a chart of
//! tokens and cost per turn, the diffs of every edit and the evidence.
//!
//! The workspace is `--workspace` (exactly), or the current directory, or the nearest
//! folder above it that has a `.rein/` (as git finds `.git/`). A trace is
//! read leniently: a line cut by a crash is skipped with a note, an event of
//! a kind this version does not know is shown as it is. Exit codes: 0 shown;
//! 1 the trace or the report could not be read or written; 2 no workspace,
//! or no trace for that id (the traces there are listed).
//!
//! A trace holds the model's words, commands and test output: what reaches
//! the terminal is inert (`terminal::inert`), the HTML is escaped.

pub(crate) mod html;
mod markdown;
mod model;
mod output_tail;
mod read;
mod timeline;

use std::collections::HashMap;
use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rein_core::os::process::process_redactor;

use crate::cli::TraceArgs;
use rein_core::inert;

/// No workspace, or no such trace.
const EXIT_USAGE: u8 = 2;

struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    fn usage(message: String) -> Self {
        Self {
            code: EXIT_USAGE,
            message,
        }
    }

    fn io(message: String) -> Self {
        Self { code: 1, message }
    }
}

pub fn main(args: TraceArgs) -> ExitCode {
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure { code, message }) => {
            // It may list the goals of traces.
            eprintln!("rein trace: {}", inert::block(&message));
            ExitCode::from(code)
        }
    }
}

fn run(args: &TraceArgs) -> Result<(), Failure> {
    let root = match &args.workspace {
        // The project the user named, not a folder above it.
        Some(dir) => {
            let root = std::path::absolute(dir)
                .map_err(|e| Failure::usage(format!("the workspace {}: {e}", dir.display())))?;
            if !root.join(".rein").is_dir() {
                return Err(Failure::usage(format!(
                    "no .rein/ folder in {}: Rein has run no task there.",
                    root.display()
                )));
            }
            root
        }
        None => {
            let start = std::env::current_dir()
                .map_err(|e| Failure::usage(format!("no current directory: {e}")))?;
            find_root(&start).ok_or_else(|| {
                Failure::usage(format!(
                    "no .rein/ folder in {} or any folder above it: Rein has run no task there. \
                     Run it in the project (or pass --workspace DIR).",
                    start.display()
                ))
            })?
        }
    };
    // Traces are redacted when written; this catches what an older writer
    // or a key set since may have let through.
    let redactor = process_redactor(None);
    let redact = |line: &str| redactor.redact(line).into_owned();
    let traces = root.join(".rein").join("traces");
    let path = resolve(&root, &traces, &args.task_id, &redact)?;
    let trace = read::read_file(&path, &redact)
        .map_err(|e| Failure::io(format!("cannot read {}: {e}", path.display())))?;
    let id = stem(&path);
    let goal = if trace.events.iter().any(|e| e.str("goal").is_some()) {
        None
    } else {
        goals_from_state(&root).remove(&id).map(|g| redact(&g))
    };
    let source = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let report = model::build(&id, &source, &trace, goal);

    let mut stdout = std::io::stdout().lock();
    let written = match &args.html {
        Some(file) => {
            // Replaced atomically in the folder named, never through a link.
            rein_core::os::atomic::replace(
                file,
                html::render(&report, Some(&root)).as_bytes(),
                None,
            )
            .map_err(|e| Failure::io(format!("cannot write {}: {e}", file.display())))?;
            writeln!(
                stdout,
                "wrote {} (task {}, {} events)",
                inert::line(&file.display().to_string()),
                inert::line(&report.task_id),
                report.events
            )
        }
        None => {
            let style = timeline::Style {
                color: std::io::stdout().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
                verbose: args.verbose,
                workspace: Some(root.clone()),
            };
            stdout.write_all(timeline::render(&report, style).as_bytes())
        }
    };
    // A closed pipe (`rein trace … | head`) is not an error worth a word.
    let _ = written.and_then(|()| stdout.flush());
    Ok(())
}

/// The nearest folder from `start` upwards that holds a `.rein/` folder.
fn find_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join(".rein").is_dir())
        .map(Path::to_path_buf)
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The trace of `given`: the task id, with or without `.jsonl`, or a part
/// of it that names one trace only.
fn resolve(
    root: &Path,
    traces: &Path,
    given: &str,
    redact: &dyn Fn(&str) -> String,
) -> Result<PathBuf, Failure> {
    let given = given.trim();
    let id = given.strip_suffix(".jsonl").unwrap_or(given);
    // An id names a file in the traces folder, never a path elsewhere.
    let plain = !id.is_empty() && !id.contains(['/', '\\']) && !id.starts_with('.');
    if plain {
        let exact = traces.join(format!("{id}.jsonl"));
        if exact.is_file() {
            return Ok(exact);
        }
    }
    let all = trace_files(traces);
    let matches: Vec<&PathBuf> = all
        .iter()
        .filter(|path| plain && stem(path).contains(id))
        .collect();
    if let [only] = matches.as_slice() {
        return Ok((*only).clone());
    }
    let (intro, listed): (String, Vec<PathBuf>) = if matches.len() > 1 {
        (
            format!(
                "`{given}` is part of {} task ids; give more of it. They are, newest first:",
                matches.len()
            ),
            matches.into_iter().cloned().collect(),
        )
    } else if all.is_empty() {
        return Err(Failure::usage(format!(
            "no trace of a task `{given}`: there are no traces in {} yet",
            traces.display()
        )));
    } else {
        (
            format!(
                "no trace of a task `{given}` in {}. The tasks with a trace, newest first:",
                traces.display()
            ),
            all,
        )
    };
    Err(Failure::usage(format!(
        "{intro}\n{}",
        listing(root, &listed, redact)
    )))
}

/// The `.jsonl` files of the traces folder.
fn trace_files(traces: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(traces) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
}

/// One line per trace, newest first: id, start, last state, goal.
fn listing(root: &Path, files: &[PathBuf], redact: &dyn Fn(&str) -> String) -> String {
    struct Row {
        id: String,
        start_ms: Option<i64>,
        modified: Option<std::time::SystemTime>,
        start: String,
        state: String,
        goal: String,
    }
    let goals = goals_from_state(root);
    let mut rows: Vec<Row> = files
        .iter()
        .map(|path| {
            let id = stem(path);
            let trace = read::read_file(path, redact).unwrap_or_default();
            let first = trace.events.iter().find(|e| e.ts.is_some());
            let state = trace
                .events
                .iter()
                .rev()
                .find_map(|e| (e.kind == "status").then(|| e.str("state")).flatten())
                .unwrap_or("?");
            let goal = trace
                .events
                .iter()
                .find_map(|e| e.str("goal").map(str::to_owned))
                .or_else(|| goals.get(&id).map(|g| redact(g)))
                .unwrap_or_default();
            Row {
                start_ms: first.and_then(|e| e.ts_ms),
                start: first
                    .and_then(|e| e.ts.as_deref())
                    .map(|ts| ts.get(..19).unwrap_or(ts).replace('T', " "))
                    .unwrap_or_else(|| "?".to_owned()),
                modified: std::fs::metadata(path).and_then(|m| m.modified()).ok(),
                state: if model::is_final(state) || state == "?" {
                    state.to_owned()
                } else {
                    format!("{state} (unfinished)")
                },
                goal: model::first_line(&markdown::strip(&goal), 90).0,
                id,
            }
        })
        .collect();
    rows.sort_by(|a, b| (b.start_ms, b.modified, &b.id).cmp(&(a.start_ms, a.modified, &a.id)));
    let id_width = rows.iter().map(|r| r.id.chars().count()).max().unwrap_or(0);
    let state_width = rows
        .iter()
        .map(|r| r.state.chars().count())
        .max()
        .unwrap_or(0);
    rows.iter()
        .map(|r| {
            format!(
                "  {:<id_width$}  {}  {:<state_width$}  {}",
                r.id, r.start, r.state, r.goal
            )
            .trim_end()
            .to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The goal of every task in the workspace's task database (the trace
/// itself does not record it). Empty when there is no database or it
/// cannot be read: the goal is a nicety here.
fn goals_from_state(root: &Path) -> HashMap<String, String> {
    let path = rein_store::state_db_path(root);
    if !path.is_file() {
        return HashMap::new();
    }
    match rein_store::Store::open(&path).and_then(|store| store.tasks()) {
        Ok(tasks) => tasks.into_iter().map(|t| (t.id, t.goal)).collect(),
        Err(error) => {
            tracing::debug!(%error, "cannot read the goals from the task database");
            HashMap::new()
        }
    }
}
