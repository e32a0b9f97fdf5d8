//! MCP servers end to end: the real `rein run` (and `rein doctor`) on a
//! copy of the demo project, driven by the scripted model
//! (`REIN_PROVIDER=scripted` with a scenario written by each test), with
//! real MCP servers: the npm reference servers `server-everything` and
//! `server-filesystem` (installed once into the suite's cache by
//! `tests/mcp-servers/install.sh`, pinned), and the misbehaving
//! `server/mcp/tests/fixtures/fault_server.py` (python3, no dependencies).
//! Each server starts the way Rein starts every one: through
//! `rein sandbox-exec`.
//!
//! What the model got is read from two places: the scenario branches on the
//! last tool result it was sent (`last_tool_result_contains`), so the
//! model's next words say what it saw; and the exact requests Rein keeps
//! (`.rein/artifacts/<task>/request-<turn>.json`). Never a real model,
//! never the network (but npm's registry, once, in the install script); no
//! timing assertions.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use rein_testkit::rein_binary;
use serde_json::{Value, json};

mod support;

use support::{FIXED, UNFIXED};

// --- the servers ----------------------------------------------------------------

/// The last line `tests/mcp-servers/install.sh [mode]` prints (it returns
/// at once when the install is already in the cache; installs take its
/// lock); `needs` says what a failure means.
fn install(mode: Option<&str>, needs: &str) -> PathBuf {
    let script = support::tests_dir().join("mcp-servers/install.sh");
    let out = Command::new("bash")
        .arg(&script)
        .args(mode)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{} {} failed (these tests need {needs}):\n{stderr}",
        script.display(),
        mode.unwrap_or_default()
    );
    PathBuf::from(stdout.lines().last().unwrap_or_default())
}

/// The folder holding `node_modules/` with the pinned npm servers, installed
/// once per test process.
fn npm_servers() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = install(None, "node and npm, and the npm registry once");
        assert!(
            dir.is_absolute() && dir.join("node_modules").is_dir(),
            "install.sh printed no folder with node_modules/: {}",
            dir.display()
        );
        dir
    })
}

/// The entry point of the npm package `@modelcontextprotocol/<package>`.
fn npm_entry(package: &str) -> String {
    let path = npm_servers().join(format!(
        "node_modules/@modelcontextprotocol/{package}/dist/index.js"
    ));
    assert!(path.is_file(), "{} is missing", path.display());
    path.display().to_string()
}

