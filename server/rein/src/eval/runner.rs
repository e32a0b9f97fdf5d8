//! Running a suite: each task in a fresh copy of its project, by a
//! separate `rein run --yes` process (a crash or a hang of one task cannot
//! take the others with it), a few at a time; then the suite's check on
//! what the agent left, in Rein's sandbox.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rein_core::exec::{CommandKind, CommandSpec, Exec};
use rein_core::os::process::ProcessExec;
use rein_core::sandbox_config::SandboxConfig;
use tokio::process::Command;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::report::TaskResult;
use super::suite::Task;
use rein_app::confinement::SandboxLauncher;
use rein_cli::run_result::RunResult;

/// How the tasks are run.
#[derive(Clone, Debug)]
pub struct Options {
    /// This binary, which runs each task as `rein run`.
    pub rein: PathBuf,
    /// Where each task's copy, output and logs go (`<out>/tasks/<id>/`).
    pub out: PathBuf,
    pub jobs: usize,
    /// Settings for every task (`.rein/config.toml` of each copy, trusted:
    /// the person running the eval chose them).
    pub config: Option<PathBuf>,
    /// Past this, the task is interrupted (and killed 10 s later).
    pub task_timeout: Duration,
    pub check_timeout: Duration,
}

/// What the checks run in, for the report's header.
pub fn check_confinement(rein: &Path, dir: &Path) -> String {
    match SandboxLauncher::new(rein, dir, &SandboxConfig::default()) {
        Ok(launcher) => {
            use rein_core::exec::Launcher as _;
            launcher.confinement().describe()
        }
        Err(e) => format!("cannot set up the sandbox: {e}"),
    }
}

/// Runs `tasks`, at most `options.jobs` at a time; `done` hears of each
/// as it ends. Results come back in the tasks' order.
pub async fn run_all(
    tasks: Vec<Arc<Task>>,
    options: Arc<Options>,
    done: Arc<dyn Fn(&TaskResult) + Send + Sync>,
) -> Vec<TaskResult> {
    let permits = Arc::new(Semaphore::new(options.jobs.max(1)));
    let mut handles = Vec::new();
    for task in tasks {
        let (permits, options, done) = (
            Arc::clone(&permits),
            Arc::clone(&options),
            Arc::clone(&done),
        );
        let id = task.id.clone();
        let split = task.split.clone();
        let handle = tokio::spawn(async move {
            let _permit = permits.acquire_owned().await;
            let result = run_one(&task, &options).await;
            done(&result);
            result
        });
        handles.push((id, split, handle));
    }
    let mut results = Vec::new();
    for (id, split, handle) in handles {
        results.push(handle.await.unwrap_or_else(|e| {
            errored(
                &id,
                &split,
                PathBuf::new(),
                format!("the task's runner failed: {e}"),
            )
        }));
    }
    results
}

async fn run_one(task: &Task, options: &Options) -> TaskResult {
    let dir = options.out.join("tasks").join(&task.id);
    let project = dir.join("project");
    if let Err(e) = fresh_copy(&task.project, &project, options.config.as_deref()) {
        return errored(&task.id, &task.split, dir, e);
    }
    let started = Instant::now();
    let ran = rein_run(task, options, &dir, &project).await;
    let wall_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let mut result = TaskResult::not_run(&task.id, &task.split, &dir);
    result.wall_ms = wall_ms;
    let timed_out = matches!(ran, Ran::TimedOut);
    match ran {
        Ran::TimedOut => {
            result.state = "timed_out".to_owned();
            result.reason = format!(
                "stopped by rein eval after {} s",
                options.task_timeout.as_secs()
            );
        }
        Ran::Failed(e) => result.error = Some(e),
        Ran::Exited => {}
    }
    match RunResult::read(&dir.join("result.json")) {
        Ok(run) => {
            // After eval's interrupt Rein says "cancelled": the time limit is the news.
            if !timed_out {
                result.state = run.state.as_str().to_owned();
                result.reason = run.reason;
            }
            result.turns = run.turns;
            result.input_tokens = run.input_tokens;
            result.output_tokens = run.output_tokens;
            result.cost_usd = run.cost_usd;
            result.unpriced_calls = run.unpriced_calls;
            // The trace, opened beneath the copy (whose files the task's
            // commands could change) without following a link.
            let trace = rein_fsroot::Root::open(&project, rein_fsroot::Links::Refuse)
                .and_then(|copy| copy.read(format!(".rein/traces/{}.jsonl", run.task)))
                .unwrap_or_default();
            result.count_candidates(&String::from_utf8_lossy(&trace));
        }
        Err(e) if !timed_out && result.error.is_none() => {
            result.error = Some(format!(
                "`rein run` left no result ({e}); see {}",
                dir.join("run.err").display()
            ));
        }
        Err(_) => {}
    }
    if result.error.is_none() {
        match check(task, options, &dir, &project).await {
            Ok(passed) => result.check_passed = Some(passed),
            Err(e) => result.error = Some(e),
        }
    }
    result.judge();
    result
}

fn errored(id: &str, split: &str, dir: PathBuf, error: String) -> TaskResult {
    TaskResult {
        error: Some(error),
        ..TaskResult::not_run(id, split, &dir)
    }
}

enum Ran {
    Exited,
    TimedOut,
    Failed(String),
}

