//! `rein trace` end to end, and what a trace may never hold: a task run by
//! the real binary (`rein run` with the scripted model) with fake keys in
//! the environment and in the workspace's configuration leaves none of them
//! anywhere under `.rein/` nor in its output and logs; its trace reads back
//! as a timeline and as a self-contained HTML report. The report's exact
//! bytes are pinned on a fixed, hand-written trace
//! (`fixtures/trace/sample.jsonl` → `sample.html`, `sample.txt`; refresh
//! with `UPDATE_EXPECT=1`). Never a real model, never the network.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rein_testkit::rein_binary;

/// The fake keys, and pieces of them that no other text has.
const ENV_ANTHROPIC_KEY: &str = "sk-ant-FAKE-env-0123456789";
const ENV_OPENAI_KEY: &str = "sk-FAKE-openai-0123456789";
const CONFIG_KEY: &str = "cfg-FAKE-key-0123456789";
const NEEDLES: [&str; 6] = [
    ENV_ANTHROPIC_KEY,
    ENV_OPENAI_KEY,
    CONFIG_KEY,
    "FAKE-env",
    "FAKE-openai",
    "cfg-FAKE",
];

/// The task id of the fixture trace.
const SAMPLE_ID: &str = "t-20261130-090000-ab12";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/trace")
        .join(name)
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