/// The fault server of `rein-mcp`'s own tests.
fn fault_server() -> String {
    support::tests_dir()
        .join("../server/mcp/tests/fixtures/fault_server.py")
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

/// A TOML string (JSON's escapes are TOML's).
fn toml_str(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// `[mcp_servers.<name>]` for a stdio server, with `more` lines.
fn server_toml(name: &str, command: &str, args: &[String], more: &str) -> String {
    let args: Vec<String> = args.iter().map(|a| toml_str(a)).collect();
    format!(
        "\n[mcp_servers.{name}]\ncommand = {}\nargs = [{}]\n{more}\n",
        toml_str(command),
        args.join(", ")
    )
}

/// `server-everything` over stdio, as `everything`.
fn everything() -> String {
    server_toml(
        "everything",
        "node",
        &[npm_entry("server-everything"), "stdio".into()],
        "",
    )
}

/// `server-filesystem` allowed into `dir`, as `filesystem`.
fn filesystem(dir: &Path) -> String {
    server_toml(
        "filesystem",
        "node",
        &[npm_entry("server-filesystem"), dir.display().to_string()],
        "",
    )
}

/// `server-memory` (a knowledge graph in a file, beside its code unless
/// told otherwise) as `memory`, with `more` lines, installed under `dir`:
/// a copy of the pinned packages (hard links where the file system allows)
/// outside every folder the sandbox lets commands write, as a global npm
/// install or `npx`'s cache would be. The suite's own cache is under
/// `~/.cache`, which commands may write.
fn memory(dir: &Path, more: &str) -> String {
    let copy = dir.join("node_modules");
    if !copy.exists() {
        std::fs::create_dir_all(dir).unwrap();
        let from = npm_servers().join("node_modules");
        let linked = Command::new("cp").arg("-al").arg(&from).arg(&copy).status();
        if !linked.is_ok_and(|s| s.success()) {
            let _ = std::fs::remove_dir_all(&copy);
            let copied = Command::new("cp").arg("-a").arg(&from).arg(&copy).status();
            assert!(copied.unwrap().success(), "cannot copy {}", from.display());
        }
    }
    let entry = copy.join("@modelcontextprotocol/server-memory/dist/index.js");
    server_toml("memory", "node", &[entry.display().to_string()], more)
}

/// The fault server as `name`, started with `args`, with `more` lines.
fn fault(name: &str, args: &[&str], more: &str) -> String {
    let mut all = vec![fault_server()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    server_toml(name, "python3", &all, more)
}

// --- the project ----------------------------------------------------------------

/// A fresh copy of the demo project (`project/`), an empty user config
/// (`config/`) and state (`state/`) directory, so nothing of the machine's
/// set-up (nor a stored trust decision) leaks in.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Self {
        Self {
            dir: support::demo_scratch(),
        }
    }

    /// The project, absolute and canonical (what servers are given).
    fn root(&self) -> PathBuf {
        self.dir.path().join("project").canonicalize().unwrap()
    }

    fn cart(&self) -> String {
        std::fs::read_to_string(self.root().join("cart.py")).unwrap()
    }

    /// Writes the user's own `config.toml` (trusted, unlike the project's).
    fn user_config(&self, toml: &str) {
        let dir = self.dir.path().join("config/rein");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), toml).unwrap();
    }

    /// Writes `scenario` (the scripted model's replies) next to the project.
    fn scenario(&self, scenario: &Value) -> PathBuf {
        let path = self.dir.path().join("scenario.json");
        std::fs::write(&path, serde_json::to_string_pretty(scenario).unwrap()).unwrap();
        path
    }

    /// `rein run --workspace <project> <args>` with the scripted model
    /// playing `scenario`, `stdin` piped in, nothing of the environment's
    /// model settings inherited, and `env` added.
    fn run(&self, scenario: &Path, args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Output {
        let mut command = self.rein(scenario);
        command.arg("run").arg("--workspace").arg(self.root());
        command.args(args);
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().unwrap();
        {
            let mut input = child.stdin.take().unwrap();
            input.write_all(stdin.as_bytes()).unwrap();
            // Dropped here: the end of the input.
        }
        let output = child.wait_with_output().unwrap();
        Output {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// `rein doctor --workspace <project>`.
    fn doctor(&self) -> Output {
        let mut command = self.rein(&support::demo_scenario());
        command.arg("doctor").arg("--workspace").arg(self.root());
        let output = command.output().unwrap();
        Output {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    fn rein(&self, scenario: &Path) -> Command {
        let mut command = Command::new(rein_binary().unwrap());
        command
            .current_dir(self.dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for name in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "ANTHROPIC_BASE_URL",
            "OPENAI_BASE_URL",
            "REIN_MODEL",
            "REIN_MAX_TURNS",
            "REIN_MAX_COST_USD",
            "REIN_SCRIPTED_API_KEY",
            "REIN_SCRIPTED_BASE_URL",
            "REIN_LOG",
        ] {
            command.env_remove(name);
        }
        command
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("XDG_STATE_HOME", self.dir.path().join("state"))
            .env("NO_COLOR", "1")
            .env("REIN_PROVIDER", "scripted")
            .env("REIN_SCENARIO", scenario);
        command
    }

    /// The one task's trace, record by record.
    fn trace(&self) -> Vec<Value> {
        let traces = files_under(&self.root().join(".rein/traces"));
        assert_eq!(traces.len(), 1, "{traces:?}");
        std::fs::read_to_string(&traces[0])
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// The one task's folder of artifacts.
    fn artifacts(&self) -> PathBuf {
        let dirs: Vec<PathBuf> = std::fs::read_dir(self.root().join(".rein/artifacts"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(dirs.len(), 1, "{dirs:?}");
        dirs.into_iter().next().unwrap()
    }

    /// Every tool result the model was sent, in call order, as the kept
    /// requests (`request-<turn>.json`) show them: each as the first
    /// request that carried it had it.
    fn results_the_model_got(&self) -> Vec<Sent> {
        let dir = self.artifacts();
        let mut requests: Vec<(u32, PathBuf)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter_map(|p| {
                let name = p.file_name()?.to_str()?.to_owned();
                let turn = name.strip_prefix("request-")?.strip_suffix(".json")?;
                Some((turn.parse().ok()?, p))
            })
            .collect();
        requests.sort();
        assert!(!requests.is_empty(), "no request kept in {}", dir.display());
        let mut tools = BTreeMap::new();
        let mut sent: Vec<Sent> = Vec::new();
        for (_, path) in requests {
            let request: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            for message in request["messages"].as_array().unwrap() {
                for part in message["parts"].as_array().into_iter().flatten() {
                    match part["type"].as_str() {
                        Some("tool_call") => {
                            tools.insert(
                                part["id"].as_str().unwrap().to_owned(),
                                part["name"].as_str().unwrap().to_owned(),
                            );
                        }
                        Some("tool_result") => {
                            let call_id = part["call_id"].as_str().unwrap().to_owned();
                            if sent.iter().any(|s| s.call_id == call_id) {
                                continue;
                            }
                            sent.push(Sent {
                                tool: tools.get(&call_id).cloned().unwrap_or_default(),
                                call_id,
                                content: part["content"].as_str().unwrap_or_default().to_owned(),
                                is_error: part["is_error"].as_bool().unwrap(),
                            });
                        }
                        _ => {}
                    }
                }
            }
        }
        sent
    }

    /// The one result the model got from `tool`.
    fn result_of(&self, tool: &str) -> Sent {
        let all = self.results_the_model_got();
        let mut of: Vec<Sent> = all.iter().filter(|s| s.tool == tool).cloned().collect();
        assert_eq!(of.len(), 1, "results of {tool}: {all:#?}");
        of.remove(0)
    }
}

/// A tool result as the model got it.
#[derive(Clone, Debug)]
struct Sent {
    call_id: String,
    tool: String,
    content: String,
    is_error: bool,
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            out.extend(files_under(&entry.path()));
        } else {
            out.push(entry.path());
        }
    }
    out
}

/// The trace's records of `kind` for `tool`.
fn records<'a>(trace: &'a [Value], kind: &str, tool: &str) -> Vec<&'a Value> {
    trace
        .iter()
        .filter(|r| r["kind"] == kind && r["tool"] == tool)
        .collect()
}

#[derive(Debug)]
struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Output {
    fn assert_code(&self, code: i32) {
        assert_eq!(
            self.code, code,
            "exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
    }

    fn assert_stdout(&self, needle: &str) {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}:\n{}\n--- stderr\n{}",
            self.stdout,
            self.stderr
        );
    }

    fn assert_stderr(&self, needle: &str) {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}:\n{}",
            self.stderr
        );
    }

    fn refute_stderr(&self, needle: &str) {
        assert!(
            !self.stderr.contains(needle),
            "stderr has {needle:?}:\n{}",
            self.stderr
        );
    }
}

/// A reply that says `seen` when the last tool result contains `needle`,
/// else `missed`; either way with the same `tool_calls`, so a miss fails
/// the test's assertion on the words rather than derailing the task.
fn saw(needle: &str, seen: &str, missed: &str, tool_calls: Value) -> Value {
    json!({
        "branch": [{"when": {"last_tool_result_contains": needle},
                    "reply": {"text": seen, "tool_calls": tool_calls}}],
        "otherwise": {"text": missed, "tool_calls": tool_calls}
    })
}

/// A model reply with no tool call.
fn words(text: &str) -> Value {
    json!({"text": text})
}

fn call(name: &str, input: Value) -> Value {
    json!([{"name": name, "input": input}])
}

// --- the tests ------------------------------------------------------------------

