//! The real `rein lsp`, spawned over stdio on a copy of a fixture project
//! and driven by `HeadlessEditor`, with the scripted model playing a
//! scenario file. A test that fails prints the server's log (stderr, at
//! `REIN_LOG=debug`) and the messages the editor saw, so the failure can
//! be read without running it again (`LSP_TASKS_SHOW=1` prints them for
//! passing tests too).

#![allow(dead_code)] // Not every test uses every helper.

pub mod checkers;
pub mod pytest;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rein_testkit::editor::{ClientKind, EditDecision, EditorOptions, HeadlessEditor, OnQuestion};
use rein_testkit::{LspClient, rein_binary};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::process::{Child, ChildStdin, Command};

/// This crate's directory (`tests/`).
pub fn tests_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fixture project or scenario under `tests/fixtures/`.
pub fn fixture(rel: &str) -> PathBuf {
    tests_dir().join("fixtures").join(rel)
}

/// `total()` in the demo's cart.py, broken (it sums quantities) and fixed.
pub const UNFIXED: &str = "    return sum(item.qty for item in items)\n\n\ndef count";
pub const FIXED: &str = "    return sum(item.price * item.qty for item in items)\n\n\ndef count";

/// The demo's cart.py as shipped.
pub fn demo_cart() -> String {
    std::fs::read_to_string(demo_project().join("cart.py")).unwrap()
}

/// The demo's cart.py with `total()` fixed.
pub fn fixed_cart() -> String {
    let cart = demo_cart();
    assert!(cart.contains(UNFIXED));
    cart.replacen(UNFIXED, FIXED, 1)
}

/// The project and scenario `rein demo` ships.
pub fn demo_project() -> PathBuf {
    tests_dir().join("../server/app/demo/project")
}

pub fn demo_scenario() -> PathBuf {
    tests_dir().join("../server/app/demo/scenario.json")
}

/// For the command-line suites: a temporary folder holding a fresh copy of
/// the demo project (`project/`) and an empty user configuration directory
/// (`config/`), so nothing of the machine's set-up leaks in.
pub fn demo_scratch() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&demo_project(), &dir.path().join("project"));
    std::fs::create_dir_all(dir.path().join("config")).unwrap();
    dir
}

/// Work on the copied workspace before the server starts.
pub type Prepare = Box<dyn FnOnce(&Path) + Send>;

