//! `rein doctor` on a copy of the demo project, its provider played by the
//! fake model server (both wire formats), nothing of the machine's own
//! settings inherited. The report is compared whole, with the paths and
//! the port that change per run replaced.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

use expect_test::{Expect, expect};
use rein_testkit::fake_model::{FakeModel, Scenario};
use rein_testkit::{ClosedPort, rein_binary};

mod support;

const KEY: &str = "sk-doctor-SECRET-0123456789";

struct Doctor {
    dir: tempfile::TempDir,
    env: Vec<(String, String)>,
}

struct Ran {
    code: i32,
    report: String,
    stderr: String,
}

impl Doctor {
    fn new() -> Self {
        Self {
            dir: support::demo_scratch(),
            env: Vec::new(),
        }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("project").canonicalize().unwrap()
    }

    fn env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    fn run(&self, server: Option<&FakeModel>) -> Ran {
        let mut command = Command::new(rein_binary().unwrap());
        command
            .args(["doctor", "--workspace"])
            .arg(self.root())
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("XDG_STATE_HOME", self.dir.path().join("state"));
        for name in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "ANTHROPIC_BASE_URL",
            "OPENAI_BASE_URL",
            "REIN_PROVIDER",
            "REIN_MODEL",
            "REIN_SCENARIO",
            "REIN_LOG",
        ] {
            command.env_remove(name);
        }
        for (name, value) in &self.env {
            command.env(name, value);
        }
        // Blocking is fine: the fake model serves from the runtime's other
        // worker threads.
        let output = command.output().unwrap();
        let mut report = String::from_utf8_lossy(&output.stdout).into_owned();
        report = report
            .replace(&rein_binary().unwrap().display().to_string(), "<rein>")
            .replace(&self.root().display().to_string(), "<project>")
            .replace(&self.dir.path().display().to_string(), "<tmp>")
            .replace(env!("CARGO_PKG_VERSION"), "<version>");
        // The Landlock version is the kernel's.
        if let Some(at) = report.find("Landlock (ABI ") {
            let from = at + "Landlock (ABI ".len();
            let to = report[from..].find(')').map_or(from, |n| from + n);
            report.replace_range(from..to, "<n>");
        }
        if let Some(server) = server {
            report = report.replace(&server.base_url(), "<fake>");
        }
        // The time a listing took is the one number that varies.
        let report = report
            .lines()
            .map(|line| match line.find("reachable in ") {
                Some(at) => {
                    let rest = &line[at + "reachable in ".len()..];
                    let after = rest.find(" s").map_or("", |end| &rest[end..]);
                    format!("{}reachable in <t>{after}", &line[..at])
                }
                None => line.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        Ran {
            code: output.status.code().unwrap_or(-1),
            report,
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

impl Ran {
    fn check(&self, code: i32, report: Expect) {
        assert_eq!(self.code, code, "{}\n{}", self.report, self.stderr);
        report.assert_eq(&self.report);
        assert!(!self.report.contains(KEY) && !self.stderr.contains(KEY));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_working_openai_compatible_set_up_is_all_ok() {
    let server = FakeModel::start(Scenario::new().models(["qwen2.5-coder:7b", "llama3.1:8b"]))
        .await
        .unwrap();
    let doctor = Doctor::new()
        .env("OPENAI_BASE_URL", &format!("{}/v1", server.base_url()))
        .env("OPENAI_API_KEY", KEY)
        .env("REIN_MODEL", "qwen2.5-coder:7b");
    let ran = doctor.run(Some(&server));
    ran.check(
        0,
        expect![[r#"
            ok   rein <version> (<rein>)
            info workspace <project>
            info settings file .rein/config.toml: none
            info settings file <tmp>/config/rein/config.toml: none
            ok   workspace trust: not needed (no .rein/config.toml)
            ok   provider openai · model qwen2.5-coder:7b · <fake>/v1 · API key set (hidden)
            warn context window: not known for this model; Rein assumes 200000 tokens. Set `context_window` (e.g. the server's --ctx-size) so the prompt fits
            ok   edits: through the tools (edit_format = "auto")
            ok   reachable in <t> s: <fake>/v1 lists 2 models, qwen2.5-coder:7b among them
            ok   tests (detected): python3 -m unittest
            info state .rein/state.db: none yet (made by the first task)
            ok   sandbox: workspace-write, files confined by Landlock (ABI <n>), network loopback only (a namespace of its own), a root of its own (no socket outside the workspace, a private /tmp and /dev/shm), its own processes only (none outlives it), package caches written privately, no new privileges, at most 2048 processes, files up to 4096 MiB
            info sockets: only those in the workspace, the readable toolchain and system folders (/usr, /etc, …) and the roots you allowed (sandbox.readable_roots, writable_roots); none in /tmp, /var, /run, /dev/shm or the rest of your home; abstract sockets: none (a network of its own)
            info commands: in the workspace, in their own process group (killed on timeout or cancel), without API keys in their environment, after the permission rules allow them (your rules: 0 allow, 0 ask, 0 deny; other commands are asked)
            info MCP servers: none configured ([mcp_servers.<name>] in the settings, or a project's .mcp.json)
            info editors: Neovim checks its side with `:checkhealth rein`; VS Code shows the server's log in Output › Rein"#]],
    );
    // It asked, and only asked: the server's window (llama.cpp, vLLM,
    // Ollama: none answers here) and the listing; no model call.
    let requests: Vec<String> = server
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(
        requests,
        [
            "GET /props",
            "GET /v1/models",
            "POST /api/show",
            "GET /v1/models"
        ]
    );
    // And wrote nothing: no task state where there was none.
    assert!(!doctor.root().join(".rein").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_the_provider_does_not_list_is_a_warning() {
    let server = FakeModel::start(Scenario::new()).await.unwrap();
    let doctor = Doctor::new()
        .env("ANTHROPIC_BASE_URL", &server.base_url())
        .env("ANTHROPIC_API_KEY", KEY)
        .env("REIN_MODEL", "claude-sonnet-9");
    // Settings the user wrote, and a task state from an earlier session.
    std::fs::create_dir_all(doctor.root().join(".rein")).unwrap();
    std::fs::write(
        doctor.root().join(".rein/config.toml"),
        "max_turns = 5\n[permissions]\ndeny = [\"run_command(git push:*)\"]\nallow = [\"run_command(make lint)\"]\n",
    )
    .unwrap();
    rein_store::Store::open(&rein_store::state_db_path(&doctor.root())).unwrap();
    let ran = doctor.run(Some(&server));
    ran.check(
        0,
        expect![[r#"
            ok   rein <version> (<rein>)
            info workspace <project>
            ok   settings file .rein/config.toml
            info settings file <tmp>/config/rein/config.toml: none
            warn workspace trust: not trusted (no answer yet); ignoring what .rein/config.toml would grant (trust it with `rein trust` once you have read it):
            warn   ignored: allow `run_command(make lint)` without asking (permissions.allow)
            ok   provider anthropic · model claude-sonnet-9 · <fake> · API key set (hidden)
            warn context window: not known for this model; Rein assumes 200000 tokens. Set `context_window` (e.g. the server's --ctx-size) so the prompt fits
            ok   edits: through the tools (edit_format = "auto")
            warn reachable in <t> s, but claude-sonnet-9 is not among the 4 models it lists (claude-sonnet-4-5, claude-haiku-4-5, gpt-4o, gpt-4o-mini); set REIN_MODEL or `model` to one of them
            ok   tests (detected): python3 -m unittest
            ok   state .rein/state.db: schema v6, 0 tasks
            ok   sandbox: workspace-write, files confined by Landlock (ABI <n>), network loopback only (a namespace of its own), a root of its own (no socket outside the workspace, a private /tmp and /dev/shm), its own processes only (none outlives it), package caches written privately, no new privileges, at most 2048 processes, files up to 4096 MiB
            info sockets: only those in the workspace, the readable toolchain and system folders (/usr, /etc, …) and the roots you allowed (sandbox.readable_roots, writable_roots); none in /tmp, /var, /run, /dev/shm or the rest of your home; abstract sockets: none (a network of its own)
            info commands: in the workspace, in their own process group (killed on timeout or cancel), without API keys in their environment, after the permission rules allow them (your rules: 0 allow, 0 ask, 1 deny; other commands are asked)
            info MCP servers: none configured ([mcp_servers.<name>] in the settings, or a project's .mcp.json)
            info editors: Neovim checks its side with `:checkhealth rein`; VS Code shows the server's log in Output › Rein"#]],
    );
    assert_eq!(server.violations(), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_key_or_an_absent_server_fails() {
    // The server wants a key; none is set (fine for Ollama, not here).
    let server = FakeModel::start(Scenario::new()).await.unwrap();
    let ran = Doctor::new()
        .env("OPENAI_BASE_URL", &server.base_url())
        .env("REIN_MODEL", "gpt-4o")
        .run(Some(&server));
    assert_eq!(ran.code, 1, "{}", ran.report);
    let line = ran.report.lines().find(|l| l.starts_with("FAIL")).unwrap();
    assert!(line.contains("rejected the API key (401"), "{line}");

    let closed = ClosedPort::new().unwrap();
    let ran = Doctor::new()
        .env("ANTHROPIC_BASE_URL", &closed.url())
        .env("ANTHROPIC_API_KEY", KEY)
        .run(None);
    assert_eq!(ran.code, 1, "{}", ran.report);
    let line = ran.report.lines().find(|l| l.starts_with("FAIL")).unwrap();
    let expected = format!(
        "FAIL not reachable: could not connect to {}/v1/models",
        closed.url()
    );
    assert!(line.starts_with(&expected), "{line}");
    assert!(!ran.report.contains(KEY));
}

#[test]
fn no_provider_or_a_broken_settings_file_fails_with_the_fix() {
    let ran = Doctor::new().run(None);
    assert_eq!(ran.code, 1, "{}", ran.report);
    assert!(
        ran.report
            .contains("FAIL configuration: no model provider is configured: set ANTHROPIC_API_KEY"),
        "{}",
        ran.report
    );

    let doctor = Doctor::new().env("REIN_PROVIDER", "scripted");
    std::fs::create_dir_all(doctor.root().join(".rein")).unwrap();
    std::fs::write(
        doctor.root().join(".rein/config.toml"),
        "max_turns = \"lots\"\n",
    )
    .unwrap();
    let ran = doctor.run(None);
    assert_eq!(ran.code, 1, "{}", ran.report);
    assert!(
        ran.report
            .contains("FAIL configuration: <project>/.rein/config.toml is not valid"),
        "{}",
        ran.report
    );
}

#[test]
fn the_scripted_provider_needs_nothing() {
    let ran = Doctor::new().env("REIN_PROVIDER", "scripted").run(None);
    assert_eq!(ran.code, 0, "{}", ran.report);
    assert!(
        ran.report
            .contains("ok   reachable: the scripted model runs inside rein")
    );
}

#[test]
fn a_workspace_that_is_not_there_is_a_usage_error() {
    let output = Command::new(rein_binary().unwrap())
        .args(["doctor", "--workspace", "/nonexistent/rein-doctor"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("/nonexistent/rein-doctor"), "{stderr}");
}