/// A whole fix-test task that uses both npm servers on the way: the sum
/// from `everything`, cart.py through `filesystem`, an image from
/// `everything` (saved as a file), then the fix with the built-in
/// `edit_file`. The allow rules let the MCP calls through without a
/// question; only the edit is asked (and answered `y`).
#[test]
fn a_scripted_model_uses_mcp_tools_through_a_full_fix_test_task() {
    let project = Project::new();
    let root = project.root();
    project.user_config(&format!(
        "[permissions]\nallow = [\"mcp__everything__*\", \"mcp__filesystem__*\"]\n{}{}",
        everything(),
        filesystem(&root)
    ));
    let cart_path = root.join("cart.py").display().to_string();
    let scenario = project.scenario(&json!({"replies": [
        {"text": "First, 2 + 3 by the MCP server.",
         "tool_calls": call("mcp__everything__get-sum", json!({"a": 2, "b": 3}))},
        saw("The sum of 2 and 3 is 5.", "The server says 5. Now cart.py, through MCP.",
            "I did not get the sum.",
            call("mcp__filesystem__read_text_file", json!({"path": cart_path}))),
        saw(UNFIXED.lines().next().unwrap(), "cart.py sums the quantities. An image, too.",
            "I did not get cart.py.",
            call("mcp__everything__get-tiny-image", json!({}))),
        saw("[image (image/png), ", "I got the image as a file. Now the fix.",
            "I did not get the image.",
            call("edit_file", json!({"path": "cart.py", "old_text": UNFIXED, "new_text": FIXED}))),
        words("Fixed: total() sums price times quantity."),
    ]}));
    let result_json = project.dir.path().join("result.json");
    let out = project.run(
        &scenario,
        &[
            "--fix-test",
            "tests/test_cart.py::TestCart.test_total",
            "--result-json",
            result_json.to_str().unwrap(),
        ],
        "y\n",
        &[],
    );

    out.assert_code(0);
    out.assert_stdout("state:  succeeded\n");
    out.assert_stdout("reason: fixed: `TestCart.test_total` passes");
    assert!(project.cart().contains(FIXED), "{}", project.cart());
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&result_json).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", result_json.display()));
    assert_eq!(result["state"], "succeeded", "{result}");
    assert_eq!(result["changed_files"], json!(["cart.py"]), "{result}");
    assert_eq!(
        result["evidence"][0]["check"], "test_passes tests/test_cart.py::TestCart.test_total",
        "{result}"
    );

    // The model saw each server's answer (its next words say so) …
    out.assert_stderr("  → mcp__everything__get-sum {\"a\":2,\"b\":3}\n");
    out.assert_stderr("  ← ok (");
    out.assert_stderr("  │ The server says 5. Now cart.py, through MCP.\n");
    out.assert_stderr("  │ cart.py sums the quantities. An image, too.\n");
    out.assert_stderr("  │ I got the image as a file. Now the fix.\n");
    // … the allow rules let the MCP calls through unasked; the edit was asked.
    out.refute_stderr("rein wants to call `mcp__");
    out.assert_stderr("Apply this edit to cart.py? [y/N] y\n");

    // What the model got, exactly.
    let sum = project.result_of("mcp__everything__get-sum");
    assert!(!sum.is_error, "{sum:?}");
    assert_eq!(sum.content, "The sum of 2 and 3 is 5.");
    let read = project.result_of("mcp__filesystem__read_text_file");
    assert!(!read.is_error, "{read:?}");
    assert!(
        read.content
            .starts_with("\"\"\"A tiny shopping cart.\"\"\"\n")
            && read.content.contains(UNFIXED),
        "{read:?}"
    );
    let image = project.result_of("mcp__everything__get-tiny-image");
    assert!(!image.is_error, "{image:?}");
    let task = result["task"].as_str().unwrap();
    let saved = format!(".rein/artifacts/{task}/mcp-{}-2.png", image.call_id);
    assert!(
        image.content.contains("[image (image/png), ")
            && image.content.contains(&format!("saved to {saved}]")),
        "{image:?}"
    );
    // The image is a file, and a PNG; its base64 never reached the model.
    let png = std::fs::read(root.join(&saved)).unwrap();
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{saved} is not a PNG"
    );
    assert!(
        image.content.contains(&format!("{} bytes", png.len())),
        "{image:?}"
    );
    assert!(!image.content.contains("iVBORw0KGgo"), "{image:?}");

    // The trace has each MCP call, its permission (by the allow rule) and
    // its result.
    let trace = project.trace();
    for (tool, rule, arguments) in [
        (
            "mcp__everything__get-sum",
            "allow: mcp__everything__*",
            json!({"a": 2, "b": 3}),
        ),
        (
            "mcp__filesystem__read_text_file",
            "allow: mcp__filesystem__*",
            json!({"path": cart_path}),
        ),
        (
            "mcp__everything__get-tiny-image",
            "allow: mcp__everything__*",
            json!({}),
        ),
    ] {
        let calls = records(&trace, "tool_call", tool);
        assert_eq!(calls.len(), 1, "{tool}: {calls:?}");
        assert_eq!(calls[0]["arguments"], arguments, "{tool}");
        let permissions = records(&trace, "permission", tool);
        assert_eq!(permissions.len(), 1, "{tool}: {permissions:?}");
        assert_eq!(permissions[0]["decision"], "allow", "{tool}");
        assert_eq!(permissions[0]["rule"], rule, "{tool}");
        let results = records(&trace, "tool_result", tool);
        assert_eq!(results.len(), 1, "{tool}: {results:?}");
        assert_eq!(results[0]["is_error"], false, "{tool}: {:?}", results[0]);
    }
    let sum = records(&trace, "tool_result", "mcp__everything__get-sum")[0];
    assert_eq!(sum["result"], "The sum of 2 and 3 is 5.");
    // Its size and latency, for `rein trace` and the HTML report.
    assert_eq!(
        sum["output_bytes"],
        "The sum of 2 and 3 is 5.".len(),
        "{sum}"
    );
    assert!(sum["latency_ms"].is_u64(), "{sum}");
}