/// What a test sets up.
pub struct Setup {
    /// The project copied into the temporary workspace.
    pub project: PathBuf,
    /// The scenario the scripted model plays.
    pub scenario: PathBuf,
    /// `approvalTimeoutSecs`: how long an edit waits for the user.
    pub approval_timeout_secs: f64,
    /// `confirmTimeoutSecs`: how long an applied edit may take to show up.
    pub confirm_timeout_secs: f64,
    pub decide_edit: Box<dyn FnMut(&Value) -> EditDecision + Send>,
    /// The editor declares (and answers) `rein/saveDocuments`; without it
    /// the server writes edited buffers to disk itself.
    pub save_documents: bool,
    /// The editor's format-on-save, if it has one.
    pub format_on_save: Option<rein_testkit::editor::Formatter>,
    /// The editor gives up waiting for a message after this: a hang guard,
    /// never a timing assertion.
    pub timeout: Duration,
    /// Extra environment for the server (and the commands it runs); a
    /// value may contain `{tmp}`, the test's temporary directory.
    pub env: Vec<(&'static str, String)>,
    /// The user's answers to `window/showMessageRequest` (the first one
    /// offered is picked; none offered: dismissed).
    pub message_choices: Vec<String>,
    /// Runs on the copied workspace before the server starts.
    pub before_start: Option<Prepare>,
    /// More editor settings (`apiKey`, …), over the scripted defaults.
    pub settings: Vec<(&'static str, Value)>,
    /// The client the editor plays.
    pub kind: ClientKind,
    /// Decides each question, over `message_choices`.
    pub on_question: Option<OnQuestion>,
    /// The editor reviews edits itself (`rein/reviewEdit`), so.
    pub review: Option<rein_testkit::editor::OnReview>,
}

impl Setup {
    pub fn new(project: PathBuf, scenario: PathBuf) -> Self {
        Self {
            project,
            scenario,
            approval_timeout_secs: 30.0,
            confirm_timeout_secs: 10.0,
            decide_edit: Box::new(|_| EditDecision::Accept),
            save_documents: true,
            format_on_save: None,
            timeout: Duration::from_secs(60),
            env: Vec::new(),
            message_choices: vec!["Allow once".to_owned()],
            before_start: None,
            settings: Vec::new(),
            kind: ClientKind::Capable,
            on_question: None,
            review: None,
        }
    }
}

pub struct Server {
    pub editor: HeadlessEditor<ChildStdin>,
    /// The copy of the project the server works on.
    pub root: PathBuf,
    child: Option<Child>,
    log: PathBuf,
    _dir: TempDir,
}

pub fn copy_dir(from: &Path, to: &Path) {
    rein_testkit::copy_project(from, to).unwrap();
}

impl Server {
    /// Copies the project, spawns `rein lsp` in it and initializes the
    /// editor (settings both as `initializationOptions` and in answer to
    /// `workspace/configuration`).
    pub async fn start(setup: Setup) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().canonicalize().unwrap();
        let root = tmp.join("project");
        copy_dir(&setup.project, &root);
        let log = tmp.join("rein-lsp.stderr.log");
        let config_home = tmp.join("xdg-config");
        std::fs::create_dir_all(&config_home).unwrap();
        if let Some(prepare) = setup.before_start {
            prepare(&root);
        }

        let mut command = Command::new(rein_binary().unwrap());
        command
            .arg("lsp")
            .current_dir(&root)
            .env("REIN_LOG", "debug")
            // No user configuration file: only the editor's settings count.
            .env("XDG_CONFIG_HOME", &config_home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .kill_on_drop(true);
        for name in rein_testkit::PROVIDER_ENV {
            command.env_remove(name);
        }
        for (name, value) in &setup.env {
            command.env(name, value.replace("{tmp}", &tmp.to_string_lossy()));
        }
        let mut child = command.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let client = LspClient::new(stdout, stdin).with_timeout(setup.timeout);

        let mut settings = json!({
            "provider": "scripted",
            "scenario": setup.scenario,
            "approvalTimeoutSecs": setup.approval_timeout_secs,
            "confirmTimeoutSecs": setup.confirm_timeout_secs,
        });
        for (name, value) in setup.settings {
            settings[name] = value;
        }
        let options = EditorOptions {
            kind: setup.kind,
            on_question: setup.on_question,
            message_choices: setup.message_choices,
            decide_edit: setup.decide_edit,
            save_documents: setup.save_documents,
            format_on_save: setup.format_on_save,
            settings,
            review: setup.review,
            ..EditorOptions::default()
        };
        let editor = HeadlessEditor::new(client, &root, options).with_timeout(setup.timeout);
        let mut server = Self {
            editor,
            root,
            child: Some(child),
            log,
            _dir: dir,
        };
        server.editor.initialize().await.unwrap();
        server
    }

    /// The server's stderr so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// A file of the project as it is on disk.
    pub fn disk(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap()
    }

    /// `rein.fixTest` on a test, as the code action would send it; the
    /// task's id.
    pub async fn fix_test(&mut self, rel: &str, line: u32, test_name: &str) -> String {
        let uri = self.editor.uri(rel);
        let args = json!([{"uri": uri, "position": {"line": line, "character": 8}, "testName": test_name}]);
        self.start_task(args).await
    }

    /// The code actions offered with the cursor on `line` of `rel`.
    pub async fn code_actions(&mut self, rel: &str, line: usize) -> Vec<Value> {
        let uri = self.editor.uri(rel);
        let actions = self
            .editor
            .request(
                "textDocument/codeAction",
                json!({
                    "textDocument": {"uri": uri},
                    "range": {"start": {"line": line, "character": 8}, "end": {"line": line, "character": 8}},
                    "context": {"diagnostics": []}
                }),
            )
            .await
            .unwrap();
        actions["result"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| panic!("no code actions: {actions}"))
    }

    /// The "Fix test … with Rein" code action for the cursor on `line`.
    pub async fn fix_test_action(&mut self, rel: &str, line: usize) -> Value {
        let actions = self.code_actions(rel, line).await;
        actions
            .iter()
            .find(|a| a["command"]["command"] == "rein.fixTest")
            .unwrap_or_else(|| panic!("no fix-test code action: {actions:?}"))
            .clone()
    }

    /// `rein.runTask` with an instruction; the task's id.
    pub async fn run_task(&mut self, instruction: &str) -> String {
        let response = self
            .editor
            .request(
                "workspace/executeCommand",
                json!({"command": "rein.runTask", "arguments": [{"instruction": instruction}]}),
            )
            .await
            .unwrap();
        response["result"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("rein.runTask did not start a task: {response}"))
            .to_owned()
    }

    /// `rein.fixTest` with the arguments of a code action.
    pub async fn start_task(&mut self, arguments: Value) -> String {
        let response = self
            .editor
            .request(
                "workspace/executeCommand",
                json!({"command": "rein.fixTest", "arguments": arguments}),
            )
            .await
            .unwrap();
        response["result"]["taskId"]
            .as_str()
            .unwrap_or_else(|| panic!("rein.fixTest did not start a task: {response}"))
            .to_owned()
    }

    /// `rein.cancelTask`; the server's answer.
    pub async fn cancel_task(&mut self, task: &str) -> Value {
        self.editor
            .request(
                "workspace/executeCommand",
                json!({"command": "rein.cancelTask", "arguments": [{"taskId": task}]}),
            )
            .await
            .unwrap()
    }

    /// Runs until the task's status satisfies `done`; returns that status.
    pub async fn until_status(&mut self, task: &str, done: impl Fn(&Value) -> bool) -> Value {
        let task = task.to_owned();
        self.editor
            .pump_until(|m| {
                m["method"] == "rein/taskStatus"
                    && m["params"]["taskId"] == task
                    && done(&m["params"])
            })
            .await
            .unwrap()["params"]
            .clone()
    }

    /// Runs until the task reaches a final state (or waits for the user).
    pub async fn until_end(&mut self, task: &str) -> Value {
        self.editor.until_task_ends(task).await.unwrap()
    }

    /// How many messages the editor has received: a mark for
    /// [`Server::until_end_since`].
    pub fn mark(&self) -> usize {
        self.editor.received().len()
    }

    /// The task's first final (or `waiting_user`) status received after
    /// `mark`: it may already have arrived while the editor waited for the
    /// answer to a request (a cancellation's, say).
    pub async fn until_end_since(&mut self, task: &str, mark: usize) -> Value {
        let ended = |m: &Value| is_end(m) && m["params"]["taskId"] == task;
        self.wait_for(mark, ended).await["params"].clone()
    }

    /// The first message received after `mark` that satisfies `pred`:
    /// one already received (while the editor waited for something else)
    /// or the next one to arrive.
    pub async fn wait_for(&mut self, mark: usize, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(m) = self.editor.received()[mark..].iter().find(|m| pred(m)) {
            return m.clone();
        }
        self.editor.pump_until(pred).await.unwrap()
    }

    /// Runs until the task's progress has reported an activity containing
    /// `text` (at any time: a report already received counts).
    pub async fn until_activity(&mut self, task: &str, text: &str) -> Value {
        let token = progress_token(task);
        let reported = |m: &Value| {
            m["method"] == "$/progress"
                && m["params"]["token"] == token
                && m["params"]["value"]["kind"] == "report"
                && m["params"]["value"]["message"]
                    .as_str()
                    .is_some_and(|s| s.contains(text))
        };
        self.wait_for(0, reported).await
    }

    /// Waits until the server holds `rel` at `version` (it says so in
    /// answer to `rein/documentState`): the editor's `didChange` has then
    /// been taken, which its being sent does not say.
    pub async fn until_server_has(&mut self, rel: &str, version: i32) {
        let uri = self.editor.uri(rel);
        let deadline = tokio::time::Instant::now() + HANG_GUARD;
        loop {
            let state = self
                .editor
                .request("rein/documentState", json!({"uri": uri}))
                .await
                .unwrap();
            if state["result"]["version"] == version {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the server never held {rel} at version {version}: {state}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Creates `name` next to the project, in the test's temporary folder:
    /// a scenario's reply with the fault `{"wait_for_file": "../<name>"}`
    /// is held until then (the server runs in the project).
    pub fn open_gate(&self, name: &str) {
        std::fs::write(self.root.parent().unwrap().join(name), "").unwrap();
    }

    /// Every message received with this method, in order.
    pub fn messages(&self, method: &str) -> Vec<Value> {
        self.editor
            .received()
            .iter()
            .filter(|m| m["method"] == method)
            .cloned()
            .collect()
    }

    /// The task's `rein/taskStatus` params, in order.
    pub fn statuses(&self, task: &str) -> Vec<Value> {
        self.messages("rein/taskStatus")
            .into_iter()
            .map(|m| m["params"].clone())
            .filter(|p| p["taskId"] == task)
            .collect()
    }

    /// The task's `$/progress` values, in order.
    pub fn progress(&self, task: &str) -> Vec<Value> {
        let token = progress_token(task);
        self.messages("$/progress")
            .into_iter()
            .filter(|m| m["params"]["token"] == token)
            .map(|m| m["params"]["value"].clone())
            .collect()
    }

    /// The `n`th (from 1) `workspace/applyEdit` for `rel`: one already
    /// received, or the next to arrive (the editor answers or holds each
    /// as its options say). Fails at once if a task ends first.
    pub async fn nth_edit_of(&mut self, rel: &str, n: usize) -> Value {
        if let Some(edit) = self.edits_of(rel).get(n - 1) {
            return edit.clone();
        }
        let uri = self.editor.uri(rel);
        let mut seen = self.edits_of(rel).len();
        let found = self
            .editor
            .pump_until(|m| {
                let edit = m["method"] == "workspace/applyEdit"
                    && m["params"]["edit"]["documentChanges"][0]["textDocument"]["uri"] == uri;
                seen += usize::from(edit);
                (edit && seen == n) || is_end(m)
            })
            .await
            .unwrap();
        assert!(
            !is_end(&found),
            "the task ended before edit {n} of {rel}: {}",
            found["params"]
        );
        found
    }

    /// The `workspace/applyEdit` requests for one file, in order.
    pub fn edits_of(&self, rel: &str) -> Vec<Value> {
        let uri = self.editor.uri(rel);
        self.messages("workspace/applyEdit")
            .into_iter()
            .filter(|m| m["params"]["edit"]["documentChanges"][0]["textDocument"]["uri"] == uri)
            .collect()
    }

    /// `shutdown`, then `exit`; the server's exit code. Waits for the
    /// process, with a hang guard.
    pub async fn shutdown(&mut self) -> i32 {
        let response = self.editor.request("shutdown", Value::Null).await.unwrap();
        assert_eq!(response["result"], Value::Null, "{response}");
        self.exit().await
    }

    /// `exit` and the exit code.
    pub async fn exit(&mut self) -> i32 {
        self.editor
            .client()
            .notify("exit", Value::Null)
            .await
            .unwrap();
        let mut child = self.child.take().unwrap();
        let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
            .await
            .expect("rein lsp did not exit within 30 s of `exit`")
            .unwrap();
        status.code().unwrap_or(-1)
    }
}

/// A task's final (or `waiting_user`) `rein/taskStatus`.
fn is_end(m: &Value) -> bool {
    rein_testkit::editor::task_ended(m)
}

/// Longer than any wait in these tests should take: reaching it is a hang.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// The progress token the server creates for a task.
pub fn progress_token(task: &str) -> String {
    format!("rein/{task}")
}

impl Drop for Server {
    fn drop(&mut self) {
        if !std::thread::panicking() && std::env::var_os("LSP_TASKS_SHOW").is_none() {
            return;
        }
        let messages: Vec<String> = self
            .editor
            .received()
            .iter()
            .map(|m| {
                let text = m.to_string();
                if text.chars().count() > 600 {
                    format!("{}…", text.chars().take(600).collect::<String>())
                } else {
                    text
                }
            })
            .collect();
        eprintln!(
            "\n===== messages the editor received ({}) =====\n{}\n===== rein lsp stderr ({}) =====\n{}\n===== end =====",
            messages.len(),
            messages.join("\n"),
            self.log.display(),
            self.log()
        );
    }
}