/// The `rein` binary with nothing of the machine's model set-up or user
/// configuration inherited, no colour, every pipe captured.
fn rein(config_home: &Path) -> Command {
    let mut command = Command::new(rein_binary().unwrap());
    for name in [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OPENAI_BASE_URL",
        "REIN_PROVIDER",
        "REIN_MODEL",
        "REIN_SCENARIO",
        "REIN_MAX_TURNS",
        "REIN_MAX_COST_USD",
        "REIN_SCRIPTED_API_KEY",
        "REIN_SCRIPTED_BASE_URL",
        "REIN_LOG",
    ] {
        command.env_remove(name);
    }
    command
        .env("XDG_CONFIG_HOME", config_home)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

#[derive(Debug)]
struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

fn output(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    Output {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
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
}

/// A temporary directory with a workspace (`ws/`) whose `.rein/traces/`
/// holds the given traces, and an empty user config directory.
struct Traces {
    dir: tempfile::TempDir,
}

impl Traces {
    fn new(traces: &[(&str, &[u8])]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("ws/.rein/traces");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::create_dir_all(dir.path().join("config")).unwrap();
        for (id, bytes) in traces {
            std::fs::write(folder.join(format!("{id}.jsonl")), bytes).unwrap();
        }
        Self { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    /// `rein trace <args>` in the workspace.
    fn trace(&self, args: &[&str]) -> Output {
        output(
            rein(&self.dir.path().join("config"))
                .arg("trace")
                .args(args)
                .current_dir(self.root()),
        )
    }
}

fn sample() -> Vec<u8> {
    std::fs::read(fixture("sample.jsonl")).unwrap()
}

#[test]
fn a_traced_task_leaks_no_key_and_reads_back_as_a_timeline_and_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    rein_testkit::copy_project(&repo().join("server/app/demo/project"), &root).unwrap();
    std::fs::create_dir_all(root.join(".rein")).unwrap();
    let config_file = root.join(".rein/config.toml");
    std::fs::write(
        &config_file,
        format!("provider = \"scripted\"\napi_key = \"{CONFIG_KEY}\"\n"),
    )
    .unwrap();
    let config_home = dir.path().join("config");
    std::fs::create_dir_all(&config_home).unwrap();

    // The bundled scenario (no REIN_SCENARIO), keys everywhere, debug logs.
    let run = output(
        rein(&config_home)
            .args(["run", "--workspace"])
            .arg(&root)
            .args(["--yes", "--fix-test", "tests/test_cart.py::test_total"])
            .current_dir(dir.path())
            .env("REIN_PROVIDER", "scripted")
            .env("ANTHROPIC_API_KEY", ENV_ANTHROPIC_KEY)
            .env("OPENAI_API_KEY", ENV_OPENAI_KEY)
            .env("REIN_LOG", "debug"),
    );
    run.assert_code(0);
    assert!(
        run.stderr.contains("DEBUG"),
        "the debug logs were not captured:\n{}",
        run.stderr
    );

    // (a) No key anywhere: not under .rein/ (but the config file we wrote
    // it in), not in the output, not in the logs.
    let files = files_under(&root.join(".rein"));
    assert!(
        files
            .iter()
            .any(|f| f.starts_with(root.join(".rein/traces"))),
        "no trace written: {files:?}"
    );
    assert!(
        files.iter().any(|f| f.ends_with("state.db")),
        "no task state: {files:?}"
    );
    for file in files.iter().filter(|f| **f != config_file) {
        let bytes = std::fs::read(file).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for needle in NEEDLES {
            assert!(!text.contains(needle), "{needle} is in {}", file.display());
        }
    }
    for needle in NEEDLES {
        assert!(!run.stdout.contains(needle), "{needle} is in stdout");
        assert!(!run.stderr.contains(needle), "{needle} is in stderr");
    }

    let traces = files_under(&root.join(".rein/traces"));
    assert_eq!(traces.len(), 1, "{traces:?}");
    let id = traces[0].file_stem().unwrap().to_str().unwrap().to_owned();
    run.assert_stdout(&format!("task:   {id}"));

    // (b) The timeline, found from a folder inside the project.
    let inside = root.join("tests");
    let timeline = output(rein(&config_home).args(["trace", &id]).current_dir(&inside));
    timeline.assert_code(0);
    for line in [
        format!("task      {id}"),
        // Sentences without their Markdown backticks.
        "goal      Make the failing test TestCart.test_total in tests/test_cart.py pass."
            .to_owned(),
        "state     succeeded: fixed: TestCart.test_total passes, no regressions in 5 turns; files changed: cart.py"
            .to_owned(),
        "turns     5 of 20".to_owned(),
        "call      run_tests tests/test_cart.py::TestCart::test_total".to_owned(),
        "call      edit_file cart.py (4 lines → 4 lines)".to_owned(),
        "call      run_tests tests/test_cart.py".to_owned(),
        "verify    ✓ verified: fixed: TestCart.test_total passes, no regressions".to_owned(),
        "$ python3 -m unittest -v tests.test_cart.TestCart.test_total · exit 0".to_owned(),
        "$ python3 -m unittest -v tests.test_cart · exit 0".to_owned(),
    ] {
        timeline.assert_stdout(&line);
    }
    let lines: Vec<&str> = timeline.stdout.lines().collect();
    let has = |needles: &[&str]| lines.iter().any(|l| needles.iter().all(|n| l.contains(n)));
    assert!(
        has(&[
            "✗",
            "exit code 1",
            "failing: tests.test_cart.TestCart.test_total"
        ]),
        "the failing run:\n{}",
        timeline.stdout
    );
    assert!(
        has(&["✓", "Edited cart.py"]),
        "the edit's result:\n{}",
        timeline.stdout
    );
    assert!(
        has(&["✓", "python3 -m unittest -v tests.test_cart: exit code 0"]),
        "the passing run:\n{}",
        timeline.stdout
    );
    assert!(
        lines
            .last()
            .unwrap()
            .contains("state     succeeded: fixed: TestCart.test_total passes"),
        "the final state ends the timeline:\n{}",
        timeline.stdout
    );
    assert!(!timeline.stdout.contains('\x1b'), "colour without a TTY");

    // -v adds the diff and the model's activities.
    let verbose = output(
        rein(&config_home)
            .args(["trace", &id, "-v", "--workspace"])
            .arg(&root),
    );
    verbose.assert_code(0);
    verbose.assert_stdout("-    return sum(item.qty for item in items)");
    verbose.assert_stdout("+    return sum(item.price * item.qty for item in items)");
    verbose.assert_stdout("doing     running tests");

    // (c) The HTML report: one file, nothing loaded from elsewhere.
    let report = dir.path().join("report.html");
    let html_run = output(
        rein(&config_home)
            .args(["trace", &id, "--html"])
            .arg(&report)
            .current_dir(&root),
    );
    html_run.assert_code(0);
    html_run.assert_stdout("wrote ");
    let html = std::fs::read_to_string(&report).unwrap();
    assert_self_contained(&html);
    for needle in [
        "<svg",
        "<span class=\"del\">-    return sum(item.qty for item in items)</span>",
        "<span class=\"add\">+    return sum(item.price * item.qty for item in items)</span>",
        ">applied</span>",
        "python3 -m unittest -v tests.test_cart.TestCart.test_total",
        "verify-2.log",
        "verify-suite-3.log",
        "fixed: <code>TestCart.test_total</code> passes, no regressions",
        // One verification that lists two checks says so.
        "<span class=\"c-ok\">✓ verified</span> (2 checks)",
        // The edit's duration is the user's review (`--yes` here).
        "for your review</span></h3>",
    ] {
        assert!(html.contains(needle), "the report lacks {needle:?}");
    }
    // The logs, relative to the workspace in the trace, are links to
    // their files there.
    let link = format!(
        "<a href=\"file://{}/.rein/artifacts/",
        root.canonicalize().unwrap().display()
    );
    assert!(
        html.contains(&link) && html.contains("verify-2.log</code></a>"),
        "the report lacks {link:?}…verify-2.log"
    );
    // The evidence's file hash, as the trace has it.
    let trace = std::fs::read_to_string(&traces[0]).unwrap();
    let verification: serde_json::Value = trace
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|e| e["kind"] == "verification")
        .unwrap();
    let hash = verification["evidence"][0]["files"][0][1].as_str().unwrap();
    assert_eq!(hash.len(), 64, "{verification}");
    // The trace stands on its own: it opens with what the task is, and
    // shows no absolute path of the user's machine in the evidence.
    let first: serde_json::Value = serde_json::from_str(trace.lines().next().unwrap()).unwrap();
    assert_eq!(first["kind"], "started", "{first}");
    assert_eq!(first["task"]["kind"], "fix_test", "{first}");
    assert_eq!(first["resumed"], false, "{first}");
    assert!(
        first["goal"].as_str().unwrap().contains("test_total"),
        "{first}"
    );
    let log_path = verification["evidence"][0]["log_path"].as_str().unwrap();
    assert!(log_path.starts_with(".rein/artifacts/"), "{log_path}");
    assert!(html.contains(hash), "the report lacks the hash {hash}");
    for needle in NEEDLES {
        assert!(!html.contains(needle), "{needle} is in the report");
    }
}

/// Nothing in `html` is fetched from elsewhere, and its main elements are
/// closed.
fn assert_self_contained(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..80]);
    assert!(html.trim_end().ends_with("</html>"));
    for needle in [
        "http://", "https://", "src=", "<link", "@import", "url(", "//cdn",
    ] {
        assert!(!html.contains(needle), "the report has {needle:?}");
    }
    for tag in [
        "html", "head", "body", "section", "details", "svg", "table", "pre", "ol", "script",
        "style",
    ] {
        let open =
            html.matches(&format!("<{tag}>")).count() + html.matches(&format!("<{tag} ")).count();
        let close = html.matches(&format!("</{tag}>")).count();
        assert_eq!(open, close, "<{tag}> opened {open} times, closed {close}");
    }
}