/// `rein run --yes --fix-test …` on the copy. Its exit code says nothing
/// the result file does not; the output goes to `run.out` and `run.err`.
async fn rein_run(task: &Task, options: &Options, dir: &Path, project: &Path) -> Ran {
    // Made in the task's folder, never through a link (the project copy
    // next to them is where the task's commands ran).
    let opened = rein_fsroot::Root::open(dir, rein_fsroot::Links::Refuse)
        .and_then(|folder| Ok((folder.create("run.out")?, folder.create("run.err")?)));
    let (out, err) = match opened {
        Ok(files) => files,
        Err(e) => return Ran::Failed(format!("cannot write the run's output: {e}")),
    };
    let mut command = Command::new(&options.rein);
    command
        .arg("run")
        .arg("--yes")
        .arg("--workspace")
        .arg(project)
        .arg("--result-json")
        .arg(dir.join("result.json"))
        .args(match &task.fix_error {
            Some(error) => ["--fix-error".to_owned(), error.argument()],
            None => ["--fix-test".to_owned(), task.fix_test.clone()],
        })
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .env("NO_COLOR", "1")
        .kill_on_drop(true);
    if options.config.is_some() {
        command.arg("--trust-workspace");
    }
    if let Some(scenario) = &task.scenario {
        // Read only by the scripted provider.
        command.env("REIN_SCENARIO", scenario);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return Ran::Failed(format!("cannot start {}: {e}", options.rein.display())),
    };
    match tokio::time::timeout(options.task_timeout, child.wait()).await {
        Ok(Ok(_status)) => Ran::Exited,
        Ok(Err(e)) => Ran::Failed(format!("waiting for `rein run`: {e}")),
        Err(_) => {
            // Ctrl-C first: the task ends cleanly and still writes its result.
            if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGINT,
                );
            }
            if tokio::time::timeout(Duration::from_secs(10), child.wait())
                .await
                .is_err()
            {
                let _ = child.kill().await;
            }
            Ran::TimedOut
        }
    }
}

/// What is put back as the suite wrote it before the check: the test's
/// whole folder (`tests/…`) or its one file at the top; for a task that
/// names a diagnostic, the project's `tests/` folder, if it has one.
fn put_back(task: &Task) -> Option<PathBuf> {
    if task.fix_error.is_some() {
        return Some(PathBuf::from("tests"));
    }
    let test_file = Path::new(task.fix_test.split_once("::").map_or("", |(p, _)| p));
    match test_file.components().next() {
        Some(first) if test_file.components().count() > 1 => Some(PathBuf::from(first.as_os_str())),
        Some(_) => Some(test_file.to_path_buf()),
        None => None,
    }
}

/// The suite's verdict on what the agent left: its test files put back as
/// the suite wrote them (an agent that edits a test does not pass by it),
/// the held-out files added, then `check`, sandboxed.
async fn check(task: &Task, options: &Options, dir: &Path, project: &Path) -> Result<bool, String> {
    if let Some(tests) = put_back(task) {
        let original = task.project.join(&tests);
        if original.is_dir() {
            copy_tree(&original, &project.join(&tests))?;
        } else if original.is_file() {
            copy_file(&original, &project.join(&tests))?;
        }
    }
    if let Some(heldout) = &task.heldout {
        copy_tree(heldout, project)?;
    }
    let launcher = SandboxLauncher::new(&options.rein, project, &SandboxConfig::default())?;
    let exec = ProcessExec::new().with_launcher(Arc::new(launcher));
    let spec = CommandSpec {
        command: task.check.clone(),
        cwd: project.to_path_buf(),
        timeout: options.check_timeout,
        log_path: dir.join("check.log"),
        kind: CommandKind::Other,
        network: false,
        sandbox_mode: None,
        report: None,
        layer: None,
    };
    let result = exec
        .run(spec, CancellationToken::new())
        .await
        .map_err(|e| format!("the check did not run: {e}"))?;
    Ok(result.succeeded())
}

/// `to` as a fresh copy of `from` (what a previous eval left there is
/// removed first), with `config` as its `.rein/config.toml`.
fn fresh_copy(from: &Path, to: &Path, config: Option<&Path>) -> Result<(), String> {
    if let Some(parent) = to.parent()
        && parent.exists()
    {
        std::fs::remove_dir_all(parent)
            .map_err(|e| format!("cannot clear {}: {e}", parent.display()))?;
    }
    copy_tree(from, to)?;
    if let Some(config) = config {
        copy_file(config, &to.join(".rein/config.toml"))?;
    }
    Ok(())
}

/// Copies the files and folders of `from` into `to`. A symbolic link is
/// refused: a suite's link could point anywhere on the machine.
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", from.display()))?;
        let kind = entry
            .file_type()
            .map_err(|e| format!("{}: {e}", entry.path().display()))?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            copy_file(&entry.path(), &target)?;
        } else {
            return Err(format!(
                "{}: only plain files and folders can be in a task",
                entry.path().display()
            ));
        }
    }
    Ok(())
}

fn copy_file(from: &Path, to: &Path) -> Result<(), String> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symbolic_link_in_a_task_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("from");
        std::fs::create_dir_all(&from).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", from.join("passwd")).unwrap();
        let error = copy_tree(&from, &dir.path().join("to")).unwrap_err();
        assert!(error.contains("only plain files"), "{error}");
        assert!(!dir.path().join("to/passwd").exists());
    }
}
