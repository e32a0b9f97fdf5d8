//! Set-up and diagnostics for the VS Code suites: `setup.sh` (npm, the
//! extension's package, a cached code-server) and what to print when a
//! test fails.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::process::Command;

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_owned()
}

pub fn extension_dir() -> PathBuf {
    repo().join("editors/vscode")
}

/// Runs one part of `tests/vscode/setup.sh` and returns the path it made.
/// Fails the test, with the script's output, when set-up cannot happen
/// (no Node 20, no network to the registries): nothing is skipped.
pub async fn setup(part: &str) -> PathBuf {
    let started = Instant::now();
    let output = run(
        Command::new("bash")
            .arg(repo().join("tests/vscode/setup.sh"))
            .args(part.split_whitespace()),
        // A cold code-server install takes a few minutes on two cores.
        Duration::from_secs(900),
    )
    .await;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "VS Code test set-up `{part}` failed ({}); the suite needs Node 20, npm and, on its first run, the npm registry and Debian's packages.\n{stderr}\n{stdout}",
        output.status
    );
    eprintln!(
        "[vscode] set-up `{part}` took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let last = stdout.lines().last().unwrap_or_default().trim();
    assert!(
        !last.is_empty(),
        "set-up `{part}` printed no path\n{stderr}"
    );
    PathBuf::from(last)
}

/// Runs a command to its end, with a limit that only stops a hung one.
pub async fn run(command: &mut Command, limit: Duration) -> std::process::Output {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let description = format!("{command:?}");
    tokio::time::timeout(limit, command.output())
        .await
        .unwrap_or_else(|_| panic!("{description} did not end within {limit:?}"))
        .unwrap_or_else(|e| panic!("{description} could not run: {e}"))
}

pub fn copy_dir(from: &Path, to: &Path) {
    rein_testkit::copy_project(from, to).unwrap();
}

/// Every file under `dir`, recursively (symbolic links not followed).
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(entry.path()),
                Ok(t) if t.is_file() => out.push(entry.path()),
                _ => {}
            }
        }
    }
    out.sort();
    out
}

/// The files under `dir` whose bytes contain `needle`.
pub fn files_containing(dir: &Path, needle: &str) -> Vec<PathBuf> {
    files(dir)
        .into_iter()
        .filter(|f| {
            std::fs::read(f)
                .is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
        })
        .collect()
}

/// The last `lines` lines of a file, or why there are none.
pub fn tail(path: &Path, lines: usize) -> String {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let all: Vec<&str> = text.lines().collect();
            all[all.len().saturating_sub(lines)..].join("\n")
        }
        Err(e) => format!("({}: {e})", path.display()),
    }
}

/// What a failed end-to-end run left behind, for the failure message: the
/// driver's result, the extension's output channels (its log and the LSP
/// trace, with the server's stderr), the server's own log, code-server's.
pub fn diagnostics(out: &Path, workspace: &Path) -> String {
    let mut text = String::new();
    let mut section = |title: &str, body: String| {
        text.push_str(&format!("\n----- {title} -----\n{body}\n"));
    };
    section("result.json", tail(&out.join("result.json"), 80));
    for file in files(out) {
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with("Rein") && name.ends_with(".log") || name.ends_with("Rein Tasks.log") {
            section(&file.display().to_string(), tail(&file, 150));
        }
    }
    section(
        "the server's log (.rein/logs/lsp.log)",
        tail(&workspace.join(".rein/logs/lsp.log"), 80),
    );
    section("code-server.log", tail(&out.join("code-server.log"), 60));
    section(
        "browser console",
        tail(&out.join("browser-console.log"), 40),
    );
    section("screenshot", out.join("failure.png").display().to_string());
    text
}
