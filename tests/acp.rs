//! `rein acp` end to end: the real binary driven by a real ACP client — the
//! official TypeScript SDK (`@agentclientprotocol/sdk`, pinned, installed
//! by `tests/acp/install.sh`) in `tests/acp/client.mjs` — on a copy of the
//! demo project, with the scripted model. Every message the agent sends is
//! checked against the protocol's schema by the client (the SDK's own zod
//! schemas); a test fails on any `schema_error`.
//!
//! Never a real model, never the network (but npm's registry, once, in the
//! install script); no timing assertions.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use rein_testkit::rein_binary;
use serde_json::{Value, json};

mod support;

use support::{FIXED, UNFIXED};

const FIX_PROMPT: &str = "Fix the failing test tests/test_cart.py::TestCart.test_total";

/// The folder holding `node_modules/` with the SDK, installed once.
fn sdk() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let script = support::tests_dir().join("acp/install.sh");
        let out = Command::new("bash")
            .arg(&script)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{} failed (these tests need node and npm, and the npm registry once):\n{}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        PathBuf::from(stdout.lines().last().unwrap_or_default())
    })
}

/// A copy of the demo project, a user config and state folder of its own.
struct Session {
    dir: tempfile::TempDir,
}

/// What the client saw.
struct Transcript {
    lines: Vec<Value>,
}

impl Session {
    fn new() -> Self {
        Self {
            dir: support::demo_scratch(),
        }
    }

    /// A session on the core's mypy fixture (`app.py` line 7 passes an
    /// int to a str parameter), the checkers readable in the sandbox.
    fn on_the_mypy_fixture() -> Self {
        let dir = tempfile::tempdir().unwrap();
        support::checkers::copy_fixture("python", &dir.path().join("project"));
        let config = dir.path().join("config/rein");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(
            config.join("config.toml"),
            support::checkers::user_settings(),
        )
        .unwrap();
        Self { dir }
    }

    /// A session whose folder's own `.rein/config.toml` allows a command:
    /// a grant, which needs the user's trust.
    fn with_settings_that_grant() -> Self {
        let s = Self::new();
        std::fs::create_dir_all(s.root().join(".rein")).unwrap();
        std::fs::write(
            s.root().join(".rein/config.toml"),
            "[permissions]\nallow = [\"run_command(echo:*)\"]\n",
        )
        .unwrap();
        s
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("project").canonicalize().unwrap()
    }

    fn cart(&self) -> String {
        std::fs::read_to_string(self.root().join("cart.py")).unwrap()
    }

    /// Runs the client with `script` (over the defaults: the agent, the
    /// folder, the scripted model playing `scenario`).
    fn run(&self, scenario: &Path, script: Value) -> Transcript {
        let mut full = json!({
            "agent": [rein_binary().unwrap(), "acp"],
            "cwd": self.root(),
            "stderr_path": self.dir.path().join("agent.log"),
            "timeout_ms": 120_000,
            "env": {
                "REIN_PROVIDER": "scripted",
                "REIN_SCENARIO": scenario,
                "XDG_CONFIG_HOME": self.dir.path().join("config"),
                "XDG_STATE_HOME": self.dir.path().join("state"),
                "REIN_LOG": "debug",
            },
        });
        for (key, value) in script.as_object().unwrap() {
            if key == "env" {
                for (name, v) in value.as_object().unwrap() {
                    full["env"][name] = v.clone();
                }
            } else {
                full[key] = value.clone();
            }
        }
        let path = self.dir.path().join("script.json");
        std::fs::write(&path, full.to_string()).unwrap();
        let mut command = Command::new("node");
        command
            .arg(support::tests_dir().join("acp/client.mjs"))
            .arg(sdk())
            .arg(&path);
        for name in rein_testkit::PROVIDER_ENV {
            command.env_remove(name);
        }
        let out = command.output().unwrap();
        assert!(
            out.status.success(),
            "client.mjs failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let transcript = Transcript { lines };
        let errors = transcript.events("schema_error");
        assert!(
            errors.is_empty(),
            "messages off the protocol's schema: {errors:#?}\n{}",
            self.log()
        );
        transcript
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("agent.log")).unwrap_or_default()
    }

    fn scenario(&self, scenario: &Value) -> PathBuf {
        let path = self.dir.path().join("scenario.json");
        std::fs::write(&path, scenario.to_string()).unwrap();
        path
    }
}

impl Transcript {
    fn events(&self, event: &str) -> Vec<&Value> {
        self.lines.iter().filter(|l| l["event"] == event).collect()
    }

    /// The agent's messages of `method`.
    fn sent_by_agent(&self, method: &str) -> Vec<&Value> {
        self.lines
            .iter()
            .filter(|l| l["dir"] == "from_agent" && l["msg"]["method"] == method)
            .map(|l| &l["msg"])
            .collect()
    }

    /// The `session/update`s of one kind.
    fn updates(&self, kind: &str) -> Vec<&Value> {
        self.sent_by_agent("session/update")
            .into_iter()
            .map(|m| &m["params"]["update"])
            .filter(|u| u["sessionUpdate"] == kind)
            .collect()
    }

    /// Everything the agent said, joined.
    fn said(&self) -> String {
        self.updates("agent_message_chunk")
            .iter()
            .map(|u| u["content"]["text"].as_str().unwrap_or_default())
            .collect()
    }

    fn stop_reason(&self) -> Value {
        let results = self.events("prompt_result");
        assert_eq!(results.len(), 1, "{:#?}", self.lines);
        results[0]["result"]["stopReason"].clone()
    }

