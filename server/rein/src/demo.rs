//! `rein demo`: the main job on a fresh machine. Copies the bundled sample
//! project (a Python shopping cart with a failing `TestCart.test_total`) to
//! a new directory that is kept, starts the real language server (`rein
//! lsp`, this same executable) as a child process, and drives it over
//! stdio with the headless editor of `rein-testkit`, exactly as an editor
//! would: the code action on the test, its command, the approval of every
//! proposed edit, saving before the tests run. It prints what the editor
//! would show (progress, the proposed diffs, approvals, the verification
//! evidence) and exits 0 only when the task succeeded.
//!
//! The model is the scripted one (the fake model server playing
//! `demo/scenario.json` through the Anthropic wire format) unless a real
//! provider is configured in the environment.

mod render;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rein_models::ProviderKind;
use rein_scripted::LspClient;
use rein_scripted::editor::{EditorOptions, HeadlessEditor, uri_path};
use serde_json::{Value, json};
use tokio::process::{Child, ChildStdin, Command};

use self::render::{FileChange, Out, Style, Viewer};

/// The sample project, built into the binary so an installed `rein` needs
/// no source tree. Every file is listed: a new one must be added here.
const PROJECT: [(&str, &str); 3] = [
    ("cart.py", include_str!("../../app/demo/project/cart.py")),
    (
        "tests/__init__.py",
        include_str!("../../app/demo/project/tests/__init__.py"),
    ),
    (
        "tests/test_cart.py",
        include_str!("../../app/demo/project/tests/test_cart.py"),
    ),
];
const TEST_FILE: &str = "tests/test_cart.py";
const SOURCE_FILE: &str = "cart.py";
const TEST_NAME: &str = "test_total";

/// The whole demo, server start to final status.
const SCRIPTED_LIMIT: Duration = Duration::from_secs(60);
const REAL_LIMIT: Duration = Duration::from_secs(300);
/// Shutting the server down, and waiting for it to exit.
const EXIT_LIMIT: Duration = Duration::from_secs(10);
/// What the editor answers to `window/showMessageRequest`.
const APPROVAL: &str = "Allow once";
/// Where the server's stderr goes, in the project (next to Rein's other
/// state, which `.rein/` holds).
const SERVER_LOG: &str = ".rein/logs/demo-server.stderr.log";

pub fn main() -> ExitCode {
    let out = Out::stdout();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            fail(out, &format!("cannot start the async runtime: {e}"));
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(run(out));
    // Nothing may keep the demo alive once it has said how it ended.
    runtime.shutdown_background();
    code
}

/// Which model plays the agent.
enum Model {
    Scripted,
    Real {
        /// What in the environment chose it.
        why: String,
        provider: String,
        model: String,
        base_url: String,
    },
}

impl Model {
    /// What the editor sends as Rein's settings: the scripted provider, or
    /// nothing (the server then reads the environment, as for any editor).
    fn settings(&self) -> Value {
        match self {
            Self::Scripted => json!({"provider": "scripted"}),
            Self::Real { .. } => Value::Null,
        }
    }

    fn limit(&self) -> Duration {
        match self {
            Self::Scripted => SCRIPTED_LIMIT,
            Self::Real { .. } => REAL_LIMIT,
        }
    }
}

/// The environment variable that asks for a real model, if one does.
/// `REIN_PROVIDER` decides when set (so `REIN_PROVIDER=scripted` keeps the
/// scripted model even with a key around); else a key or an
/// OpenAI-compatible base URL does.
fn real_provider_wanted(env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    if let Some(provider) = set("REIN_PROVIDER") {
        let name = provider.trim().to_ascii_lowercase();
        return (name != "scripted" && name != "fake").then(|| format!("REIN_PROVIDER={provider}"));
    }
    ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"]
        .into_iter()
        .find(|name| set(name).is_some())
        .map(str::to_owned)
}