#[test]
fn the_report_of_a_fixed_trace_is_pinned() {
    let traces = Traces::new(&[(SAMPLE_ID, &sample())]);
    let out = traces.dir.path().join("sample.html");
    let run = traces.trace(&[SAMPLE_ID, "--html", out.to_str().unwrap()]);
    run.assert_code(0);
    let html = std::fs::read_to_string(&out).unwrap();
    assert_self_contained(&html);
    // The trace's code and model text are escaped, never markup.
    assert!(!html.contains("<script>alert"), "unescaped content");
    assert!(html.contains("&lt;script&gt;alert(&#39;xss&#39;)&lt;/script&gt;"));
    expect_test::expect_file!["fixtures/trace/sample.html"].assert_eq(&html);

    // The same bytes every time.
    let again = traces.dir.path().join("again.html");
    traces
        .trace(&[SAMPLE_ID, "--html", again.to_str().unwrap()])
        .assert_code(0);
    assert_eq!(std::fs::read_to_string(&again).unwrap(), html);

    let timeline = traces.trace(&[SAMPLE_ID]);
    timeline.assert_code(0);
    expect_test::expect_file!["fixtures/trace/sample.txt"].assert_eq(&timeline.stdout);
}

#[test]
fn a_trace_cut_by_a_crash_still_renders_with_a_note() {
    // The last line cut in the middle, as a crash while writing it leaves it.
    let mut bytes = sample();
    let last_start = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|b| *b == b'\n')
        .unwrap()
        + 1;
    bytes.truncate(last_start + (bytes.len() - last_start) / 2);
    let traces = Traces::new(&[(SAMPLE_ID, &bytes)]);

    let timeline = traces.trace(&[SAMPLE_ID]);
    timeline.assert_code(0);
    timeline.assert_stdout("note      the last line (line 89) is cut short, without a line end");
    timeline.assert_stdout("note      the trace ends without a final state");
    // Everything before the cut is there.
    timeline.assert_stdout("verify    ✓ verified: fixed: TestCart.test_total passes");
    timeline.assert_stdout("state     verifying");
    assert!(
        !timeline.stdout.contains("in 11 turns"),
        "{}",
        timeline.stdout
    );

    let out = traces.dir.path().join("cut.html");
    traces
        .trace(&[SAMPLE_ID, "--html", out.to_str().unwrap()])
        .assert_code(0);
    let html = std::fs::read_to_string(&out).unwrap();
    assert_self_contained(&html);
    assert!(html.contains("the last line (line 89) is cut short"));
}