/// With no rule about MCP tools, each call is put to the user, whatever
/// the server says of the tool (the fault server's `ok` declares itself
/// read-only, as every tool of server-everything does): `n` means the
/// server is never called, and the model is told so; `y` runs it.
#[test]
fn an_mcp_call_asks_by_default_and_a_no_is_a_no() {
    let ask = |answer: &str| {
        let project = Project::new();
        // The fault server appends the name of every tool it runs here.
        let calls = project.root().join("calls.log");
        project.user_config(&fault(
            "fault",
            &[],
            &format!(
                "env = {{ FAULT_CALLS = {} }}",
                toml_str(&calls.display().to_string())
            ),
        ));
        let scenario = project.scenario(&json!({"replies": [
            {"text": "Asking the server.", "tool_calls": call("mcp__fault__ok", json!({"text": "hello"}))},
            {"branch": [
                {"when": {"last_tool_result_contains": "The user did not allow running `mcp__fault__ok`"},
                 "reply": {"text": "You said no, so I did not call it."}},
                {"when": {"last_tool_result_contains": "ok {\"text\": \"hello\"}"},
                 "reply": {"text": "The server answered."}}
            ], "otherwise": {"text": "Something else happened."}}
        ]}));
        let out = project.run(&scenario, &["greet the server"], answer, &[]);
        (project, calls, out)
    };

    let (project, calls, out) = ask("n\n");
    out.assert_code(0);
    out.assert_stdout("state:  succeeded\n");
    // What runs is the call with its arguments, and the tool says it only
    // reads: not "tools with effects ask" (issue 37 C).
    out.assert_stderr(
        "  rein wants to call `mcp__fault__ok` (default: MCP tools ask, even one that says it only reads (its server's word, which Rein cannot check))\n  with {\"text\":\"hello\"}\n",
    );
    out.assert_stderr("Call `mcp__fault__ok`? [y]es once / [a]ll this task / [N]o n\n");
    out.assert_stderr("  ✗ not allowed\n");
    out.assert_stderr("  │ You said no, so I did not call it.\n");
    assert!(
        !calls.exists(),
        "the server ran the call: {:?}",
        std::fs::read_to_string(&calls)
    );
    let got = project.result_of("mcp__fault__ok");
    assert!(got.is_error, "{got:?}");
    assert!(
        got.content
            .starts_with("The user did not allow running `mcp__fault__ok`."),
        "{got:?}"
    );
    let trace = project.trace();
    let permission = records(&trace, "permission", "mcp__fault__ok");
    assert_eq!(permission.len(), 1, "{permission:?}");
    assert_eq!(permission[0]["decision"], "ask");
    assert_eq!(permission[0]["rule"], "default: tools with effects ask");

    // The same call, answered `y`: the server runs it once.
    let (project, calls, out) = ask("y\n");
    out.assert_code(0);
    out.assert_stderr("Call `mcp__fault__ok`? [y]es once / [a]ll this task / [N]o y\n");
    out.assert_stderr("  ✓ allowed once\n");
    out.assert_stderr("  │ The server answered.\n");
    assert_eq!(std::fs::read_to_string(&calls).unwrap(), "ok\n");
    assert_eq!(
        project.result_of("mcp__fault__ok").content,
        "ok {\"text\": \"hello\"}"
    );
}

/// A deny rule refuses its tool even with `--yes`, and beats an allow rule
/// for the whole server, whose other tools still work.
#[test]
fn a_deny_rule_refuses_an_mcp_tool_even_with_yes() {
    let project = Project::new();
    project.user_config(&format!(
        "[permissions]\nallow = [\"mcp__everything__*\"]\ndeny = [\"mcp__everything__get-sum\"]\n{}",
        everything()
    ));
    let scenario = project.scenario(&json!({"replies": [
        {"text": "Adding.", "tool_calls": call("mcp__everything__get-sum", json!({"a": 2, "b": 3}))},
        saw("Denied by rule deny: mcp__everything__get-sum", "Denied. An echo instead.",
            "The sum was not denied.",
            call("mcp__everything__echo", json!({"message": "still here"}))),
        words("Done."),
    ]}));
    let out = project.run(&scenario, &["--yes", "add 2 and 3"], "", &[]);
    out.assert_code(0);
    out.assert_stderr("  ✗ denied: mcp__everything__get-sum (deny: mcp__everything__get-sum)\n");
    out.assert_stderr("  │ Denied. An echo instead.\n");
    out.refute_stderr("rein wants to call `mcp__");
    let sum = project.result_of("mcp__everything__get-sum");
    assert!(sum.is_error, "{sum:?}");
    assert!(!sum.content.contains("is 5"), "{sum:?}");
    let echo = project.result_of("mcp__everything__echo");
    assert!(!echo.is_error, "{echo:?}");
    assert_eq!(echo.content, "Echo: still here");
    let trace = project.trace();
    assert_eq!(
        records(&trace, "permission", "mcp__everything__get-sum")[0]["decision"],
        "deny"
    );
    assert_eq!(
        records(&trace, "tool_result", "mcp__everything__get-sum")[0]["is_error"],
        true
    );
}

