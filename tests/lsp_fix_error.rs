//! "Fix this error with Rein" through the real `rein lsp`: the editor
//! hands the server another server's diagnostic in the code action's
//! context; Rein offers the fix only when it can check it with the checker
//! that reports it (real mypy, pinned, in the sandbox), runs the task on
//! the live buffer, and says "fixed" only when mypy no longer reports it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use support::{Server, Setup, checkers};

const APP: &str = "app.py";
/// 0-based: `    print(greet(3))`.
const LINE: u32 = 6;
const MYPY: &str = "Argument 1 to \"greet\" has incompatible type \"int\"; expected \"str\"";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../server/core/tests/fixtures/fix_error")
        .join(name)
}

/// The mypy fixture in `rein lsp`, the checkers on `PATH` and readable in
/// the sandbox (the user's settings), the scripted model playing `replies`.
async fn server(replies: Value) -> Server {
    server_on("python", replies).await
}

/// [`server`] on the core's fixture `name` (`python`, `rust`, `typescript`).
async fn server_on(name: &str, replies: Value) -> Server {
    let scenario = tempfile::NamedTempFile::new()
        .unwrap()
        .into_temp_path()
        .keep()
        .unwrap();
    std::fs::write(&scenario, json!({ "replies": replies }).to_string()).unwrap();
    let mut setup = Setup::new(fixture(name), scenario);
    setup.env = vec![
        ("PATH", checkers::path_var().to_string_lossy().into_owned()),
        ("XDG_CONFIG_HOME", "{tmp}/user-config".to_owned()),
    ];
    setup.before_start = Some(Box::new(|root: &Path| {
        let dir = root.parent().unwrap().join("user-config/rein");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), checkers::user_settings()).unwrap();
    }));
    Server::start(setup).await
}

/// The diagnostic as pylsp-mypy or an editor's mypy integration sends it.
fn mypy_diagnostic(severity: u32, source: &str, message: &str) -> Value {
    json!({
        "range": {"start": {"line": LINE, "character": 16}, "end": {"line": LINE, "character": 17}},
        "severity": severity,
        "source": source,
        "code": "arg-type",
        "message": message,
    })
}

async fn actions(s: &mut Server, diagnostics: Value) -> Vec<Value> {
    actions_in(s, APP, diagnostics).await
}

async fn actions_in(s: &mut Server, file: &str, diagnostics: Value) -> Vec<Value> {
    let uri = s.editor.uri(file);
    let answer = s
        .editor
        .request(
            "textDocument/codeAction",
            json!({
                "textDocument": {"uri": uri},
                "range": {"start": {"line": LINE, "character": 16}, "end": {"line": LINE, "character": 16}},
                "context": {"diagnostics": diagnostics}
            }),
        )
        .await
        .unwrap();
    answer["result"].as_array().cloned().unwrap_or_default()
}

fn titles(actions: &[Value]) -> Vec<String> {
    actions
        .iter()
        .map(|a| {
            let disabled = a["disabled"]["reason"]
                .as_str()
                .map(|r| format!(" [disabled: {r}]"));
            format!(
                "{}{}",
                a["title"].as_str().unwrap(),
                disabled.unwrap_or_default()
            )
        })
        .collect()
}

fn edit(new: &str) -> Value {
    json!({
        "text": "greet takes a str; the call passes an int.",
        "tool_calls": [{"name": "edit_file", "input": {
            "path": APP, "old_text": "    print(greet(3))", "new_text": new
        }}]
    })
}

fn claim() -> Value {
    json!({"text": "Fixed: greet gets a str now."})
}