/// Resolves the real provider the way the server will (same layers, same
/// environment), so a configuration problem is reported before anything
/// starts.
fn choose_model(root: &Path) -> Result<Model, String> {
    let env = |name: &str| std::env::var(name).ok();
    let Some(why) = real_provider_wanted(&env) else {
        return Ok(Model::Scripted);
    };
    let config = rein_app::settings::config(root, &Value::Null)
        .map_err(|e| format!("{why} asks for a real model, but: {e}"))?;
    let provider = &config.provider;
    if provider.provider == ProviderKind::Scripted {
        return Ok(Model::Scripted);
    }
    Ok(Model::Real {
        why,
        provider: provider.provider.name().to_owned(),
        model: provider.model.clone(),
        base_url: provider.base_url.clone(),
    })
}

fn fail(out: Out, message: &str) {
    out.line(&out.paint(Style::Red, &format!("✘ rein demo failed: {message}")));
}

async fn run(out: Out) -> ExitCode {
    out.line(&out.paint(
        Style::Bold,
        "Rein demo: a failing test fixed through the real language server, driven as an editor would",
    ));
    out.line("");
    if let Err(message) = check_python().await {
        fail(out, &message);
        return ExitCode::FAILURE;
    }
    let root = match write_project() {
        Ok(root) => root,
        Err(message) => {
            fail(out, &message);
            return ExitCode::FAILURE;
        }
    };
    let model = match choose_model(&root) {
        Ok(model) => model,
        Err(message) => {
            // Nothing ran: the copy is of no interest.
            let _ = std::fs::remove_dir_all(&root);
            fail(out, &message);
            return ExitCode::FAILURE;
        }
    };
    out.lines(&model_notice(out, &model));
    out.line("");
    let log = root.join(SERVER_LOG);
    out.line(&format!("  project     {}", root.display()));
    out.line(&format!("  server log  {}", log.display()));
    out.line(&out.paint(
        Style::Dim,
        "  (a fresh copy of the bundled sample project, kept after the demo so you can look at it)",
    ));
    out.line("");

    let mut child = match spawn_server(&root, &log) {
        Ok(child) => child,
        Err(message) => {
            fail(out, &message);
            return ExitCode::FAILURE;
        }
    };
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        fail(
            out,
            "the language server was started without its stdio pipes",
        );
        return ExitCode::FAILURE;
    };
    let limit = model.limit();
    let mut viewer = Viewer::new(out, Some(APPROVAL.to_owned()));
    let options = EditorOptions {
        kind: rein_scripted::editor::ClientKind::Capable,
        on_question: None,
        // Accept every edit: the user approving.
        decide_edit: Box::new(|_| rein_scripted::editor::EditDecision::Accept),
        message_choices: vec![APPROVAL.to_owned()],
        settings: model.settings(),
        save_documents: true,
        format_on_save: None,
        on_message: Box::new(move |message| out.lines(&viewer.show(message))),
        // The demo shows edits as the standard `workspace/applyEdit`.
        review: None,
    };
    let client = LspClient::new(stdout, stdin).with_timeout(limit);
    let mut editor = HeadlessEditor::new(client, &root, options).with_timeout(limit);

    let pid = child.id().unwrap_or_default();
    let driven = tokio::time::timeout(limit, drive(&mut editor, out, &root, pid)).await;
    let result = match driven {
        Ok(result) => result,
        Err(_) => Err(format!(
            "the demo did not finish within {} s, so it gives up",
            limit.as_secs()
        )),
    };

    let status = match result {
        Ok(status) => status,
        Err(message) => {
            fail(out, &message);
            // A server in trouble has its log's tail shown here.
            if stop_server(&mut editor, &mut child, out, &log).await {
                out.line(&format!("  The server's log is {}", log.display()));
            }
            out.line(&format!("  The project is in {}", root.display()));
            return ExitCode::FAILURE;
        }
    };
    // The disk holds what the user approved: the editor saved it.
    let disk_matches = editor.buffer(SOURCE_FILE).is_some_and(|buffer| {
        std::fs::read_to_string(root.join(SOURCE_FILE)).is_ok_and(|disk| disk == buffer)
    });
    let server_ok = stop_server(&mut editor, &mut child, out, &log).await;
    drop(editor);
    out.line("");
    summary(out, &status, &root, server_ok, disk_matches)
}