/// A project's `.mcp.json` names a server that leaves a marker file when
/// it starts (then serves as the fault server). Untrusted, it never
/// starts, its tools do not exist, and the run says what was ignored and
/// why; with `--trust-workspace` it starts (for that run only).
#[test]
fn an_untrusted_workspace_lists_its_mcp_servers_and_starts_none() {
    let project = Project::new();
    let root = project.root();
    // Inside the project: the sandbox lets the server read it and write there.
    std::fs::create_dir_all(root.join("tools")).unwrap();
    std::fs::copy(fault_server(), root.join("tools/fault_server.py")).unwrap();
    let marker = root.join("started.marker");
    let script = format!(
        "touch {} && exec python3 tools/fault_server.py",
        marker.display()
    );
    std::fs::write(
        root.join(".mcp.json"),
        serde_json::to_string_pretty(
            &json!({"mcpServers": {"proj": {"command": "sh", "args": ["-c", script]}}}),
        )
        .unwrap(),
    )
    .unwrap();
    let scenario = project.scenario(&json!({"replies": [
        {"text": "Asking the project's server.", "tool_calls": call("mcp__proj__ok", json!({"text": "hi"}))},
        {"branch": [
            {"when": {"last_tool_result_contains": "There is no tool named \"mcp__proj__ok\""},
             "reply": {"text": "The project's server is not there."}},
            {"when": {"last_tool_result_contains": "ok {\"text\": \"hi\"}"},
             "reply": {"text": "The project's server answered."}}
        ], "otherwise": {"text": "Something else happened."}}
    ]}));

    let untrusted = || {
        let out = project.run(&scenario, &["--yes", "say hi"], "", &[]);
        out.assert_code(0);
        out.assert_stderr("rein: not trusted, so ignored from .mcp.json:\n");
        out.assert_stderr(&format!(
            "  • start the MCP server `proj`, which runs `sh -c {script}` on your machine (mcp_servers.proj)\n"
        ));
        out.assert_stderr("(trust this folder's settings with `rein trust`, or for one run with --trust-workspace)");
        out.assert_stderr("  │ The project's server is not there.\n");
        assert!(
            !marker.exists(),
            "the untrusted server started:\n{}",
            out.stderr
        );
    };
    untrusted();

    let out = project.run(
        &scenario,
        &["--yes", "--trust-workspace", "say hi"],
        "",
        &[],
    );
    out.assert_code(0);
    out.refute_stderr("not trusted");
    out.assert_stderr("  │ The project's server answered.\n");
    assert!(
        marker.exists(),
        "the trusted server did not start:\n{}",
        out.stderr
    );

    // The flag was for that run: the next one starts nothing again.
    std::fs::remove_file(&marker).unwrap();
    untrusted();
}

/// Rein's keys (and any secret-looking variable) are not in a server's
/// environment: `get-env` of server-everything shows the model the
/// server's whole environment, and none of them is in it (neither value
/// nor name), nor anywhere under `.rein/`, nor in the output; a plain
/// variable is passed through.
#[test]
fn an_mcp_server_never_sees_the_api_key() {
    let project = Project::new();
    project.user_config(&format!(
        "[permissions]\nallow = [\"mcp__everything__*\"]\n{}",
        everything()
    ));
    let nonce = {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        format!("{:016x}", nanos ^ (u128::from(std::process::id()) << 64))
    };
    let anthropic = format!("sk-ant-e2e{nonce}");
    let scripted = format!("scripted-e2e{nonce}");
    let token = format!("tok-e2e{nonce}");
    let visible = format!("visible-e2e{nonce}");
    let secrets = [
        ("ANTHROPIC_API_KEY", anthropic.as_str()),
        ("REIN_SCRIPTED_API_KEY", scripted.as_str()),
        ("MY_SERVICE_TOKEN", token.as_str()),
    ];
    let mut branch: Vec<Value> = Vec::new();
    for (name, value) in secrets {
        branch.push(json!({"when": {"last_tool_result_contains": value}, "reply": {"text": format!("LEAKED the value of {name}")}}));
        branch.push(json!({"when": {"last_tool_result_contains": format!("\"{name}\"")}, "reply": {"text": format!("LEAKED the variable {name}")}}));
    }
    branch.push(json!({"when": {"last_tool_result_contains": visible}, "reply": {"text": "The environment holds no secret."}}));
    let scenario = project.scenario(&json!({"replies": [
        {"text": "What does the server see?", "tool_calls": call("mcp__everything__get-env", json!({}))},
        {"branch": branch, "otherwise": {"text": "I did not get the environment."}}
    ]}));
    let mut env = secrets.to_vec();
    env.push(("REIN_E2E_VISIBLE", visible.as_str()));
    let out = project.run(&scenario, &["--yes", "show the environment"], "", &env);

    out.assert_code(0);
    out.assert_stderr("  │ The environment holds no secret.\n");
    let got = project.result_of("mcp__everything__get-env");
    assert!(!got.is_error, "{got:?}");
    assert!(
        got.content
            .contains(&format!("\"REIN_E2E_VISIBLE\": \"{visible}\"")),
        "{got:?}"
    );
    for (name, value) in secrets {
        assert!(
            !got.content.contains(value),
            "{name}'s value reached the model"
        );
        assert!(
            !got.content.contains(&format!("\"{name}\"")),
            "{name} is in the server's environment"
        );
        assert!(!out.stdout.contains(value), "{name}'s value is in stdout");
        assert!(!out.stderr.contains(value), "{name}'s value is in stderr");
    }
    let files = files_under(&project.root().join(".rein"));
    assert!(files.len() > 3, "{files:?}");
    for file in files {
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
        for (name, value) in secrets {
            assert!(
                !text.contains(value),
                "{name}'s value is in {}",
                file.display()
            );
        }
    }
}

/// The fault server exits in the middle of a call: the model is told the
/// server stopped and the call's effect is unknown; the next call restarts
/// it and works.
#[test]
fn a_server_that_crashes_mid_call_is_an_error_then_restarted() {
    let project = Project::new();
    let calls = project.root().join("calls.log");
    project.user_config(&format!(
        "[permissions]\nallow = [\"mcp__fault__*\"]\n{}",
        fault(
            "fault",
            &[],
            &format!(
                "env = {{ FAULT_CALLS = {} }}",
                toml_str(&calls.display().to_string())
            )
        )
    ));
    let scenario = project.scenario(&json!({"replies": [
        {"text": "Crash it.", "tool_calls": call("mcp__fault__crash", json!({}))},
        saw("the MCP server `fault` stopped during the call", "It stopped. Again.",
            "It did not say it stopped.",
            call("mcp__fault__ok", json!({"text": "again"}))),
        saw("ok {\"text\": \"again\"}", "It is back.", "It is not back.", json!([])),
    ]}));
    let out = project.run(&scenario, &["poke the server"], "", &[]);

    out.assert_code(0);
    out.assert_stdout("state:  succeeded\n");
    out.assert_stderr("  │ It stopped. Again.\n");
    out.assert_stderr("  │ It is back.\n");
    out.assert_stderr("restarting the MCP server (it stopped");
    out.assert_stderr("server=fault restarts=1");
    let results = project.results_the_model_got();
    assert_eq!(results.len(), 2, "{results:#?}");
    assert_eq!(results[0].tool, "mcp__fault__crash");
    assert!(results[0].is_error, "{results:#?}");
    assert_eq!(
        results[0].content,
        "the MCP server `fault` stopped during the call, so what the call did is unknown; it will be restarted for the next call"
    );
    assert_eq!(results[1].tool, "mcp__fault__ok");
    assert!(!results[1].is_error, "{results:#?}");
    assert_eq!(results[1].content, "ok {\"text\": \"again\"}");
    // Each call reached a server: the first one, then the restarted one.
    assert_eq!(std::fs::read_to_string(&calls).unwrap(), "crash\nok\n");
}