#[test]
fn an_unknown_id_lists_the_traces_newest_first() {
    // An older task, from an hour before the sample.
    let older = String::from_utf8(sample())
        .unwrap()
        .replace(SAMPLE_ID, "t-20261130-080000-cd34")
        .replace("2026-11-30T09:", "2026-11-30T08:");
    let traces = Traces::new(&[
        ("t-20261130-080000-cd34", older.as_bytes()),
        (SAMPLE_ID, &sample()),
    ]);

    let run = traces.trace(&["t-nope"]);
    run.assert_code(2);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(
        run.stderr.contains("no trace of a task `t-nope`"),
        "{}",
        run.stderr
    );
    let newer = run
        .stderr
        .find(SAMPLE_ID)
        .expect("the newer task is listed");
    let older = run
        .stderr
        .find("t-20261130-080000-cd34")
        .expect("the older task is listed");
    assert!(newer < older, "newest first:\n{}", run.stderr);
    assert!(
        run.stderr.contains("2026-11-30 09:00:00  succeeded"),
        "{}",
        run.stderr
    );
    // Goals as sentences, without their Markdown backticks.
    assert!(
        run.stderr
            .contains("Make the failing test TestCart.test_total in tests/test_cart.py pass."),
        "{}",
        run.stderr
    );

    // A part of an id that names one task is enough; one that names two is not.
    traces
        .trace(&["ab12"])
        .assert_stdout(&format!("task      {SAMPLE_ID}"));
    let ambiguous = traces.trace(&["t-2026"]);
    ambiguous.assert_code(2);
    assert!(
        ambiguous.stderr.contains("is part of 2 task ids"),
        "{}",
        ambiguous.stderr
    );

    // An id is a name, never a path.
    traces.trace(&["../traces/t-nope"]).assert_code(2);

    // No .rein/ here or above.
    let empty = tempfile::tempdir().unwrap();
    let run = output(
        rein(&traces.dir.path().join("config"))
            .args(["trace", SAMPLE_ID, "--workspace"])
            .arg(empty.path()),
    );
    run.assert_code(2);
    assert!(run.stderr.contains("no .rein/ folder"), "{}", run.stderr);
}

/// The model's text and the goal carry terminal escapes (erase the line,
/// back to its start, set the window title) and a bidi override: the
/// timeline, its `-v` full text and the listing of traces show them
/// escaped, never raw; the HTML report shows the same escapes.
#[test]
fn a_model_text_with_escape_sequences_is_shown_escaped_by_rein_trace() {
    // JSON escapes, as a trace writer puts them in a line.
    let tampered = String::from_utf8(sample())
        .unwrap()
        .replace(
            "I'll run the failing test first.\\n",
            "I'll run the failing test first.\\u001b[2K\\rAll tests pass.\\u202e!\\n",
        )
        .replace(
            "Make the failing test",
            "Make\\u001b]0;pwned\\u0007 the failing test",
        );
    let traces = Traces::new(&[(SAMPLE_ID, tampered.as_bytes())]);
    let raw = |text: &str| text.contains(['\x1b', '\r', '\x07', '\u{202e}']);

    let timeline = traces.trace(&[SAMPLE_ID]);
    timeline.assert_code(0);
    timeline.assert_stdout(
        "says      I'll run the failing test first.\\x1b[2K\\rAll tests pass.\\u{202e}! …\n",
    );
    timeline.assert_stdout("goal      Make\\x1b]0;pwned\\x07 the failing test");
    assert!(!raw(&timeline.stdout), "{:?}", timeline.stdout);

    let verbose = traces.trace(&[SAMPLE_ID, "-v"]);
    verbose.assert_code(0);
    verbose
        .assert_stdout("│ I'll run the failing test first.\\x1b[2K\\rAll tests pass.\\u{202e}!\n");
    assert!(!raw(&verbose.stdout), "{:?}", verbose.stdout);

    // The goal in the listing of an unknown id (on stderr).
    let listing = traces.trace(&["t-nope"]);
    listing.assert_code(2);
    assert!(
        listing
            .stderr
            .contains("Make\\x1b]0;pwned\\x07 the failing test"),
        "{}",
        listing.stderr
    );
    assert!(!raw(&listing.stderr), "{:?}", listing.stderr);

    let out = traces.dir.path().join("tampered.html");
    traces
        .trace(&[SAMPLE_ID, "--html", out.to_str().unwrap()])
        .assert_code(0);
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(
        html.contains("first.\\x1b[2K\\rAll tests pass.\\u{202e}!"),
        "the report lacks the escaped text"
    );
    assert!(!raw(&html), "the report carries raw control characters");
}
