//! `rein undo [TASK_ID]`: puts every file a task changed back as it was
//! before the task, keeping what the user changed since (the task
//! service's undo, on the disk). stdout: a line per file, and for a
//! conflict the lines in question; exit 0 when every file is undone (or
//! already was), 1 when some file is left as it is, 2 for a usage error
//! (no such task, one still running).

use std::io::Write;
use std::process::ExitCode;

use rein_app::service::{ServiceOptions, TaskService};
use rein_app::undo::{UndoReport, Undone};
use rein_core::inert;
use rein_core::os::disk::DiskWorkspace;
use rein_core::task::TaskId;
use rein_core::workspace::Workspace;

use crate::args::UndoArgs;

const EXIT_INCOMPLETE: u8 = 1;
const EXIT_USAGE: u8 = 2;
/// The most lines of one side of a conflict shown.
const SHOWN_LINES: usize = 12;

pub fn main(args: UndoArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("rein undo: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(report) => {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(shown(&report).as_bytes());
            let _ = stdout.flush();
            if report.incomplete() {
                ExitCode::from(EXIT_INCOMPLETE)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(message) => {
            eprintln!("rein undo: {}", inert::block(&message));
            ExitCode::from(EXIT_USAGE)
        }
    }
}

async fn run(args: UndoArgs) -> Result<UndoReport, String> {
    let given = match &args.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?,
    };
    let disk = DiskWorkspace::new(&given)
        .map_err(|e| format!("the workspace {}: {e}", given.display()))?;
    let service = TaskService::open(disk.root(), ServiceOptions::this_process())?;
    let task = match args.task {
        Some(task) => TaskId(task),
        None => {
            let tasks = service.store().tasks().map_err(|e| e.to_string())?;
            let latest = tasks
                .into_iter()
                .next()
                .ok_or("this workspace has no tasks to undo")?;
            TaskId(latest.id)
        }
    };
    service.undo(&task, &disk).await
}

/// The report as printed: the summary, a line per file, a conflict's
/// lines (the file's text, inert: a repository's bytes never drive the
/// terminal).
fn shown(report: &UndoReport) -> String {
    let mut out = format!("rein undo · task {}\n", report.task);
    for file in &report.files {
        out.push_str(&format!("  {}\n", inert::line(&file.line())));
        if let Undone::Conflict { clashes } = &file.result {
            for clash in clashes {
                out.push_str(&format!("    line {}, now:\n", clash.ours_line));
                push_lines(&mut out, &clash.ours);
                out.push_str("    Rein's change there (what undo would take back):\n");
                push_lines(&mut out, &clash.base);
                out.push_str("    before the task:\n");
                push_lines(&mut out, &clash.theirs);
            }
        }
    }
    out.push_str(&report.summary());
    out.push('\n');
    out
}

fn push_lines(out: &mut String, text: &str) {
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        out.push_str("      (nothing)\n");
    }
    for line in lines.iter().take(SHOWN_LINES) {
        out.push_str(&format!("      | {}\n", inert::line(line)));
    }
    if lines.len() > SHOWN_LINES {
        out.push_str(&format!(
            "      | … {} more lines\n",
            lines.len() - SHOWN_LINES
        ));
    }
}