/// A call the server never answers is cancelled after `tool_timeout_sec`
/// and the model is told so; the server still answers the next call.
#[test]
fn a_call_that_hangs_is_cancelled_after_its_tool_timeout() {
    let project = Project::new();
    project.user_config(&format!(
        "[permissions]\nallow = [\"mcp__fault__*\"]\n{}",
        fault("fault", &[], "tool_timeout_sec = 1")
    ));
    let scenario = project.scenario(&json!({"replies": [
        {"text": "This one hangs.", "tool_calls": call("mcp__fault__hang", json!({}))},
        saw("did not answer within 1 s", "It timed out. Another call.",
            "It did not time out.",
            call("mcp__fault__ok", json!({"text": "after"}))),
        saw("ok {\"text\": \"after\"}", "The server still answers.", "The server is gone.", json!([])),
    ]}));
    let out = project.run(&scenario, &["poke the server"], "", &[]);

    out.assert_code(0);
    out.assert_stdout("state:  succeeded\n");
    out.assert_stderr("  │ It timed out. Another call.\n");
    out.assert_stderr("  │ The server still answers.\n");
    let hang = project.result_of("mcp__fault__hang");
    assert!(hang.is_error, "{hang:?}");
    assert_eq!(
        hang.content,
        "the MCP server `fault` did not answer within 1 s; the call was cancelled (it may have done part of its work)"
    );
}

/// 10 MB of text: the model gets its head and tail within the cap
/// (`max_output_tokens`, 25,000 by default) and where the whole is; the
/// whole is saved among the task's artifacts.
#[test]
fn a_huge_result_is_cut_and_saved_whole() {
    let project = Project::new();
    project.user_config(&format!(
        "[permissions]\nallow = [\"mcp__fault__*\"]\n{}",
        fault("fault", &[], "")
    ));
    let scenario = project.scenario(&json!({"replies": [
        {"text": "A big one.", "tool_calls": call("mcp__fault__huge", json!({}))},
        saw("over its cap of 25000 tokens", "It was cut.", "It was not cut.", json!([])),
    ]}));
    let out = project.run(&scenario, &["poke the server"], "", &[]);

    out.assert_code(0);
    out.assert_stderr("  │ It was cut.\n");
    let huge = project.result_of("mcp__fault__huge");
    assert!(!huge.is_error, "{huge:?}");
    let artifacts = project.artifacts();
    let task = artifacts.file_name().unwrap().to_str().unwrap();
    let rel = format!(".rein/artifacts/{task}/mcp-{}-full.txt", huge.call_id);
    assert!(
        huge.content.contains(&format!(
            "\n[… the MCP tool returned 10485760 bytes, over its cap of 25000 tokens; the whole output is in {rel}; read it with read_file and start_line/end_line]\n"
        )),
        "{}…",
        huge.content.chars().filter(|c| *c != 'x').collect::<String>()
    );
    assert!(huge.content.starts_with("xxxx") && huge.content.ends_with("xxxx"));
    assert!(huge.content.len() < 200_000, "{} bytes", huge.content.len());
    let whole = std::fs::read(project.root().join(&rel)).unwrap();
    assert_eq!(whole.len(), 10 * 1024 * 1024);
    assert!(whole.iter().all(|b| *b == b'x'));
}

/// Issue 37 E: server-filesystem sends every file twice, as text and as a
/// `structuredContent` wrapping the same text; both reached the model, and
/// the cap counted both, so a file under the cap was cut at half its size.
/// The model gets the file once, whole, within a cap it fits.
#[test]
fn a_file_the_filesystem_server_reads_reaches_the_model_once() {
    let project = Project::new();
    let notes: String = (0..600).map(|n| format!("note {n}\n")).collect();
    std::fs::write(project.root().join("notes.txt"), &notes).unwrap();
    let path = project.root().join("notes.txt").display().to_string();
    project.user_config(&format!(
        "[permissions]\nallow = [\"mcp__filesystem__*\"]\n{}",
        filesystem(&project.root()).replace("args = [", "max_output_tokens = 3000\nargs = [")
    ));
    let scenario = project.scenario(&json!({"replies": [
        {"text": "Reading it.", "tool_calls": call("mcp__filesystem__read_text_file", json!({"path": path}))},
        saw("note 599", "I read it all.", "It was cut.", json!([])),
    ]}));
    let out = project.run(&scenario, &["read the notes"], "", &[]);
    out.assert_code(0);
    out.assert_stderr("  │ I read it all.\n");
    let read = project.result_of("mcp__filesystem__read_text_file");
    assert!(!read.is_error, "{read:?}");
    assert_eq!(read.content, notes);
}

/// A server that exits before it answers `initialize`: the warning names
/// it (with what it said on stderr), and the task runs with the built-in
/// tools to a verified fix.
#[test]
fn a_server_that_fails_to_start_leaves_a_task_with_the_builtin_tools() {
    let project = Project::new();
    project.user_config(&fault("broken", &["fail-start"], ""));
    let out = project.run(
        &support::demo_scenario(),
        &[
            "--yes",
            "--fix-test",
            "tests/test_cart.py::TestCart.test_total",
        ],
        "",
        &[],
    );
    out.assert_code(0);
    out.assert_stdout("state:  succeeded\n");
    out.assert_stdout("reason: fixed: `TestCart.test_total` passes");
    assert!(project.cart().contains(FIXED), "{}", project.cart());
    out.assert_stderr("MCP server not started: the MCP server `broken` did not start: ");
    out.assert_stderr("its last words on stderr: fault_server: refusing to start (as asked)");
    out.assert_stderr("  → run_tests tests/test_cart.py::TestCart::test_total\n");
    out.assert_stderr("  → edit_file cart.py (4 lines → 4 lines)\n");
}