async fn start(s: &mut Server, action: &Value) -> String {
    let command = &action["command"];
    let answer = s
        .editor
        .request(
            "workspace/executeCommand",
            json!({"command": command["command"], "arguments": command["arguments"]}),
        )
        .await
        .unwrap();
    answer["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task started: {answer}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fix_error_is_offered_on_errors_and_warnings_rein_can_check() {
    let mut s = server(json!([claim()])).await;
    s.editor.open(APP).await.unwrap();
    let cases = [
        ("a mypy error", json!([mypy_diagnostic(1, "mypy", MYPY)])),
        ("a warning", json!([mypy_diagnostic(2, "mypy", MYPY)])),
        (
            "no source: the project's checker",
            json!([mypy_diagnostic(1, "", MYPY)]),
        ),
        ("a hint", json!([mypy_diagnostic(4, "mypy", MYPY)])),
        (
            "an unknown checker",
            json!([mypy_diagnostic(1, "acme-lint", "bad style")]),
        ),
        (
            "two at once",
            json!([
                mypy_diagnostic(1, "mypy", MYPY),
                mypy_diagnostic(2, "mypy", "Unused \"type: ignore\" comment")
            ]),
        ),
    ];
    let mut got = String::new();
    for (name, diagnostics) in cases {
        got.push_str(&format!("{name}:\n"));
        for title in titles(&actions(&mut s, diagnostics).await) {
            got.push_str(&format!("  {title}\n"));
        }
    }
    expect_test::expect![[r#"
        a mypy error:
          Fix this error with Rein
        a warning:
          Fix this warning with Rein
        no source: the project's checker:
          Fix this error with Rein
        a hint:
        an unknown checker:
          Fix this error with Rein [disabled: Rein cannot run `acme-lint` (the diagnostic's source) to check this; set `check_command` and `check_format` to the command that reports it]
          Ask Rein about this error…
        two at once:
          Fix this error with Rein: Argument 1 to "greet" has incompatible type "int"; expected …
          Fix this warning with Rein: Unused "type: ignore" comment
    "#]]
    .assert_eq(&got);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fix_error_in_the_editor_is_verified_by_the_checker_that_reported_it() {
    let mut s = server(json!([edit("    print(greet(str(3)))"), claim()])).await;
    s.editor.open(APP).await.unwrap();
    let offered = actions(&mut s, json!([mypy_diagnostic(1, "mypy", MYPY)])).await;
    assert_eq!(offered[0]["command"]["command"], "rein.fixError");
    let task = start(&mut s, &offered[0]).await;
    let status = s.until_end(&task).await;
    assert_eq!(status["state"], "succeeded", "{status}\n{}", s.log());
    assert!(s.disk(APP).contains("greet(str(3))"));
    // The evidence names the checker's command and its result before and after.
    let verification = s.messages("rein/verification");
    let last = verification
        .last()
        .unwrap_or_else(|| panic!("no verification: {}", s.log()));
    let text = last.to_string();
    assert!(text.contains("mypy"), "{text}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fix_error_silencing_the_checker_is_not_fixed() {
    let replies = json!([
        edit("    print(greet(3))  # type: ignore"),
        claim(),
        claim(),
        claim()
    ]);
    let mut s = server(replies).await;
    s.editor.open(APP).await.unwrap();
    let offered = actions(&mut s, json!([mypy_diagnostic(1, "mypy", MYPY)])).await;
    let task = start(&mut s, &offered[0]).await;
    let status = s.until_end(&task).await;
    assert_eq!(status["state"], "unverified", "{status}");
    assert!(status.to_string().contains("type: ignore"), "{status}");
    s.shutdown().await;
}

/// A diagnostic the checker does not report (stale, or another server's
/// opinion) cannot be shown fixed: the task ends before the model starts,
/// saying why, and nothing changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fix_error_the_checker_does_not_report_fails_at_once_saying_why() {
    let mut s = server(json!([edit("    print(greet(str(3)))"), claim()])).await;
    s.editor.open(APP).await.unwrap();
    let mut stale = mypy_diagnostic(1, "mypy", "Name \"nothing\" is not defined");
    stale["code"] = json!("name-defined");
    let offered = actions(&mut s, json!([stale])).await;
    let task = start(&mut s, &offered[0]).await;
    let status = s.until_end(&task).await;
    assert_eq!(status["state"], "failed", "{status}");
    assert!(
        status["reason"].as_str().unwrap().contains("mypy"),
        "{status}"
    );
    assert!(s.disk(APP).contains("    print(greet(3))"));
    s.shutdown().await;
}

/// A hostile client's argument cannot point the task outside the folder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fix_error_outside_the_workspace_is_refused() {
    let mut s = server(json!([claim()])).await;
    let answer = s
        .editor
        .request(
            "workspace/executeCommand",
            json!({"command": "rein.fixError", "arguments": [{
                "uri": "file:///etc/passwd",
                "diagnostic": mypy_diagnostic(1, "mypy", MYPY),
            }]}),
        )
        .await
        .unwrap();
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("not inside the workspace folder"),
        "{answer}"
    );
    s.shutdown().await;
}

/// A Rust error (as rust-analyzer shows it) and a TypeScript error (as
/// VS Code's TypeScript server shows it), each fixed through `rein lsp`
/// and confirmed by the checker Rein picks from the source: `cargo check`
/// and `tsc`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fix_error_in_rust_and_typescript_is_verified_by_cargo_check_and_tsc() {
    let cases = [
        (
            "rust",
            "src/main.rs",
            json!({
                "range": {"start": {"line": 5, "character": 17}, "end": {"line": 5, "character": 27}},
                "severity": 1, "source": "rust-analyzer", "code": "E0308",
                "message": "mismatched types\nexpected `u32`, found `String`",
            }),
            (
                "    let n: u32 = greet(\"x\");",
                "    let n: usize = greet(\"x\").len();",
            ),
            "`cargo check --workspace --all-targets --message-format=json` no longer reports [E0308] at src/main.rs:6",
        ),
        (
            "typescript",
            "src/app.ts",
            json!({
                "range": {"start": {"line": 4, "character": 13}, "end": {"line": 4, "character": 14}},
                "severity": 1, "source": "ts", "code": 2322,
                "message": "Type 'string' is not assignable to type 'number'.",
            }),
            (
                "export const n: number = greet(\"x\");",
                "export const n: number = greet(\"x\").length;",
            ),
            "no longer reports [2322] at src/app.ts:5",
        ),
    ];
    for (fixture, file, diagnostic, (old, new), verdict) in cases {
        let replies = json!([
            {"text": "The types disagree.", "tool_calls": [{"name": "edit_file", "input": {
                "path": file, "old_text": old, "new_text": new}}]},
            claim(),
        ]);
        let mut s = server_on(fixture, replies).await;
        s.editor.open(file).await.unwrap();
        let offered = actions_in(&mut s, file, json!([diagnostic])).await;
        assert_eq!(offered.len(), 1, "{fixture}: {offered:#?}");
        assert_eq!(
            offered[0]["command"]["command"], "rein.fixError",
            "{fixture}"
        );
        let task = start(&mut s, &offered[0]).await;
        let status = s.until_end(&task).await;
        assert_eq!(
            status["state"],
            "succeeded",
            "{fixture}: {status}\n{}",
            s.log()
        );
        let reason = status["reason"].as_str().unwrap();
        assert!(reason.contains(verdict), "{fixture}: {reason}");
        assert!(s.disk(file).contains(new), "{fixture}");
        s.shutdown().await;
    }
}

/// A fix that brings a new error into the file it touched is not "fixed":
/// the verdict names the new error, and the model is told.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fix_error_that_brings_a_new_error_is_not_fixed() {
    let replies = json!([
        edit("    print(greet(str(3)))\n    count: int = \"three\""),
        claim(),
        claim(),
        claim(),
    ]);
    let mut s = server(replies).await;
    s.editor.open(APP).await.unwrap();
    let offered = actions(&mut s, json!([mypy_diagnostic(1, "mypy", MYPY)])).await;
    let task = start(&mut s, &offered[0]).await;
    let status = s.until_end(&task).await;
    assert_ne!(status["state"], "succeeded", "{status}");
    let verdicts = s.messages("rein/verification");
    let first = verdicts
        .first()
        .unwrap_or_else(|| panic!("no verdict: {}", s.log()));
    assert_eq!(first["params"]["passed"], false, "{first}");
    let detail = first["params"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("new") && detail.contains("[assignment]"),
        "{detail}"
    );
    s.shutdown().await;
}