fn model_notice(o: Out, model: &Model) -> Vec<String> {
    let mut lines = Vec::new();
    match model {
        Model::Scripted => {
            lines.push(o.paint(
                Style::Yellow,
                "  The model is SCRIPTED: a fake model server on 127.0.0.1 plays a fixed script",
            ));
            lines.push(
                "  (server/app/demo/scenario.json, built into the binary) through the real Anthropic".into(),
            );
            lines.push(
                "  Messages wire format. Everything else is real: the language server, the editor's".into(),
            );
            lines.push(
                "  LSP messages, the edits, the test runs and the verification. No network, no key.".into(),
            );
            lines.push("  The same demo with a real model:".into());
            lines.push("    REIN_PROVIDER=anthropic ANTHROPIC_API_KEY=… rein demo".into());
            lines.push("    REIN_PROVIDER=openai OPENAI_API_KEY=… rein demo".into());
            lines.push(
                "    OPENAI_BASE_URL=http://localhost:11434/v1 REIN_MODEL=qwen2.5-coder:7b rein demo   (Ollama)".into(),
            );
        }
        Model::Real {
            why,
            provider,
            model,
            base_url,
        } => {
            lines.push(o.paint(
                Style::Yellow,
                &format!("  The model is REAL: {provider} · {model} · {base_url}"),
            ));
            lines.push(format!(
                "  (chosen by {why} in your environment; this costs tokens, and a real model may take"
            ));
            lines.push(format!(
                "  another path than the script). Limit: {} s. For the scripted model: REIN_PROVIDER=scripted rein demo",
                REAL_LIMIT.as_secs()
            ));
        }
    }
    lines
}

/// The tests of the sample project run with `python3 -m unittest`.
async fn check_python() -> Result<(), String> {
    let missing = "python3 is needed: the sample project is Python and its tests run with `python3 -m unittest`. Install Python 3 (and put `python3` on PATH), then run `rein demo` again";
    let run = Command::new("python3")
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .status();
    match tokio::time::timeout(EXIT_LIMIT, run).await {
        Ok(Ok(status)) if status.success() => Ok(()),
        Ok(Ok(status)) => Err(format!("{missing} (`python3 --version` {status})")),
        Ok(Err(e)) => Err(format!("{missing} ({e})")),
        Err(_) => Err(format!(
            "{missing} (`python3 --version` did not answer within {} s)",
            EXIT_LIMIT.as_secs()
        )),
    }
}