/// `rein doctor` starts each server: one that works is listed with its
/// tools (and what they say of themselves), one that does not with why.
#[test]
fn doctor_lists_each_mcp_server_whether_it_starts_and_its_tools() {
    let project = Project::new();
    project.user_config(&format!(
        "{}{}{}",
        everything(),
        fault("broken", &["fail-start"], ""),
        fault("early", &[], "start_with_session = true")
    ));
    let out = project.doctor();
    // A server that does not start is a failed check.
    out.assert_code(1);
    out.assert_stdout(&format!(
        "ok   MCP server `everything` (node {} stdio): starts (when a task first needs it); ",
        npm_entry("server-everything")
    ));
    out.assert_stdout(&format!(
        "ok   MCP server `early` (python3 {}): starts (with the editor's session); ",
        fault_server()
    ));
    out.assert_stdout("(calls ask unless a rule allows them: `mcp__everything__*`)\n");
    out.assert_stdout("info   mcp__everything__get-sum (read-only, not destructive, idempotent, closed-world: runs beside other reads)\n");
    // Every hint false is not "no annotations".
    out.assert_stdout("info   mcp__everything__toggle-simulated-logging (not read-only, not destructive, not idempotent, closed-world: has effects)\n");
    out.assert_stdout(&format!(
        "FAIL MCP server `broken` (python3 {} fail-start): the MCP server `broken` did not start: ",
        fault_server()
    ));
    out.assert_stdout("fault_server: refusing to start (as asked)\n");
}

/// Issue 37 (smaller points): `rein doctor` said "ok" for server-memory,
/// whose writes the sandbox blocks (its memory.jsonl is kept beside its
/// code, under node_modules: EACCES at the first write, or a private layer
/// gone with the server where the sandbox gives one). It says so and how
/// to point the data into the workspace, which works; and neither `rein
/// doctor` nor `rein run` prints the MCP library's INFO logs.
#[test]
fn a_server_whose_writes_the_sandbox_blocks_is_warned_about() {
    let remember = |more: &dyn Fn(&Path) -> String| {
        let project = Project::new();
        let servers = project.dir.path().join("servers");
        project.user_config(&format!(
            "[permissions]\nallow = [\"mcp__memory__*\"]\n{}",
            memory(&servers, &more(&project.root()))
        ));
        let entity = json!({"entities": [{"name": "cart", "entityType": "module", "observations": ["total() sums quantities"]}]});
        let scenario = project.scenario(&json!({"replies": [
            {"text": "Remembering.", "tool_calls": call("mcp__memory__create_entities", entity)},
            saw("EACCES", "It could not write.", "It wrote.", json!([])),
        ]}));
        let doctor = project.doctor();
        let run = project.run(&scenario, &["remember the cart"], "", &[]);
        (project, doctor, run)
    };

    let (project, doctor, run) = remember(&|_| String::new());
    doctor.assert_stdout("ok   MCP server `memory` (node ");
    doctor.assert_stdout("warn   `memory` (server-memory) keeps its data beside its own files (");
    let data = project.root().join(".mcp-memory.jsonl");
    doctor.assert_stdout(&format!(
        "Point it into the workspace: env = {{ MEMORY_FILE_PATH = \"{}\" }} under [mcp_servers.memory]\n",
        data.display()
    ));
    doctor.refute_stderr("rmcp::");
    // What the warning says happens: nothing it saved is there.
    run.refute_stderr("rmcp::");
    let beside = project
        .dir
        .path()
        .join("servers/node_modules/@modelcontextprotocol/server-memory/dist/memory.jsonl");
    assert!(!beside.exists(), "{}", beside.display());

    // Pointed into the workspace, as the warning says: it works.
    let (project, doctor, run) = remember(&|root| {
        format!(
            "env = {{ MEMORY_FILE_PATH = {} }}",
            toml_str(&root.join(".mcp-memory.jsonl").display().to_string())
        )
    });
    doctor.assert_stdout(
        "info   `memory` can write only in the workspace and its temporary folder; its own files (",
    );
    assert!(
        !doctor.stdout.contains("warn   `memory`"),
        "{}",
        doctor.stdout
    );
    run.assert_stderr("  │ It wrote.\n");
    assert!(!project.result_of("mcp__memory__create_entities").is_error);
    let kept = std::fs::read_to_string(project.root().join(".mcp-memory.jsonl")).unwrap();
    assert!(kept.contains("total() sums quantities"), "{kept}");
}

/// Issue 37 (smaller points): each progress notification of a server was a
/// log line of the MCP library on stderr. It is the task's progress: a
/// step of `rein run`'s progress, and no library log.
#[test]
fn an_mcp_servers_progress_is_progress_not_a_log_line() {
    let project = Project::new();
    project.user_config(&format!(
        "[permissions]\nallow = [\"mcp__everything__*\"]\n{}",
        everything()
    ));
    let scenario = project.scenario(&json!({"replies": [
        {"text": "A long one.", "tool_calls": call("mcp__everything__trigger-long-running-operation", json!({"duration": 0.6, "steps": 3}))},
        saw("Long running operation completed", "It finished.", "It did not finish.", json!([])),
    ]}));
    let out = project.run(&scenario, &["run the long operation"], "", &[]);
    out.assert_code(0);
    out.assert_stderr("  │ It finished.\n");
    out.assert_stderr("Trigger Long Running Operation Tool (everything): ");
    out.refute_stderr("rmcp::");
    out.refute_stderr("ProgressNotification");
}

// --- Streamable HTTP --------------------------------------------------------------

/// The venv's python with PyPI's `mcp`, pinned (`install.sh python`, once
/// per test process).
fn python_with_mcp() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| install(Some("python"), "python3 with venv, and PyPI once"))
}

/// A Streamable HTTP server built with PyPI's `mcp`
/// (`server/mcp/tests/fixtures/http_server.py`), stopped when dropped.
struct HttpServer {
    child: std::process::Child,
    port: u16,
}