    /// Every byte the agent sent.
    fn wire(&self) -> String {
        self.lines
            .iter()
            .filter(|l| l["dir"] == "from_agent")
            .map(|l| l["msg"].to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn text(text: &str) -> Value {
    json!([{"type": "text", "text": text}])
}

/// The demo task with the edit allowed: the fix lands, the verifier's
/// verdict (with its evidence) is the last message, then `end_turn`; the
/// permission showed the whole file's diff; tool calls carry their kinds;
/// usage carries the cost in USD.
#[test]
fn the_demo_test_is_fixed_with_the_permission_granted() {
    let s = Session::new();
    let t = s.run(
        &support::demo_scenario(),
        json!({"permission": "allow_once", "steps": [{"prompt": text(FIX_PROMPT)}]}),
    );
    assert_eq!(t.stop_reason(), "end_turn", "{}", s.log());
    assert!(s.cart().contains(FIXED), "{}", s.cart());
    let said = t.said();
    assert!(
        said.contains("**Done, verified by Rein**: fixed: `TestCart.test_total` passes"),
        "{said}"
    );
    assert!(
        said.contains(
            "- test_passes tests/test_cart.py::TestCart.test_total: `python3 -m unittest"
        ),
        "{said}"
    );
    // The one question: the edit, with the whole file before and after.
    let asked = t.events("permission");
    assert_eq!(asked.len(), 1, "{asked:#?}");
    let call = &asked[0]["params"]["toolCall"];
    assert_eq!(call["kind"], "edit");
    let diff = &call["content"][0];
    assert_eq!(diff["type"], "diff");
    assert_eq!(diff["path"], s.root().join("cart.py").display().to_string());
    assert!(diff["oldText"].as_str().unwrap().contains(UNFIXED));
    assert!(diff["newText"].as_str().unwrap().contains(FIXED));
    let options: Vec<&str> = asked[0]["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["allow_once", "allow_always", "reject_once"]);
    // Tool calls, then their outcomes.
    let kinds: Vec<&str> = t
        .updates("tool_call")
        .iter()
        .map(|u| u["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["execute", "read", "edit", "execute"]);
    let statuses: Vec<&str> = t
        .updates("tool_call_update")
        .iter()
        .filter_map(|u| u["status"].as_str())
        .collect();
    // The first run shows the test failing: a failed call.
    assert_eq!(statuses, ["failed", "completed", "completed", "completed"]);
    let usage = t.updates("usage_update");
    assert!(!usage.is_empty());
    assert_eq!(usage.last().unwrap()["cost"]["currency"], "USD");
    // The progress note as a plan: first the fix to find, last what the
    // fix came to; the check that decides is always the last entry.
    let plans = t.updates("plan");
    let entries = |plan: &Value| -> Vec<String> {
        plan["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                format!(
                    "{}: {}",
                    e["status"].as_str().unwrap(),
                    e["content"].as_str().unwrap()
                )
            })
            .collect()
    };
    assert_eq!(
        entries(plans[0]),
        [
            "in_progress: Find the cause and change the code",
            "pending: Rein runs the checks and sees them pass"
        ]
    );
    let last = entries(plans.last().unwrap());
    assert!(
        last[0].starts_with("completed: Changed cart.py ("),
        "{last:?}"
    );
    assert_eq!(
        last.last().unwrap(),
        "pending: Rein runs the checks and sees them pass"
    );
}

/// A rejected edit changes nothing, the model is told, and the last
/// message does not claim a fix.
#[test]
fn a_rejected_edit_changes_nothing() {
    let s = Session::new();
    let before = s.cart();
    let t = s.run(
        &support::demo_scenario(),
        json!({"permission": "reject_once", "steps": [{"prompt": text(FIX_PROMPT)}]}),
    );
    assert_eq!(t.stop_reason(), "end_turn");
    assert_eq!(s.cart(), before);
    let said = t.said();
    assert!(said.contains("You rejected the edit to cart.py"), "{said}");
    assert!(!said.contains("Done, verified"), "{said}");
    assert!(said.contains("**Not done**"), "{said}");
}

/// "Allow always" is a rule for the session: the second edit of the same
/// session is not asked.
#[test]
fn allow_always_is_not_asked_again_in_the_session() {
    let s = Session::new();
    let scenario = s.scenario(&json!({"replies": [
        {"tool_calls": [{"name": "edit_file", "input": {"path": "cart.py", "old_text": "\"\"\"A tiny shopping cart.\"\"\"", "new_text": "\"\"\"A small shopping cart.\"\"\""}}]},
        {"tool_calls": [{"name": "edit_file", "input": {"path": "cart.py", "old_text": UNFIXED, "new_text": FIXED}}]},
        {"text": "Fixed."}
    ]}));
    let t = s.run(
        &scenario,
        json!({"permission": "allow_always", "steps": [{"prompt": text(FIX_PROMPT)}]}),
    );
    assert_eq!(t.events("permission").len(), 1);
    assert!(s.cart().contains(FIXED) && s.cart().contains("A small shopping cart"));
    assert!(t.said().contains("Done, verified by Rein"), "{}", t.said());
}

/// The live buffer: Rein reads the user's unsaved text, and the user types
/// while the edit waits for permission; the edit is fitted to what they
/// typed and written through the client — both their lines and the fix are
/// there, and the tests ran on that text (the editor saves what Rein
/// writes).
#[test]
fn typing_while_an_edit_is_pending_is_kept() {
    let s = Session::new();
    let cart = s.root().join("cart.py");
    let unsaved = format!("# my unsaved note\n{}", s.cart());
    let typed = format!("{unsaved}\n# typed while Rein asked\n");
    let t = s.run(
        &support::demo_scenario(),
        json!({
            "fs": true,
            "save_on_write": true,
            "buffers": {cart.display().to_string(): unsaved},
            "on_permission_edit_buffer": {"path": cart, "content": typed},
            "permission": "allow_once",
            "steps": [{"prompt": text(FIX_PROMPT)}],
        }),
    );
    assert_eq!(t.stop_reason(), "end_turn");
    // Read through the client: the model saw the unsaved note.
    assert!(
        t.events("fs_read").iter().any(|r| r["source"] == "buffer"),
        "{:#?}",
        t.events("fs_read")
    );
    let writes = t.events("fs_write");
    assert_eq!(writes.len(), 1, "{writes:#?}");
    let written = writes[0]["content"].as_str().unwrap();
    assert!(written.starts_with("# my unsaved note\n"), "{written}");
    assert!(written.ends_with("# typed while Rein asked\n"), "{written}");
    assert!(written.contains(FIXED), "{written}");
    assert_eq!(s.cart(), written);
    assert!(t.said().contains("Done, verified by Rein"), "{}", t.said());
}

/// The user types over the very lines the edit changes: the edit no longer
/// fits, so it is not written (the model is told to read again); the
/// user's text stays.
#[test]
fn typing_over_the_edited_lines_refuses_the_edit() {
    let s = Session::new();
    let cart = s.root().join("cart.py");
    let original = s.cart();
    let mine = original.replace(UNFIXED, "    return 42  # mine\n\n\ndef count");
    assert_ne!(mine, original);
    let t = s.run(
        &support::demo_scenario(),
        json!({
            "fs": true,
            "buffers": {cart.display().to_string(): original},
            "on_permission_edit_buffer": {"path": cart, "content": mine},
            "permission": "allow_once",
            "steps": [{"prompt": text(FIX_PROMPT)}],
        }),
    );
    assert!(
        t.events("fs_write").is_empty(),
        "{:#?}",
        t.events("fs_write")
    );
    assert!(!t.said().contains("Done, verified"), "{}", t.said());
    let _ = t.stop_reason();
}

/// `session/cancel` mid-task ends the prompt `cancelled`.
#[test]
fn a_cancelled_prompt_ends_cancelled() {
    let s = Session::new();
    let t = s.run(
        &support::demo_scenario(),
        json!({"permission": "never", "cancel_after_updates": 3, "steps": [{"prompt": text(FIX_PROMPT)}]}),
    );
    assert_eq!(t.stop_reason(), "cancelled", "{}", s.log());
    assert_eq!(t.events("cancel").len(), 1);
}

/// The client goes away mid-task (its window closed: stdin ends): the
/// task is cancelled saying so, its history ends there, and the agent
/// exits on its own.
#[test]
fn a_client_that_closes_mid_task_leaves_a_task_that_ended_saying_why() {
    let s = Session::new();
    let t = s.run(
        &support::tests_dir().join("fixtures/lsp_tasks/slow.json"),
        json!({"permission": "allow_once", "close_after_updates": 3, "steps": [{"prompt": text(FIX_PROMPT)}]}),
    );
    assert_eq!(t.events("close").len(), 1, "{:#?}", t.lines);
    let done = t.events("done");
    assert_eq!(done[0]["exit_code"], 0, "{:#?}\n{}", done, s.log());
    assert!(
        t.events("kill").is_empty(),
        "the agent did not exit by itself"
    );
    let traces: Vec<String> = std::fs::read_dir(s.root().join(".rein/traces"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert_eq!(traces.len(), 1);
    assert!(
        traces[0].contains("cancelled: the client closed the connection"),
        "{}",
        traces[0]
    );
    assert_eq!(s.cart(), support::demo_cart());
}

/// A prompt with an embedded file reaches the model with that file; a
/// secret in the environment that the model repeats reaches the client
/// only as `<redacted>`.
#[test]
fn embedded_context_reaches_the_model_and_no_key_reaches_the_client() {
    let s = Session::new();
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let said = format!("I read the note. The token is {token} and I will not use it.");
    let scenario = s.scenario(&json!({"replies": [
        {"text": said}, {"text": said}, {"text": said}, {"text": said}
    ]}));
    let prompt = json!([
        {"type": "text", "text": "Summarise the attached note."},
        {"type": "resource", "resource": {"uri": "file:///notes/todo.md", "mimeType": "text/markdown", "text": "Buy milk; ship Rein 0.2."}}
    ]);
    let t = s.run(
        &scenario,
        json!({"env": {"GITHUB_TOKEN": token}, "steps": [{"prompt": prompt}]}),
    );
    let _ = t.stop_reason();
    assert!(!t.wire().contains(token), "the key reached the client");
    assert!(t.said().contains("<redacted>"), "{}", t.said());
    let artifacts = s.root().join(".rein/artifacts");
    let task = std::fs::read_dir(&artifacts)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let request = std::fs::read_to_string(task.join("request-1.json")).unwrap();
    assert!(request.contains("Buy milk; ship Rein 0.2."), "{request}");
    assert!(request.contains("file:///notes/todo.md"), "{request}");
}

/// What `initialize` declares: embedded context and HTTP MCP servers, no
/// session loading (not built yet).
#[test]
fn initialize_says_what_rein_offers() {
    let s = Session::new();
    let t = s.run(&support::demo_scenario(), json!({"steps": []}));
    let init = &t.events("initialize")[0]["result"];
    assert_eq!(init["agentInfo"]["name"], "rein");
    assert_eq!(
        init["agentCapabilities"]["promptCapabilities"]["embeddedContext"],
        true
    );
    assert_eq!(init["agentCapabilities"]["mcpCapabilities"]["http"], true);
    assert_eq!(init["agentCapabilities"]["loadSession"], true);
    assert_eq!(
        init["agentCapabilities"]["sessionCapabilities"]["list"],
        json!({})
    );
}

/// A second prompt in a session is a new task read with how the first
/// ended ("now rename it" needs the "it").
#[test]
fn a_follow_up_prompt_knows_how_the_earlier_one_ended() {
    let s = Session::new();
    let scenario = s.scenario(&json!({"replies": [
        {"text": "Hello."}, {"text": "Hello."}, {"text": "Hello."}, {"text": "Hello."}
    ]}));
    let t = s.run(
        &scenario,
        json!({"steps": [
            {"prompt": text("Say hello in NOTES.md.")},
            {"prompt": text("Now say goodbye there too.")}
        ]}),
    );
    assert_eq!(t.events("prompt_result").len(), 2, "{}", s.log());
    let artifacts = s.root().join(".rein/artifacts");
    // Task ids may sort either way within a second: told apart by content.
    let requests: Vec<String> = std::fs::read_dir(&artifacts)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path().join("request-1.json")).unwrap())
        .collect();
    assert_eq!(requests.len(), 2);
    let (second, first): (Vec<&String>, Vec<&String>) = requests
        .iter()
        .partition(|r| r.contains("Now say goodbye there too."));
    let (first, second) = (first[0], second[0]);
    assert!(!first.contains("Earlier in this session"), "{first}");
    assert!(second.contains("Earlier in this session"), "{second}");
    assert!(second.contains("Say hello in NOTES.md. → "), "{second}");
}

/// The agent is killed (SIGKILL, `REIN_CRASH_AT`) after the edit was
/// applied and logged, before the test ran. A new `rein acp` lists the
/// session, loads it — the request replayed, the task offered as
/// `/resume` — and `/resume` finishes it from its checkpoint: the edit is
/// not asked for or applied again, and the verdict is Rein's own run.
#[test]
fn a_task_killed_mid_way_resumes_through_session_load() {
    let s = Session::new();
    let scenario = support::tests_dir().join("fixtures/crash/stateless.json");
    let first = s.run(
        &scenario,
        json!({
            "permission": "allow_once",
            "env": {"REIN_CRASH_AT": "op_finished:edit_file"},
            "steps": [{"prompt": text(FIX_PROMPT)}],
        }),
    );
    let done = first.events("done");
    assert_eq!(done[0]["signal"], "SIGKILL", "{}", s.log());
    assert_eq!(first.events("permission").len(), 1);
    assert_eq!(s.cart().matches(FIXED).count(), 1, "{}", s.cart());
    let id = first.events("session")[0]["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();

    let second = s.run(
        &scenario,
        json!({
            "list_sessions": {"cwd": s.root()},
            "load_session": id,
            "permission": "allow_once",
            "steps": [{"prompt": text("/resume")}],
        }),
    );
    let listed = &second.events("sessions")[0]["result"]["sessions"];
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed:#}");
    assert_eq!(listed[0]["sessionId"], id.as_str());
    assert_eq!(listed[0]["title"], FIX_PROMPT);
    assert_eq!(listed[0]["cwd"], s.root().display().to_string());
    assert!(
        second.events("session")[0]["error"].is_null(),
        "{}",
        s.log()
    );
    let replayed: Vec<&str> = second
        .updates("user_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(replayed, [FIX_PROMPT]);
    let commands = second.updates("available_commands_update");
    assert_eq!(commands[0]["availableCommands"][0]["name"], "resume");
    let said = second.said();
    assert!(said.contains("**Interrupted**"), "{said}");
    assert_eq!(second.stop_reason(), "end_turn", "{}", s.log());
    assert!(
        said.contains("**Done, verified by Rein**: fixed: `TestCart.test_total` passes"),
        "{said}\n{}",
        s.log()
    );
    // At most once: the edit the op log holds as applied is not redone.
    assert!(
        second.events("permission").is_empty(),
        "{:#?}",
        second.events("permission")
    );
    assert_eq!(s.cart().matches(FIXED).count(), 1, "{}", s.cart());
    assert!(!s.cart().contains(UNFIXED));

    // Resumed once: the command has nothing left to do.
    let third = s.run(
        &scenario,
        json!({"load_session": id, "steps": [{"prompt": text("/resume")}]}),
    );
    assert!(third.updates("available_commands_update").is_empty());
    assert!(
        third
            .said()
            .contains("There is nothing to resume in this session."),
        "{}",
        third.said()
    );
    assert_eq!(third.updates("user_message_chunk").len(), 1);
}

/// A session id or folder that is not one is an error, not a new session:
/// nothing is created in a folder Rein never worked in.
#[test]
fn loading_a_session_that_is_not_there_is_an_error() {
    let s = Session::new();
    let t = s.run(
        &support::demo_scenario(),
        json!({"list_sessions": true, "load_session": "s-20261202-000000-dead", "steps": []}),
    );
    assert_eq!(t.events("sessions")[0]["result"]["sessions"], json!([]));
    let error = &t.events("session")[0]["error"];
    assert_eq!(error["code"], -32602, "{error:#}");
    assert!(
        error["data"]["message"]
            .as_str()
            .unwrap()
            .starts_with("there is no session s-20261202-000000-dead in "),
        "{error:#}"
    );
    assert!(!s.root().join(".rein/state.db").exists());
}

/// A folder whose own settings would grant something is asked about at
/// the first prompt, as a permission; "trust and remember" holds for that
/// file in the next session, which does not ask again.
#[test]
fn a_folders_own_settings_are_asked_about_once_and_remembered() {
    let s = Session::with_settings_that_grant();
    let prompt = json!([{"prompt": text(FIX_PROMPT)}]);
    let first = s.run(
        &support::demo_scenario(),
        json!({"permissions": ["allow_always", "allow_once"], "steps": prompt}),
    );
    let asked = first.events("permission");
    assert_eq!(asked.len(), 2, "{asked:#?}");
    let question = &asked[0]["params"];
    assert_eq!(question["toolCall"]["toolCallId"], "rein-workspace-trust");
    let shown = first.updates("tool_call");
    assert_eq!(shown[0]["title"], "Trust this folder's Rein settings?");
    let text = shown[0]["content"][0]["content"]["text"].as_str().unwrap();
    assert!(
        text.contains("allow `run_command(echo:*)` without asking"),
        "{text}"
    );
    assert_eq!(asked[1]["params"]["toolCall"]["kind"], "edit");
    assert!(
        !first.said().contains("are not trusted"),
        "{}",
        first.said()
    );
    assert!(s.cart().contains(FIXED));

    std::fs::write(s.root().join("cart.py"), s.cart().replace(FIXED, UNFIXED)).unwrap();
    let second = s.run(
        &support::demo_scenario(),
        json!({"permission": "allow_once", "steps": prompt}),
    );
    let asked = second.events("permission");
    assert_eq!(asked.len(), 1, "{asked:#?}");
    assert_eq!(asked[0]["params"]["toolCall"]["kind"], "edit");
}

/// "Don't trust": the file only tightens, the prompt says what was
/// ignored, and the next session asks again.
#[test]
fn a_folder_not_trusted_only_tightens_and_is_asked_again() {
    let s = Session::with_settings_that_grant();
    let prompt = json!([{"prompt": text(FIX_PROMPT)}]);
    let first = s.run(
        &support::demo_scenario(),
        json!({"permissions": ["reject_once", "allow_once"], "steps": prompt}),
    );
    let said = first.said();
    assert!(
        said.contains(
            "This folder's own settings (.rein/config.toml) are not trusted, so Rein ignores:"
        ),
        "{said}"
    );
    assert!(
        said.contains("allow `run_command(echo:*)` without asking"),
        "{said}"
    );
    let statuses: Vec<&str> = first
        .updates("tool_call_update")
        .iter()
        .filter(|u| u["toolCallId"] == "rein-workspace-trust")
        .map(|u| u["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["failed"]);
    assert!(s.cart().contains(FIXED));

    let second = s.run(
        &support::demo_scenario(),
        json!({"permission": "reject_once", "steps": []}),
    );
    // No prompt, no question: it is asked when there is work to do.
    assert!(second.events("permission").is_empty());
    std::fs::write(s.root().join("cart.py"), s.cart().replace(FIXED, UNFIXED)).unwrap();
    let third = s.run(
        &support::demo_scenario(),
        json!({"permission": "reject_once", "steps": prompt}),
    );
    assert_eq!(
        third.events("permission")[0]["params"]["toolCall"]["toolCallId"],
        "rein-workspace-trust"
    );
}

/// `client_terminal = true` in the user's own settings, and a panel that
/// offers a terminal: the model's command runs in the panel's terminal —
/// asked about, saying it runs outside Rein's sandbox — and its output
/// comes back to the model. Without the setting the same command runs in
/// Rein's sandbox and the panel's terminal is never used.
#[test]
fn with_client_terminal_the_models_commands_run_in_the_panels_terminal() {
    let s = Session::new();
    let command = "echo made-in-the-terminal > marker.txt && echo answer-$((6*7))";
    let scenario = s.scenario(&json!({"replies": [
        {"tool_calls": [{"name": "run_command", "input": {"command": command}}]},
        {"text": "I ran it."}
    ]}));
    let prompt = json!([{"prompt": text("Make a marker file.")}]);

    let plain = s.run(
        &scenario,
        json!({"terminal": true, "permission": "allow_once", "steps": prompt}),
    );
    assert!(plain.events("terminal_create").is_empty());
    let asked = plain.events("permission");
    assert_eq!(asked.len(), 1, "{asked:#?}");
    assert!(
        !asked[0]["params"]["toolCall"]["title"]
            .as_str()
            .unwrap()
            .contains("outside Rein's sandbox")
    );
    std::fs::remove_file(s.root().join("marker.txt")).unwrap();

    let config = s.dir.path().join("config/rein");
    std::fs::create_dir_all(&config).unwrap();
    // auto_approve runs commands the defaults would ask about unasked
    // inside the sandbox; in the panel's terminal there is none, so the
    // command is asked about all the same.
    std::fs::write(
        config.join("config.toml"),
        "client_terminal = true\n[sandbox]\nauto_approve = true\n",
    )
    .unwrap();
    std::fs::remove_dir_all(s.root().join(".rein/artifacts")).unwrap();
    let t = s.run(
        &scenario,
        json!({"terminal": true, "permission": "allow_once", "steps": prompt}),
    );
    let created = t.events("terminal_create");
    assert_eq!(created.len(), 1, "{}", s.log());
    assert_eq!(created[0]["params"]["command"], "sh");
    assert_eq!(created[0]["params"]["args"], json!(["-c", command]));
    let title = t.events("permission")[0]["params"]["toolCall"]["title"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        title.contains("in your editor's terminal, outside Rein's sandbox"),
        "{title}"
    );
    assert_eq!(
        std::fs::read_to_string(s.root().join("marker.txt")).unwrap(),
        "made-in-the-terminal\n"
    );
    let released = t.events("terminal_release");
    assert_eq!(released[0]["exit"]["exitCode"], 0);
    // The panel showed the terminal in the call, and the model got the output.
    assert!(
        t.updates("tool_call_update")
            .iter()
            .any(|u| u["content"][0]["type"] == "terminal"),
        "{:#?}",
        t.updates("tool_call_update")
    );
    let task = std::fs::read_dir(s.root().join(".rein/artifacts"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let request = std::fs::read_to_string(task.join("request-2.json")).unwrap();
    assert!(request.contains("answer-42"), "{request}");

    // Refused: nothing runs, in the terminal or anywhere.
    std::fs::remove_file(s.root().join("marker.txt")).unwrap();
    let no = s.run(
        &scenario,
        json!({"terminal": true, "permission": "reject_once", "steps": prompt}),
    );
    assert!(no.events("terminal_create").is_empty());
    assert!(!s.root().join("marker.txt").exists());
}

/// A `.rein/state.db` can come with a folder (a repository may ship one):
/// sessions another installation recorded are neither listed nor loaded —
/// their replayed prompts could say one thing and their tasks, under
/// `/resume`, do another.
#[test]
fn a_session_another_installation_recorded_is_not_listed_or_loaded() {
    let s = Session::new();
    let first = s.run(
        &support::demo_scenario(),
        json!({"permission": "allow_once", "steps": [{"prompt": text(FIX_PROMPT)}]}),
    );
    let id = first.events("session")[0]["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let mine = s.run(
        &support::demo_scenario(),
        json!({"list_sessions": {"cwd": s.root()}, "steps": []}),
    );
    assert_eq!(
        mine.events("sessions")[0]["result"]["sessions"][0]["sessionId"],
        id.as_str()
    );

    let other = s.dir.path().join("another-installation");
    let t = s.run(
        &support::demo_scenario(),
        json!({
            "env": {"XDG_STATE_HOME": other},
            "list_sessions": {"cwd": s.root()},
            "load_session": id,
            "steps": [],
        }),
    );
    assert_eq!(t.events("sessions")[0]["result"]["sessions"], json!([]));
    let error = &t.events("session")[0]["error"];
    assert!(
        error["data"]["message"]
            .as_str()
            .unwrap()
            .contains("was not started by this Rein installation"),
        "{error:#}"
    );
    assert!(t.updates("user_message_chunk").is_empty());
}

/// A key typed into a prompt is recorded and replayed redacted: the
/// session's record in `.rein/state.db` and a later `session/load` never
/// hold it.
#[test]
fn a_key_in_a_prompt_is_neither_recorded_nor_replayed() {
    let s = Session::new();
    let token = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
    let scenario = s.scenario(&json!({"replies": [{"text": "Noted."}, {"text": "Noted."}]}));
    let first = s.run(
        &scenario,
        json!({"env": {"GITHUB_TOKEN": token}, "steps": [{"prompt": text(&format!("Remember {token} for later."))}]}),
    );
    let id = first.events("session")[0]["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let db = std::fs::read(s.root().join(".rein/state.db")).unwrap();
    let wal = std::fs::read(s.root().join(".rein/state.db-wal")).unwrap_or_default();
    for bytes in [&db, &wal] {
        assert!(
            !bytes.windows(token.len()).any(|w| w == token.as_bytes()),
            "the key is in the task database"
        );
    }
    let loaded = s.run(
        &scenario,
        json!({"env": {"GITHUB_TOKEN": token}, "load_session": id, "steps": []}),
    );
    let replayed: Vec<&str> = loaded
        .updates("user_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(replayed.len(), 1, "{}", s.log());
    assert!(replayed[0].contains("<redacted>"), "{replayed:?}");
    assert!(!loaded.wire().contains(token));
}

/// Issue 32, attack 8: a client opened a session with `cwd: "/"`, and the
/// workspace became the whole file system (a command wrote `~/.bashrc`).
/// A session's folder must be a project's: `/` and the home folder are
/// refused with what to do, before anything runs or is written.
#[test]
fn a_session_in_the_root_or_the_home_folder_is_refused() {
    let s = Session::new();
    let home = s.root();
    let scenario = s.scenario(&json!({"replies": [
        {"tool_calls": [{"name": "run_command", "input": {"command": "echo pwned >> ~/.bashrc"}}]},
        {"text": "Done."}
    ]}));
    for (cwd, why) in [
        (PathBuf::from("/"), "is the whole file system"),
        (home.clone(), "is your home folder"),
    ] {
        let t = s.run(
            &scenario,
            json!({
                "cwd": cwd,
                "env": {"HOME": home},
                "permission": "allow_always",
                "steps": [{"prompt": text("Set up my shell.")}],
            }),
        );
        let error = &t.events("session")[0]["error"];
        assert_eq!(error["code"], -32602, "{error:#}\n{}", s.log());
        let message = error["data"]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("{} {why}", cwd.display())),
            "{message}"
        );
        assert!(
            message.contains("Open a project folder instead"),
            "{message}"
        );
        assert!(t.events("prompt_result").is_empty());
    }
    assert!(!home.join(".bashrc").exists());
}

/// Issue 32, attack 8: the permission for a command says where it can
/// write: the session's folder (and its own temporary folder), nothing else.
#[test]
fn a_commands_permission_says_where_it_can_write() {
    let s = Session::new();
    let scenario = s.scenario(&json!({"replies": [
        {"tool_calls": [{"name": "run_command", "input": {"command": "touch made.txt"}}]},
        {"text": "Made."}
    ]}));
    let t = s.run(
        &scenario,
        json!({"permission": "allow_once", "steps": [{"prompt": text("Make a file.")}]}),
    );
    let asked = t.events("permission");
    assert_eq!(asked.len(), 1, "{asked:#?}\n{}", s.log());
    let title = asked[0]["params"]["toolCall"]["title"].as_str().unwrap();
    assert!(
        title.starts_with(&format!(
            "Run `touch made.txt` (it can write only in {} and its own temporary folder",
            s.root().display()
        )),
        "{title}"
    );
    assert!(s.root().join("made.txt").exists());
}

/// Issue 37 D: cancelling during an approved `sleep 60` said "cancelled:
/// the task was cancelled before this call ran" (latency 0) while the
/// command had run for seconds. The call was interrupted while under way:
/// it says so, and the next prompt is told it may have run in part, never
/// that it did not run.
#[test]
fn a_command_cancelled_while_running_is_said_to_be_interrupted() {
    let s = Session::new();
    // Each prompt's task starts the scenario afresh: the follow-up only talks.
    let scenario = s.scenario(&json!({"replies": [
        {"branch": [{"when": {"last_user_text_contains": "What happened"}, "reply": {"text": "Noted."}}],
         "otherwise": {"tool_calls": [{"name": "run_command", "input": {"command": "sleep 60"}}]}},
        {"text": "It slept."}
    ]}));
    let t = s.run(
        &scenario,
        json!({
            "permission": "allow_once",
            "cancel_after_permissions": 1,
            "steps": [
                {"prompt": text("Wait a minute.")},
                {"prompt": text("What happened to the wait?")}
            ],
        }),
    );
    let results = t.events("prompt_result");
    assert_eq!(results.len(), 2, "{}", s.log());
    assert_eq!(results[0]["result"]["stopReason"], "cancelled");
    let wire = t.wire();
    assert!(!wire.contains("before this call ran"), "{wire}");
    let ended: Vec<&str> = t
        .updates("tool_call_update")
        .iter()
        .filter_map(|u| u["content"][0]["content"]["text"].as_str())
        .collect();
    assert!(
        ended
            .iter()
            .any(|e| e.starts_with("interrupted: cancelled while under way (")),
        "{ended:#?}"
    );
    // The follow-up's request tells the model the command may have run.
    let artifacts = s.root().join(".rein/artifacts");
    let requests: Vec<String> = std::fs::read_dir(&artifacts)
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.unwrap().path().join("request-1.json")).ok())
        .collect();
    let follow_up = requests
        .iter()
        .find(|r| r.contains("What happened to the wait?"))
        .unwrap();
    assert!(
        follow_up.contains(
            "interrupted while under way, so they may have run in part: running `sleep 60`"
        ),
        "{follow_up}"
    );
    assert!(!follow_up.contains("before this call ran"), "{follow_up}");
}

/// Issue 37 B: a plain question ended "**Done, verified by Rein**: done
/// (this task has no acceptance checks…)" under a plan of a fix-test task.
/// A question gets its answer, no verdict and no plan; an instruction that
/// changes files without a test to check them is "not verified", with the
/// files to review, and its plan holds no check that will never run.
#[test]
fn only_checks_rein_ran_make_a_task_verified() {
    let s = Session::new();
    let answer = "I have not changed anything: total() sums quantities, not prices.";
    let question = s.scenario(&json!({"replies": [{"text": answer}]}));
    let t = s.run(
        &question,
        json!({"steps": [{"prompt": text("What did you change?")}]}),
    );
    assert_eq!(t.stop_reason(), "end_turn", "{}", s.log());
    let said = t.said();
    assert!(said.contains(answer), "{said}");
    assert!(!said.contains("verified"), "{said}");
    assert!(!said.contains("acceptance checks"), "{said}");
    assert!(t.updates("plan").is_empty(), "{:#?}", t.updates("plan"));

    let instruction = s.scenario(&json!({"replies": [
        {"tool_calls": [{"name": "create_file", "input": {"path": "NOTES.md", "content": "total() sums quantities.\n"}}]},
        {"text": "I wrote NOTES.md."}
    ]}));
    let t = s.run(
        &instruction,
        json!({"permission": "allow_once", "steps": [{"prompt": text("Write what total() does into NOTES.md.")}]}),
    );
    let said = t.said();
    assert!(
        said.contains("**Done, not verified**: no test checks this request, so the changes are the model's word; review them: NOTES.md"),
        "{said}\n{}",
        s.log()
    );
    assert!(!said.contains("verified by Rein"), "{said}");
    for plan in t.updates("plan") {
        let entries = plan["entries"].to_string();
        assert!(!entries.contains("Rein runs the checks"), "{entries}");
        assert!(!entries.contains("Find the cause"), "{entries}");
    }
}

/// `server-everything` (npm, pinned by `tests/mcp-servers/install.sh`) as
/// the client passes it in `session/new`.
fn everything_server() -> Value {
    let script = support::tests_dir().join("mcp-servers/install.sh");
    let out = Command::new("bash")
        .arg(&script)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} failed (this test needs node and npm, and the npm registry once):\n{}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).lines().last().unwrap());
    let entry = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    json!({"name": "everything", "command": "node", "args": [entry, "stdio"], "env": []})
}

/// Issue 37 C: an MCP call was approved blind — "Run
/// `mcp__everything__get-sum`" without `{a: 17, b: 25}` — and its tool call
/// showed as "Other" while the permission said "execute". The permission
/// shows the arguments (in the title: a panel may show nothing else) and
/// the tool's kind, and says why it asks without "tools with effects" for
/// a tool that says it only reads; the tool call has the same kind.
#[test]
fn an_mcp_calls_permission_shows_its_arguments_and_kind() {
    let s = Session::new();
    let scenario = s.scenario(&json!({"replies": [
        {"tool_calls": [{"name": "mcp__everything__get-sum", "input": {"a": 17, "b": 25}}]},
        {"text": "The sum is there."}
    ]}));
    let t = s.run(
        &scenario,
        json!({
            "mcp_servers": [everything_server()],
            "permission": "allow_once",
            "steps": [{"prompt": text("Add 17 and 25 with the server.")}],
        }),
    );
    let asked = t.events("permission");
    assert_eq!(asked.len(), 1, "{asked:#?}\n{}", s.log());
    let call = &asked[0]["params"]["toolCall"];
    assert_eq!(
        call["title"],
        "Call `mcp__everything__get-sum` with {\"a\":17,\"b\":25}"
    );
    assert_eq!(call["kind"], "read");
    assert_eq!(call["rawInput"], json!({"a": 17, "b": 25}));
    let shown = call["content"][0]["content"]["text"].as_str().unwrap();
    assert!(shown.contains("\"a\": 17"), "{shown}");
    assert!(
        shown.contains("Asked because: default: MCP tools ask, even one that says it only reads"),
        "{shown}"
    );
    assert!(!t.wire().contains("tools with effects ask"));
    let calls = t.updates("tool_call");
    let sum = calls
        .iter()
        .find(|c| c["rawInput"] == json!({"a": 17, "b": 25}))
        .unwrap();
    assert_eq!(sum["kind"], "read", "{sum:#}");
    assert_eq!(t.stop_reason(), "end_turn");
}

/// Issue 37 (smaller points): an MCP server's progress reports were log
/// lines on stderr. They are the call's progress: the panel sees them in
/// the tool call, while it runs.
#[test]
fn an_mcp_servers_progress_shows_in_its_tool_call() {
    let s = Session::new();
    let scenario = s.scenario(&json!({"replies": [
        {"tool_calls": [{"name": "mcp__everything__trigger-long-running-operation", "input": {"duration": 0.6, "steps": 3}}]},
        {"text": "It finished."}
    ]}));
    let t = s.run(
        &scenario,
        json!({
            "mcp_servers": [everything_server()],
            "permission": "allow_once",
            "steps": [{"prompt": text("Run the long operation.")}],
        }),
    );
    assert_eq!(t.stop_reason(), "end_turn", "{}", s.log());
    let shown: Vec<&str> = t
        .updates("tool_call_update")
        .iter()
        .filter(|u| u.get("status").is_none())
        .filter_map(|u| u["content"][0]["content"]["text"].as_str())
        .collect();
    assert!(
        shown.iter().any(|text| text
            .starts_with("Trigger Long Running Operation Tool (everything): ")
            && text.ends_with("/3")),
        "{shown:#?}\n{}",
        s.log()
    );
    assert!(!s.log().contains("notifications/progress"), "{}", s.log());
}

/// Issue 37 (smaller points): one four-turn task sent 24
/// `fs/read_text_file` for two files. What the client served is kept
/// while no time has passed: the first turn's context asks for each file
/// once, an edit asks for the text once before its question and once after
/// (what it is written over is always asked for fresh: the typing tests
/// above still see every keystroke).
#[test]
fn the_client_is_not_asked_again_for_a_text_it_just_served() {
    let s = Session::new();
    let cart = s.root().join("cart.py");
    let t = s.run(
        &support::demo_scenario(),
        json!({
            "fs": true,
            "save_on_write": true,
            "buffers": {cart.display().to_string(): s.cart()},
            "permission": "allow_once",
            "steps": [{"prompt": text(FIX_PROMPT)}],
        }),
    );
    assert!(t.said().contains("Done, verified by Rein"), "{}", t.said());
    // Reads, in order, with the tool calls that began between them.
    let mut steps: Vec<(String, Vec<String>)> = vec![("first turn".into(), Vec::new())];
    for line in &t.lines {
        if line["dir"] == "from_agent"
            && line["msg"]["params"]["update"]["sessionUpdate"] == "tool_call"
        {
            let title = line["msg"]["params"]["update"]["title"].as_str().unwrap();
            steps.push((title.to_owned(), Vec::new()));
        }
        if line["event"] == "fs_read" {
            let path = line["path"].as_str().unwrap().to_owned();
            steps.last_mut().unwrap().1.push(path);
        }
        if line["event"] == "fs_write" {
            steps.push(("after the write".into(), Vec::new()));
        }
    }
    let first = &steps[0].1;
    let mut once = first.clone();
    once.sort();
    once.dedup();
    assert_eq!(first.len(), once.len(), "{steps:#?}");
    let edit = steps
        .iter()
        .find(|(title, _)| title == "editing cart.py")
        .unwrap();
    assert_eq!(edit.1.len(), 2, "{steps:#?}");
}

/// `/undo` takes back the session's last task's changes and keeps a line
/// the user typed since; it is offered once a task changed files; a second
/// `/undo` says it is already undone.
#[test]
fn undo_keeps_a_line_typed_after_the_task() {
    let s = Session::new();
    let first = s.run(
        &support::demo_scenario(),
        json!({"permission": "allow_once", "steps": [{"prompt": text(FIX_PROMPT)}]}),
    );
    assert_eq!(first.stop_reason(), "end_turn", "{}", s.log());
    assert!(s.cart().contains(FIXED), "{}", s.cart());
    let offered = first.updates("available_commands_update");
    assert_eq!(
        offered.last().unwrap()["availableCommands"][0]["name"],
        "undo",
        "{offered:#?}"
    );
    let id = first.events("session")[0]["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let typed = "\n# typed by the user after the task\n";
    std::fs::write(s.root().join("cart.py"), format!("{}{typed}", s.cart())).unwrap();

    let second = s.run(
        &support::demo_scenario(),
        json!({"load_session": id, "steps": [{"prompt": text("/undo"), }, {"prompt": text("/undo")}]}),
    );
    let said = second.said();
    assert!(
        said.contains("**Undid Rein's changes to 1 file.**\n- cart.py: restored as before the task (your later changes kept)"),
        "{said}\n{}",
        s.log()
    );
    assert!(
        said.contains("**Already undone: every file is as it was before the task.**"),
        "{said}"
    );
    let cart = s.cart();
    assert!(cart.contains(UNFIXED), "{cart}");
    assert!(cart.ends_with(typed), "{cart}");
    assert!(
        second.events("permission").is_empty(),
        "the user asked: nothing more to ask"
    );
}

/// "Fix the error at FILE:LINE" in a panel: the diagnostic is found in the
/// project's checker's report (real mypy, in the sandbox), the edit asked
/// for, and "verified" only because mypy no longer reports it.
#[test]
fn a_fix_error_prompt_is_verified_by_the_checker() {
    let s = Session::on_the_mypy_fixture();
    let scenario = s.scenario(&json!({"replies": [
        {"text": "greet takes a str.", "tool_calls": [{"name": "edit_file", "input": {
            "path": "app.py", "old_text": "    print(greet(3))", "new_text": "    print(greet(str(3)))"}}]},
        {"text": "Fixed: greet gets a str now."}
    ]}));
    let path = support::checkers::path_var().to_string_lossy().into_owned();
    let t = s.run(
        &scenario,
        json!({"permission": "allow_once", "env": {"PATH": path},
               "steps": [{"prompt": text("Fix the error at app.py:7")}]}),
    );
    assert_eq!(t.stop_reason(), "end_turn", "{}", s.log());
    let app = std::fs::read_to_string(s.root().join("app.py")).unwrap();
    assert!(app.contains("greet(str(3))"), "{app}");
    let said = t.said();
    assert!(
        said.contains("Asking the project's checker about app.py:7"),
        "{said}"
    );
    assert!(
        said.contains("**Done, verified by Rein**: fixed: `mypy"),
        "{said}"
    );
    assert!(
        said.contains("no longer reports [arg-type] at app.py:7"),
        "{said}"
    );
}

/// A place where the checker reports nothing starts no task: the panel is
/// told what the checker does report there.
#[test]
fn a_fix_error_prompt_at_a_clean_line_says_what_the_checker_reports() {
    let s = Session::on_the_mypy_fixture();
    let scenario = s.scenario(&json!({"replies": [{"text": "Fixed."}]}));
    let path = support::checkers::path_var().to_string_lossy().into_owned();
    let t = s.run(
        &scenario,
        json!({"permission": "allow_once", "env": {"PATH": path},
               "steps": [{"prompt": text("Fix the error at app.py:2")}]}),
    );
    assert_eq!(t.stop_reason(), "end_turn", "{}", s.log());
    let said = t.said();
    assert!(
        said.contains(
            "the checker reports no error or warning at app.py:2; in this file it reports:"
        ),
        "{said}"
    );
    assert!(t.events("permission").is_empty());
}