/// Writes the sample project to a new directory under the system's
/// temporary directory and returns its canonical path. The directory is
/// kept: the user is meant to look at it afterwards.
fn write_project() -> Result<PathBuf, String> {
    let base = std::env::temp_dir();
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let mut dir = None;
    for attempt in 0..100u32 {
        let candidate = base.join(format!(
            "rein-demo-{}-{:x}{}",
            std::process::id(),
            stamp % 0xff_ffff,
            if attempt == 0 {
                String::new()
            } else {
                format!("-{attempt}")
            }
        ));
        match std::fs::create_dir(&candidate) {
            Ok(()) => {
                dir = Some(candidate);
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(format!(
                    "cannot create a directory in {}: {e} (set TMPDIR to a writable directory)",
                    base.display()
                ));
            }
        }
    }
    let dir =
        dir.ok_or_else(|| format!("cannot find a free directory name in {}", base.display()))?;
    // Canonical, so the URIs the editor sends match the paths the server
    // resolves (macOS's /var is /private/var).
    let dir = dir.canonicalize().unwrap_or(dir);
    for (rel, text) in PROJECT.iter().copied().chain([(SERVER_LOG, "")]) {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(dir)
}

/// `rein lsp`, this very executable, with its stderr in `log`.
fn spawn_server(root: &Path, log: &Path) -> Result<Child, String> {
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the rein executable to start `rein lsp`: {e}"))?;
    let stderr = std::fs::File::create(log)
        .map_err(|e| format!("cannot create the server log {}: {e}", log.display()))?;
    Command::new(&exe)
        .arg("lsp")
        .current_dir(root)
        .env("REIN_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(stderr))
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start `{} lsp`: {e}", exe.display()))
}

fn editor_says(o: Out, text: &str) {
    o.line(&format!("{} {text}", o.paint(Style::Dim, "editor ·")));
}

/// The editor's side of the session, from `initialize` to the task's
/// final `rein/taskStatus`, which it returns.
async fn drive(
    editor: &mut HeadlessEditor<ChildStdin>,
    o: Out,
    root: &Path,
    pid: u32,
) -> Result<Value, String> {
    let talk = |e: rein_scripted::ClientError| match e {
        rein_scripted::ClientError::Closed { .. } => {
            "the language server stopped: it closed its output in the middle of the session"
                .to_owned()
        }
        other => format!("talking to the language server: {other}"),
    };
    let init = editor.initialize().await.map_err(talk)?;
    if let Some(error) = init.get("error") {
        return Err(format!("the server refused `initialize`: {error}"));
    }
    let server = &init["result"]["serverInfo"];
    editor_says(
        o,
        &format!(
            "started `rein lsp` (pid {pid}): {} {}, {} positions",
            server["name"].as_str().unwrap_or("rein"),
            server["version"].as_str().unwrap_or_default(),
            init["result"]["capabilities"]["positionEncoding"]
                .as_str()
                .unwrap_or("utf-16"),
        ),
    );

    // The editor's copies of the files, to show each edit as a diff of
    // the buffer before and after it.
    let mut shown: HashMap<String, String> = HashMap::new();
    for rel in [TEST_FILE, SOURCE_FILE] {
        editor.open(rel).await.map_err(talk)?;
        shown.insert(rel.to_owned(), editor.buffer(rel).unwrap_or_default());
    }
    editor_says(o, &format!("opened {TEST_FILE} and {SOURCE_FILE}"));

    // The cursor on `def test_total`.
    let test_text = shown.get(TEST_FILE).cloned().unwrap_or_default();
    let (line, character) = test_text
        .lines()
        .enumerate()
        .find_map(|(n, l)| {
            let column = l.find(&format!("def {TEST_NAME}"))?;
            Some((n, column + 4))
        })
        .ok_or_else(|| format!("the sample project has no `def {TEST_NAME}` in {TEST_FILE}"))?;
    let uri = editor.uri(TEST_FILE);
    let position = json!({"line": line, "character": character});
    let actions = editor
        .request(
            "textDocument/codeAction",
            json!({
                "textDocument": {"uri": uri},
                "range": {"start": position, "end": position},
                "context": {"diagnostics": [], "triggerKind": 1}
            }),
        )
        .await
        .map_err(talk)?;
    let list = actions["result"].as_array().cloned().unwrap_or_default();
    editor_says(
        o,
        &format!(
            "code actions at {TEST_FILE}:{} (`{}`):",
            line + 1,
            test_text.lines().nth(line).unwrap_or_default().trim()
        ),
    );
    let wanted = format!("Fix test {TEST_NAME} with Rein");
    for action in &list {
        let title = action["title"].as_str().unwrap_or_default();
        let mark = if title == wanted { "▸" } else { " " };
        o.line(&format!(
            "          {mark} {title}  {}",
            o.paint(
                Style::Dim,
                &format!(
                    "({}, {})",
                    action["kind"]
                        .as_str()
                        .filter(|k| !k.is_empty())
                        .unwrap_or("-"),
                    action["command"]["command"].as_str().unwrap_or("-")
                )
            )
        ));
    }
    let fix = list
        .iter()
        .find(|a| a["title"] == wanted.as_str())
        .ok_or_else(|| {
            format!("the server offered no “{wanted}” action on the test (answer: {actions})")
        })?;

    let command = &fix["command"];
    let id = editor
        .client()
        .send_request(
            "workspace/executeCommand",
            json!({"command": command["command"], "arguments": command["arguments"]}),
        )
        .await
        .map_err(talk)?;
    editor_says(
        o,
        &format!(
            "runs “{wanted}” ({})",
            command["command"].as_str().unwrap_or_default()
        ),
    );

    let response_id = json!(id);
    let mut task_id: Option<String> = None;
    loop {
        let message = editor
            .pump_until(|m| {
                (m.get("method").is_none() && m["id"] == response_id)
                    || m["method"] == "workspace/applyEdit"
                    || (m["method"] == "rein/taskStatus"
                        && (m["params"]["state"]
                            .as_str()
                            .is_some_and(render::is_final_state)
                            || render::waits_for_answer(&m["params"])))
            })
            .await
            .map_err(talk)?;
        if message.get("method").is_none() {
            if let Some(error) = message.get("error") {
                return Err(format!("the server refused to start the task: {error}"));
            }
            let id = message["result"]["taskId"].as_str().unwrap_or_default();
            editor_says(o, &format!("task {id} started"));
            task_id = Some(id.to_owned());
            continue;
        }
        if message["method"] == "workspace/applyEdit" {
            // Already answered (accepted) by the editor: show what it did.
            show_edit(editor, o, root, &message["params"], &mut shown);
            continue;
        }
        let status = &message["params"];
        if task_id.as_deref().is_some_and(|t| status["taskId"] != t) {
            continue;
        }
        if render::waits_for_answer(status) {
            // The demo has no one to answer: stop the task instead of
            // waiting for the timeout.
            o.line(&o.paint(
                Style::Yellow,
                &format!(
                    "? the model asks: {}",
                    status["reason"].as_str().unwrap_or("(no question)")
                ),
            ));
            o.line("    the demo cannot answer questions; stopping the task (answer them in an editor, or with `rein run`)");
            editor
                .client()
                .send_request(
                    "workspace/executeCommand",
                    json!({"command": "rein.cancelTask", "arguments": [{"taskId": status["taskId"]}]}),
                )
                .await
                .map_err(talk)?;
            continue;
        }
        return Ok(status.clone());
    }
}

/// The documents a `WorkspaceEdit` changes, in either of its shapes
/// (`documentChanges` for clients that version edits, else `changes`): each
/// URI with its text edits, and whether a `create` in the same edit makes
/// the file.
fn edited_documents(edit: &Value) -> Vec<(&str, &Value, bool)> {
    let versioned = edit["documentChanges"].as_array().into_iter().flatten();
    let created = |uri: &str| {
        edit["documentChanges"]
            .as_array()
            .is_some_and(|all| all.iter().any(|c| c["kind"] == "create" && c["uri"] == uri))
    };
    // A `create` has no `textDocument`: its text comes with the document
    // edit after it.
    let mut out: Vec<(&str, &Value, bool)> = versioned
        .filter_map(|c| Some((c["textDocument"]["uri"].as_str()?, &c["edits"])))
        .map(|(uri, edits)| (uri, edits, created(uri)))
        .collect();
    out.extend(
        edit["changes"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(uri, edits)| (uri.as_str(), edits, false)),
    );
    out
}

/// Prints an accepted `workspace/applyEdit`: the buffer before (the text
/// last shown) and after (the editor's buffer now).
fn show_edit(
    editor: &HeadlessEditor<ChildStdin>,
    o: Out,
    root: &Path,
    params: &Value,
    shown: &mut HashMap<String, String>,
) {
    let mut files: Vec<FileChange> = Vec::new();
    let mut refused = false;
    for (uri, edits, created) in edited_documents(&params["edit"]) {
        let path = uri_path(uri);
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        let before = match shown.get(&rel) {
            Some(text) => text.clone(),
            None if created => String::new(),
            // Opened by the edit: the disk still holds the text before it.
            None => std::fs::read_to_string(&path).unwrap_or_default(),
        };
        let after = editor.buffer(&rel).unwrap_or_default();
        if before == after && edits.as_array().is_some_and(|e| !e.is_empty()) {
            refused = true;
        }
        shown.insert(rel.clone(), after.clone());
        files.push(FileChange {
            path: rel,
            before,
            after,
            created,
        });
    }
    o.lines(&render::edit_proposal(o, params, &files));
    if refused {
        o.line(&o.paint(
            Style::Red,
            "    ✘ not applied: the buffer had changed since the edit was made (a stale edit)",
        ));
    } else {
        o.line(&o.paint(
            Style::Green,
            "    ✔ approved (applied to the editor's buffer)",
        ));
    }
}

/// `shutdown` + `exit`, then the server's exit status. `true` when it
/// exited cleanly; otherwise says what happened and shows its log's tail.
async fn stop_server(
    editor: &mut HeadlessEditor<ChildStdin>,
    child: &mut Child,
    o: Out,
    log: &Path,
) -> bool {
    let mut problems: Vec<String> = Vec::new();
    if matches!(child.try_wait(), Ok(None)) {
        match tokio::time::timeout(EXIT_LIMIT, editor.shutdown()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => problems.push(format!("shutting it down failed: {e}")),
            Err(_) => problems.push(format!(
                "it did not answer `shutdown` within {} s",
                EXIT_LIMIT.as_secs()
            )),
        }
    }
    let status = match tokio::time::timeout(EXIT_LIMIT, child.wait()).await {
        Ok(Ok(status)) => Some(status),
        Ok(Err(e)) => {
            problems.push(format!("cannot wait for it: {e}"));
            None
        }
        Err(_) => {
            let _ = child.kill().await;
            problems.push(format!(
                "it did not exit within {} s and was killed",
                EXIT_LIMIT.as_secs()
            ));
            None
        }
    };
    match (&status, problems.is_empty()) {
        (Some(status), true) if status.success() => {
            o.line(&o.paint(
                Style::Dim,
                "· editor shut the language server down (`shutdown`, `exit`); it exited with 0",
            ));
            true
        }
        (status, _) => {
            let what = match status {
                Some(s) if !s.success() => format!("the language server crashed or failed ({s})"),
                _ => "the language server did not stop cleanly".to_owned(),
            };
            let detail = if problems.is_empty() {
                String::new()
            } else {
                format!(": {}", problems.join("; "))
            };
            o.line(&o.paint(Style::Red, &format!("✘ {what}{detail}")));
            let text = std::fs::read_to_string(log).unwrap_or_default();
            if text.trim().is_empty() {
                o.line(&format!("  its log ({}) is empty", log.display()));
            } else {
                o.line(&format!("  the end of its log ({}):", log.display()));
                o.lines(&render::tail(&text, 20));
            }
            false
        }
    }
}

fn summary(o: Out, status: &Value, root: &Path, server_ok: bool, disk_matches: bool) -> ExitCode {
    let state = status["state"].as_str().unwrap_or("unknown");
    let reason = status["reason"].as_str().unwrap_or(state);
    let turns = status["turn"].as_u64().unwrap_or(0);
    let unpriced = status["unpricedCalls"]
        .as_u64()
        .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX));
    let spent = format!(
        "{turns} turn{} · {} tokens in, {} out · {}",
        if turns == 1 { "" } else { "s" },
        status["inputTokens"].as_u64().unwrap_or(0),
        status["outputTokens"].as_u64().unwrap_or(0),
        // Never "$0.00" for a cost Rein does not know.
        rein_app::format::cost(status["costUsd"].as_f64().unwrap_or(0.0), unpriced),
    );
    let succeeded = state.parse() == Ok(rein_core::task::TaskState::Succeeded);
    o.line(&o.paint(Style::Dim, &"─".repeat(72)));
    if succeeded {
        o.line(&o.paint(
            Style::Green,
            &format!("✔ Fixed. Final state `succeeded`: {reason}"),
        ));
    } else {
        o.line(&o.paint(
            Style::Red,
            &format!("✘ Not fixed. Final state `{state}`: {reason}"),
        ));
    }
    o.line(&format!("  {spent}"));
    if succeeded && disk_matches {
        o.line(&format!(
            "  {SOURCE_FILE} on disk holds the approved buffer (the editor saved it before the tests ran)"
        ));
    } else if succeeded {
        o.line(&o.paint(
            Style::Yellow,
            &format!("  {SOURCE_FILE} on disk differs from the editor's buffer"),
        ));
    }
    o.line(&format!("  The project is in {}", root.display()));
    o.line("  Look at it yourself:");
    o.line(&format!(
        "    cd {} && python3 -m unittest -v",
        shell_quote(&root.to_string_lossy())
    ));
    o.line(&format!(
        "  Rein's task artifacts (test logs) are in {}",
        root.join(".rein/artifacts").display()
    ));
    if succeeded && server_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Quotes a path for a POSIX shell when it needs it.
fn shell_quote(text: &str) -> String {
    if text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@".contains(c))
    {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_shapes_of_a_workspace_edit_name_their_documents() {
        let hunk = json!([{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "newText": "x"}]);
        let versioned = json!({"documentChanges": [
            {"kind": "create", "uri": "file:///p/new.py"},
            {"textDocument": {"uri": "file:///p/new.py", "version": null}, "edits": hunk},
            {"textDocument": {"uri": "file:///p/cart.py", "version": 3}, "edits": hunk},
        ]});
        assert_eq!(
            edited_documents(&versioned),
            vec![
                ("file:///p/new.py", &hunk, true),
                ("file:///p/cart.py", &hunk, false)
            ]
        );
        let plain = json!({"changes": {"file:///p/cart.py": hunk}});
        assert_eq!(
            edited_documents(&plain),
            vec![("file:///p/cart.py", &hunk, false)]
        );
        assert_eq!(edited_documents(&json!({})), vec![]);
    }

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn the_environment_decides_between_scripted_and_real() {
        assert_eq!(real_provider_wanted(&env(&[])), None);
        assert_eq!(
            real_provider_wanted(&env(&[("ANTHROPIC_API_KEY", "  ")])),
            None
        );
        assert_eq!(
            real_provider_wanted(&env(&[("ANTHROPIC_API_KEY", "sk-x")])).as_deref(),
            Some("ANTHROPIC_API_KEY")
        );
        assert_eq!(
            real_provider_wanted(&env(&[("OPENAI_BASE_URL", "http://localhost:11434/v1")]))
                .as_deref(),
            Some("OPENAI_BASE_URL")
        );
        assert_eq!(
            real_provider_wanted(&env(&[("REIN_PROVIDER", "openai")])).as_deref(),
            Some("REIN_PROVIDER=openai")
        );
        // An explicit `scripted` wins over a key that happens to be set.
        assert_eq!(
            real_provider_wanted(&env(&[
                ("REIN_PROVIDER", "scripted"),
                ("ANTHROPIC_API_KEY", "sk-x")
            ])),
            None
        );
    }

    #[test]
    fn the_embedded_project_is_the_bundled_one() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../app/demo/project");
        let mut on_disk = Vec::new();
        let mut stack = vec![dir.clone()];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if !path.to_string_lossy().contains("__pycache__") {
                    on_disk.push(
                        path.strip_prefix(&dir)
                            .unwrap()
                            .to_string_lossy()
                            .into_owned(),
                    );
                }
            }
        }
        on_disk.sort();
        let mut embedded: Vec<String> = PROJECT.iter().map(|(p, _)| (*p).to_owned()).collect();
        embedded.sort();
        assert_eq!(
            embedded, on_disk,
            "list every file of demo/project in PROJECT"
        );
        assert!(
            PROJECT
                .iter()
                .any(|(p, t)| *p == TEST_FILE && t.contains("def test_total"))
        );
    }

    /// Issue 16, point 10: in an editor, the user may reject the demo's
    /// edit. The bundled scenario then says so, twice (Rein checks the
    /// first claim and asks for more; the same answer again ends the task
    /// as given up, quoting it), and a request past the end of the script
    /// fails at once, naming the scripted model, not Anthropic.
    #[tokio::test]
    async fn the_bundled_scenario_names_a_rejected_edit_and_its_end() {
        use rein_models::{CachePlan, Message, ModelRequest, Part, ToolCall, ToolResult, ToolSpec};
        use rein_scripted::fake_model::{FakeModel, Scenario};
        use tokio_util::sync::CancellationToken;

        let scenario = Scenario::from_json(rein_app::setup::DEMO_SCENARIO).unwrap();
        let server = FakeModel::start(scenario).await.unwrap();
        let config = rein_models::ProviderConfig {
            provider: ProviderKind::Scripted,
            model: "claude-sonnet-4-5".into(),
            base_url: server.base_url(),
            api_key: rein_models::ApiKey::new("scripted-key"),
            stream: true,
            retry: Default::default(),
            timeouts: Default::default(),
            prices: Default::default(),
            scenario: None,
            context_window: None,
            temperature: 0.0,
            key_from: None,
        };
        let client = rein_models::anthropic_client(&config).unwrap();
        let edit = ToolCall {
            id: "toolu_3".into(),
            name: "edit_file".into(),
            arguments: json!({"path": SOURCE_FILE, "old_text": "a", "new_text": "b"}),
        };
        let request = |last: &str| ModelRequest {
            model: config.model.clone(),
            system: vec!["You are Rein.".into()],
            messages: vec![
                Message::user("fix test_total"),
                Message::assistant(vec![Part::ToolCall(edit.clone())]),
                Message::tool_results(vec![ToolResult {
                    call_id: edit.id.clone(),
                    content: last.to_owned(),
                    is_error: true,
                }]),
            ],
            tools: vec![ToolSpec {
                name: "edit_file".into(),
                description: "Edits a file.".into(),
                input_schema: json!({"type": "object"}),
            }],
            max_output_tokens: 1024,
            temperature: None,
            seed: None,
            tool_choice: Default::default(),
            cache: CachePlan {
                enabled: false,
                stable_message: None,
            },
        };
        let ask = |last: &str| {
            rein_models::collect(client.stream(request(last), CancellationToken::new()))
        };
        // The run up to the edit: the test, the read, the edit.
        for _ in 0..3 {
            ask("ok").await.unwrap();
        }
        let rejected = "The user rejected this edit to cart.py (rejected in the editor).";
        // The same answer, then the loop guard's one more try.
        for _ in 0..3 {
            let reply = ask(rejected).await.unwrap();
            assert!(reply.parts.iter().all(|p| !matches!(p, Part::ToolCall(_))));
            assert!(
                reply
                    .text()
                    .starts_with("You rejected the edit to cart.py, so nothing was changed"),
                "{}",
                reply.text()
            );
        }
        let after = ask(rejected).await.unwrap_err().to_string();
        assert!(
            after.starts_with("the scripted model refused the request"),
            "{after}"
        );
        assert!(
            !after.contains("Anthropic") && !after.contains("gave up after"),
            "{after}"
        );
        assert_eq!(
            server.requests().len(),
            7,
            "the end of the script is not retried"
        );
    }

    #[test]
    fn paths_are_quoted_for_the_shell_only_when_needed() {
        assert_eq!(shell_quote("/tmp/rein-demo-1"), "/tmp/rein-demo-1");
        assert_eq!(shell_quote("/tmp/my dir/it's"), r"'/tmp/my dir/it'\''s'");
    }
}