impl HttpServer {
    fn start() -> HttpServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let script = support::tests_dir().join("../server/mcp/tests/fixtures/http_server.py");
        let child = Command::new(python_with_mcp())
            .arg(script)
            .arg(port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut server = HttpServer { child, port };
        for _ in 0..600 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return server;
            }
            if let Some(status) = server.child.try_wait().unwrap() {
                panic!("the Python MCP server exited before listening: {status}");
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("the Python MCP server did not listen on port {port}");
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A remote server over Streamable HTTP in a whole fix-test task: its
/// tools are called under the same allow rule, the header's `${NAME}` is
/// filled in from Rein's environment — and the token it carries, echoed
/// back by the server, reaches the model only as `<redacted>`.
#[test]
fn a_remote_server_over_streamable_http_serves_a_fix_test_task() {
    let server = HttpServer::start();
    let project = Project::new();
    project.user_config(&format!(
        "[permissions]\nallow = [\"mcp__web__*\"]\n\n[mcp_servers.web]\nurl = \"http://127.0.0.1:{}/mcp\"\nheaders = {{ Authorization = \"Bearer ${{WEB_TOKEN}}\" }}\n",
        server.port
    ));
    let token = "web-token-7f3a9c2e41d8";
    let scenario = project.scenario(&json!({"replies": [
        {"text": "20 + 22 by the remote server.",
         "tool_calls": call("mcp__web__add", json!({"a": 20, "b": 22}))},
        saw("42", "The remote server says 42. Who am I there?", "I did not get the sum.",
            call("mcp__web__whoami", json!({}))),
        saw("Bearer <redacted>", "My token is hidden from me. Now the fix.",
            "I saw something else.",
            call("edit_file", json!({"path": "cart.py", "old_text": UNFIXED, "new_text": FIXED}))),
        words("Fixed: total() sums price times quantity."),
    ]}));
    let out = project.run(
        &scenario,
        &[
            "--yes",
            "--fix-test",
            "tests/test_cart.py::TestCart.test_total",
        ],
        "",
        &[("WEB_TOKEN", token)],
    );
    out.assert_code(0);
    out.assert_stdout("state:  succeeded\n");
    out.assert_stderr("  │ The remote server says 42. Who am I there?\n");
    out.assert_stderr("  │ My token is hidden from me. Now the fix.\n");
    for file in files_under(&project.root().join(".rein")) {
        let bytes = std::fs::read(&file).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(token),
            "the token is in {}",
            file.display()
        );
    }
    assert!(!out.stdout.contains(token) && !out.stderr.contains(token));
}

// --- the editor's session ---------------------------------------------------------

/// The pids `fault_server.py` wrote to `starts`, one per start.
/// The fault servers alive on this machine (not zombies) whose
/// `FAULT_STARTS` is `starts` and who run in `cwd`: their pids as the
/// machine sees them.
fn fault_servers_with(starts: &str, cwd: &Path) -> Vec<String> {
    let wanted = format!("FAULT_STARTS={starts}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .map_or(true, |stat| stat.contains(") Z "));
        // Not the sandbox's own processes around it.
        let sandbox = std::fs::read(entry.path().join("cmdline"))
            .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains("sandbox-exec"));
        let ours = environ
            .split(|b| *b == 0)
            .any(|var| var == wanted.as_bytes())
            && std::fs::read_link(entry.path().join("cwd")).is_ok_and(|dir| dir == cwd);
        if ours && !zombie && !sandbox {
            found.push(name);
        }
    }
    found
}

fn starts_in(starts: &Path) -> Vec<i32> {
    std::fs::read_to_string(starts)
        .unwrap_or_default()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

/// Plays the editor (a hang guard, not a timing assertion) until `done`
/// holds.
async fn eventually(s: &mut support::Server, what: &str, done: impl Fn() -> bool) {
    for _ in 0..600 {
        if done() {
            return;
        }
        s.editor
            .pump_for(std::time::Duration::from_millis(50))
            .await
            .unwrap();
    }
    panic!("never: {what}");
}

/// A server set to start with the session runs before any task; the
/// session's tasks use that one process; a workspace's own server set the
/// same way does not start in a workspace nobody trusted; the session's
/// end stops the server.
#[tokio::test]
async fn a_server_starts_with_the_editors_session_and_its_tasks_share_it() {
    // Relative to the workspace, where servers start (and may write).
    let server = |starts: &str| {
        json!({
            "command": "python3",
            "args": [fault_server()],
            "env": {"FAULT_STARTS": starts},
            "startWithSession": true,
        })
    };
    let hostile = json!({"mcpServers": {"hostile": server("hostile-starts")}});
    let mut setup = support::Setup::new(support::demo_project(), support::demo_scenario());
    setup.settings = vec![("mcpServers", json!({"fault": server("starts")}))];
    setup.before_start = Some(Box::new(move |root: &Path| {
        std::fs::write(root.join(".mcp.json"), hostile.to_string()).unwrap();
    }));
    // The trust question goes unanswered.
    setup.message_choices = vec![];
    let mut s = support::Server::start(setup).await;
    s.editor.open("tests/test_cart.py").await.unwrap();
    let starts = s.root.join("starts");
    let hostile_starts = s.root.join("hostile-starts");

    eventually(&mut s, "the session's server started", || {
        starts_in(&starts).len() == 1
    })
    .await;
    for _ in 0..2 {
        let task = s
            .fix_test("tests/test_cart.py", 6, "TestCart.test_total")
            .await;
        let status = s.until_end(&task).await;
        assert_eq!(status["state"], "succeeded", "{status}");
    }
    assert_eq!(starts_in(&starts).len(), 1, "a task started it again");
    assert!(
        starts_in(&hostile_starts).is_empty(),
        "an untrusted workspace's server started"
    );
    // The pid the server wrote is its own namespace's: find it on the
    // machine by what it was started with.
    let root = s.root.canonicalize().unwrap();
    let running = || fault_servers_with("starts", &root);
    assert_eq!(running().len(), 1, "the session's server is not running");
    assert_eq!(s.shutdown().await, 0);
    let exited = || running().is_empty();
    for _ in 0..600 {
        if exited() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(exited(), "the server outlived the session");
}
