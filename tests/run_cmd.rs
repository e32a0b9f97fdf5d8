//! `rein run` end to end: the real binary on a copy of the bundled demo
//! project, driven by the scripted model (`REIN_PROVIDER=scripted` with a
//! scenario file), approvals answered through a pipe on stdin. Never a
//! real model, never the network, no timing assertions.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod support;

use rein_testkit::rein_binary;
use support::{FIXED, UNFIXED as BROKEN, demo_scenario, demo_scratch, pytest};

fn fixture(name: &str) -> PathBuf {
    support::fixture(&format!("run/{name}"))
}

/// A fresh copy of the demo project (`project/`) and an empty user config
/// directory (`config/`), so nothing of the machine's set-up leaks in.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new() -> Self {
        Self {
            dir: demo_scratch(),
        }
    }

    /// A fresh copy of `tests/fixtures/<name>` instead of the demo.
    fn of_fixture(name: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        support::copy_dir(&support::fixture(name), &dir.path().join("project"));
        std::fs::create_dir_all(dir.path().join("config")).unwrap();
        Self { dir }
    }

    /// Writes `scenario` (the scripted model's replies) next to the
    /// project, for scenarios that name paths known only at run time.
    fn scenario(&self, scenario: &serde_json::Value) -> PathBuf {
        let path = self.dir.path().join("scenario.json");
        std::fs::write(&path, scenario.to_string()).unwrap();
        path
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn cart(&self) -> String {
        std::fs::read_to_string(self.root().join("cart.py")).unwrap()
    }

    fn test_file(&self) -> String {
        std::fs::read_to_string(self.root().join("tests/test_cart.py")).unwrap()
    }

    /// Writes the project's `.rein/config.toml`.
    fn config(&self, toml: &str) {
        std::fs::create_dir_all(self.root().join(".rein")).unwrap();
        std::fs::write(self.root().join(".rein/config.toml"), toml).unwrap();
    }

    /// Writes the user's own `config.toml` (trusted, unlike the project's).
    fn user_config(&self, toml: &str) {
        let dir = self.dir.path().join("config/rein");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), toml).unwrap();
    }

    /// `rein run --yes --fix-test` on `TestCart.test_total` with `scenario`.
    fn fix_test_total(&self, scenario: &Path) -> Output {
        self.run(
            scenario,
            &[
                "--yes",
                "--fix-test",
                "tests/test_cart.py::TestCart.test_total",
            ],
            "",
            &[],
        )
    }

    /// `rein run --workspace <project> <args>` with `stdin` piped in.
    fn run(&self, scenario: &Path, args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Output {
        let mut command = self.command(scenario);
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

    /// `rein run --workspace <project>` with the scripted model playing
    /// `scenario`, every pipe captured, nothing of the environment's model
    /// settings inherited.
    fn command(&self, scenario: &Path) -> Command {
        let mut command = Command::new(rein_binary().unwrap());
        command
            .arg("run")
            .arg("--workspace")
            .arg(self.root())
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
}

#[test]
fn fix_test_with_yes_is_fixed_on_disk_with_the_diff_and_the_evidence() {
    let project = Project::new();
    assert!(project.cart().contains(BROKEN));
    let out = project.run(
        &demo_scenario(),
        &["--yes", "--fix-test", "tests/test_cart.py::test_total"],
        "",
        &[],
    );
    out.assert_code(0);
    assert!(project.cart().contains(FIXED), "{}", project.cart());

    // stdout: the result only.
    assert!(
        out.stdout.starts_with("state:  succeeded\n"),
        "{}",
        out.stdout
    );
    out.assert_stdout("reason: fixed: `TestCart.test_total` passes");
    out.assert_stdout("--- a/cart.py\n+++ b/cart.py\n@@ -10,7 +10,7 @@\n \n def total(items):\n");
    out.assert_stdout("-    return sum(item.qty for item in items)\n");
    out.assert_stdout("+    return sum(item.price * item.qty for item in items)\n");
    out.assert_stdout("evidence:\n  test_passes tests/test_cart.py::TestCart.test_total\n");
    out.assert_stdout("    command:  python3 -m unittest -v tests.test_cart.TestCart.test_total\n");
    out.assert_stdout("    exit:     0\n");
    out.assert_stdout("    duration: ");
    out.assert_stdout("log:      .rein/artifacts/");
    out.assert_stdout("spent:  5 turns · ");
    assert!(!out.stdout.contains("turn 1/"), "{}", out.stdout);

    // stderr: the progress.
    out.assert_stderr("goal: Make the failing test `TestCart.test_total`");
    out.assert_stderr("turn 1/20 · running tests · ");
    out.assert_stderr("  │ I'll run the failing test first to see how it fails.\n");
    out.assert_stderr("  → run_tests tests/test_cart.py::TestCart::test_total\n");
    out.assert_stderr("  → edit_file cart.py (4 lines → 4 lines)\n");
    out.assert_stderr("Apply this edit to cart.py? [y/N] y (--yes)\n");
    out.assert_stderr("  ← ok (");
    out.assert_stderr(" · verifying · ");
    out.assert_stderr("  ✓ verified: fixed: `TestCart.test_total` passes");
    out.assert_stderr(
        "    evidence: `python3 -m unittest -v tests.test_cart.TestCart.test_total` · exit 0 · ",
    );
    out.assert_stderr("turn 5/20 · succeeded · ");
}

/// Regression: with --yes nobody answers, yet the model could ask, and
/// the task ended `waiting_user` with nobody to answer. Now it has no
/// `ask_user` and is told to decide itself.
#[test]
fn with_yes_nobody_is_asked_and_the_model_decides() {
    let project = Project::new();
    let out = project.run(
        &fixture("ask_first.json"),
        &[
            "--yes",
            "--fix-test",
            "tests/test_cart.py::TestCart::test_total",
        ],
        "",
        &[],
    );
    out.assert_code(0);
    assert!(!out.stderr.contains("Rein asks"), "{}", out.stderr);
    out.assert_stderr("  │ Nobody can answer; prices are per unit.\n");
    out.assert_stdout("state:  succeeded\n");
    // Without --yes the same model asks (and, with no answer, waits).
    let project = Project::new();
    let out = project.run(
        &fixture("ask_first.json"),
        &["--fix-test", "tests/test_cart.py::TestCart::test_total"],
        "",
        &[],
    );
    out.assert_stderr("  ? Rein asks:\n    How should total() use the prices?\n");
    out.assert_stdout("state:  waiting_user\n");
}

#[test]
fn answering_y_applies_the_edit() {
    let project = Project::new();
    let out = project.run(
        &fixture("edit_then_ask.json"),
        &["--fix-test", "tests/test_cart.py::TestCart::test_total"],
        "y\n",
        &[],
    );
    out.assert_code(0);
    assert!(project.cart().contains(FIXED), "{}", project.cart());
    out.assert_stderr("+    return sum(item.price * item.qty for item in items)\n");
    out.assert_stderr("Apply this edit to cart.py? [y/N] y\n");
    out.assert_stdout("state:  succeeded\n");
}

#[test]
fn answering_n_rejects_the_edit() {
    let project = Project::new();
    let before = project.cart();
    let out = project.run(
        &fixture("edit_then_ask.json"),
        &["--fix-test", "tests/test_cart.py::TestCart.test_total"],
        "n\n",
        &[],
    );
    out.assert_code(1);
    assert_eq!(project.cart(), before);
    out.assert_stderr("Apply this edit to cart.py? [y/N] n\n");
    out.assert_stderr("  ← error (");
    out.assert_stderr("The user rejected this edit to cart.py");
    // The model asks what to do instead; the input has ended: no answer,
    // so the task waits.
    out.assert_stderr("  ? Rein asks:\n    How should total() use the prices?\n");
    out.assert_stderr("(no answer: end of input)");
    out.assert_stdout("state:  waiting_user\n");
    out.assert_stdout(
        "reason: waiting for the user's answer to: How should total() use the prices?\n",
    );
    out.assert_stdout("files changed: none\n");
}

#[test]
fn end_of_input_is_no() {
    let project = Project::new();
    let before = project.cart();
    let out = project.run(
        &fixture("edit_then_ask.json"),
        &["--fix-test", "tests/test_cart.py::test_total"],
        "",
        &[],
    );
    out.assert_code(1);
    assert_eq!(project.cart(), before);
    out.assert_stderr("The user rejected this edit to cart.py");
}

#[test]
fn commands_that_ask_are_put_to_the_user() {
    let project = Project::new();
    let allowed = project.run(&fixture("command.json"), &["say hello"], "y\n", &[]);
    allowed.assert_code(0);
    allowed.assert_stderr("  rein wants to run `echo hello-from-rein` in ");
    allowed.assert_stderr("Run `echo hello-from-rein`? [y]es once / [a]ll this task / [N]o y\n");
    allowed.assert_stderr("  ✓ allowed once\n");
    allowed.assert_stderr("  │ It printed hello-from-rein.\n");

    let denied = project.run(&fixture("command.json"), &["say hello"], "n\n", &[]);
    denied.assert_code(0);
    denied.assert_stderr("  ✗ not allowed\n");
    denied.assert_stderr("  ← error (");
    denied.assert_stderr("  │ You did not let me run it, so I stop here.\n");
}

#[test]
fn yes_does_not_turn_a_deny_into_an_allow() {
    let project = Project::new();
    let out = project.run(
        &fixture("denied.json"),
        &["--yes", "fetch the page"],
        "",
        &[],
    );
    out.assert_code(0);
    out.assert_stderr("  → run_command `curl https://example.com`\n");
    out.assert_stderr("  ✗ denied: run_command (built-in deny: curl)\n");
    out.assert_stderr("  ← error (");
    assert!(!out.stderr.contains("Run `curl"), "{}", out.stderr);
    out.assert_stderr("  │ I may not use the network here.\n");
}

#[test]
fn an_instruction_answered_in_words_succeeds() {
    let project = Project::new();
    let before = project.cart();
    let out = project.run(
        &fixture("text_only.json"),
        &["what does cart.py do?"],
        "",
        &[],
    );
    out.assert_code(0);
    assert_eq!(project.cart(), before);
    out.assert_stderr("goal: what does cart.py do?\n");
    out.assert_stderr(
        "  │ cart.py defines Item, total() and count(); total() ignores the prices.\n",
    );
    out.assert_stdout("state:  succeeded\n");
    out.assert_stdout("files changed: none\n");
    out.assert_stdout("evidence: none\n");
    out.assert_stdout("spent:  1 turn · ");
}

#[test]
fn a_bad_target_is_a_usage_error_naming_what_exists() {
    let project = Project::new();
    let out = project.run(
        &demo_scenario(),
        &["--yes", "--fix-test", "tests/test_cart.py::test_nope"],
        "",
        &[],
    );
    out.assert_code(2);
    out.assert_stderr(
        "no test `test_nope` in tests/test_cart.py; the tests there are: TestCart.test_total, TestCart.test_empty_cart_costs_nothing, TestCart.test_count",
    );
    assert!(out.stdout.is_empty(), "{}", out.stdout);

    let out = project.run(
        &demo_scenario(),
        &["--yes", "--fix-test", "tests/test_carts.py::test_total"],
        "",
        &[],
    );
    out.assert_code(2);
    out.assert_stderr("tests/test_carts.py not found; did you mean tests/test_cart.py?");

    let out = project.run(
        &demo_scenario(),
        &["--yes", "--fix-test", "tests/test_cart.py"],
        "",
        &[],
    );
    out.assert_code(2);
    out.assert_stderr("PATH::NAME");
}

#[test]
fn bad_configuration_is_a_usage_error() {
    let project = Project::new();
    project.config("max_turns = \"lots\"\n");
    let out = project.run(&demo_scenario(), &["--yes", "anything"], "", &[]);
    out.assert_code(2);
    out.assert_stderr(".rein/config.toml is not valid");
}

#[test]
fn ctrl_c_cancels_the_task_cleanly() {
    let project = Project::new();
    let before = project.cart();
    let mut command = project.command(&fixture("edit_then_ask.json"));
    command.args(["--fix-test", "tests/test_cart.py::test_total"]);
    let mut child = command.spawn().unwrap();
    // stdin stays open: the edit's question waits for an answer.
    let stdin = child.stdin.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match stderr.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    seen.extend_from_slice(&buf[..n]);
                    let _ = tx.send(String::from_utf8_lossy(&seen).into_owned());
                }
            }
        }
        String::from_utf8_lossy(&seen).into_owned()
    });
    // Wait for the question (a message, not a duration), then Ctrl-C.
    loop {
        let so_far = rx.recv().expect("rein ended before asking about the edit");
        if so_far.contains("Apply this edit to cart.py? [y/N] ") {
            break;
        }
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = child.wait().unwrap();
    drop(stdin);
    let stderr = reader.join().unwrap();
    assert_eq!(status.code(), Some(130), "{stdout}\n--- stderr\n{stderr}");
    assert!(stdout.starts_with("state:  cancelled\n"), "{stdout}");
    assert!(
        stdout.contains("reason: cancelled by the user\n"),
        "{stdout}"
    );
    assert!(stderr.contains("rein: cancelling the task"), "{stderr}");
    assert_eq!(project.cart(), before);
}

#[test]
fn the_turn_budget_stops_the_task() {
    let project = Project::new();
    let out = project.run(
        &demo_scenario(),
        &["--yes", "--fix-test", "tests/test_cart.py::test_total"],
        "",
        &[("REIN_MAX_TURNS", "1")],
    );
    out.assert_code(1);
    out.assert_stdout("state:  budget_exhausted\n");
    out.assert_stdout("reason: stopped: max turns (1)\n");
    out.assert_stderr("turn 1/1 · budget_exhausted · ");
    assert!(project.cart().contains(BROKEN));
}

/// The model skips the failing test (`@unittest.skip` on its class: the
/// test itself cannot be edited) and claims the suite is green: the real
/// unittest exits 0, but Rein sees the test skipped, not passed, and says
/// so. Only once the test runs and passes is the task fixed.
#[test]
fn a_skipped_test_is_not_a_fixed_test() {
    let project = Project::new();
    let out = project.fix_test_total(&fixture("skip_the_test.json"));
    out.assert_code(0);
    out.assert_stdout("state:  succeeded\n");
    out.assert_stderr("`TestCart.test_total` did not pass, it was skipped (1 skipped, 0 passed)");
    assert!(project.cart().contains(FIXED));
    let test = project.test_file();
    assert!(!test.contains("unittest.skip"), "{test}");
}

/// The user's test command is a wrapper script that runs the real tests
/// quietly and prints its own line: it exits 0 once the code is fixed, but
/// nothing in its output names the target. The task is not "fixed": it
/// ends `unverified` (exit 3), says why and what to change, and the edit
/// the user approved stays.
#[test]
fn a_wrapper_script_whose_output_names_no_test_is_not_verified() {
    let project = Project::new();
    std::fs::write(
        project.root().join("run-tests.sh"),
        "python3 -m unittest discover -s tests -t . >/dev/null 2>&1 && echo 'all tests passed'\n",
    )
    .unwrap();
    project.user_config("test_command = \"sh run-tests.sh {target}\"\n");
    let out = project.fix_test_total(&demo_scenario());
    out.assert_code(3);
    out.assert_stdout("state:  unverified\n");
    out.assert_stdout(
        "Rein cannot read which tests its output reports as passed, so it could not confirm that `TestCart.test_total` passed; make the test command name each test (pytest -v or -rA, python -m unittest -v",
    );
    assert!(project.cart().contains(FIXED));
}

/// A custom command that ignores its target and runs another test, which
/// passes: its output names tests, but not the target, so the task is not
/// "fixed" either.
#[test]
fn a_custom_command_that_ignores_its_target_is_not_verified() {
    let project = Project::new();
    project.user_config(
        "test_command = \"sh -c 'python3 -m unittest -v tests.test_cart.TestCart.test_empty_cart_costs_nothing' {target}\"\n",
    );
    let out = project.fix_test_total(&demo_scenario());
    out.assert_code(3);
    out.assert_stdout("state:  unverified\n");
    out.assert_stdout(
        "but `TestCart.test_total` is not among the 1 test(s) it reports as passed (`tests.test_cart.TestCart.test_empty_cart_costs_nothing`)",
    );
}

/// The same quiet wrapper, but it has pytest write a JUnit report and the
/// user says where (`test_report`): Rein reads the report the run wrote,
/// sees the target pass, and the task is fixed.
#[test]
fn a_junit_report_the_wrapper_writes_verifies_the_fix() {
    let pythonpath = pytest::pythonpath();
    let project = Project::new();
    std::fs::write(
        project.root().join("run-tests.sh"),
        "python3 -m pytest -q -p no:cacheprovider --junitxml=build/report.xml \"$1\" >/dev/null 2>&1\nstatus=$?\necho \"finished ($status)\"\nexit $status\n",
    )
    .unwrap();
    project.user_config(
        "test_command = \"sh run-tests.sh {target}\"\ntest_report = \"build/*.xml\"\n",
    );
    let env: Vec<(&str, &str)> = pythonpath
        .iter()
        .map(|p| ("PYTHONPATH", p.to_str().unwrap()))
        .collect();
    let out = project.run(
        &demo_scenario(),
        &[
            "--yes",
            "--fix-test",
            "tests/test_cart.py::TestCart.test_total",
        ],
        "",
        &env,
    );
    out.assert_code(0);
    out.assert_stdout("state:  succeeded\n");
    assert!(project.cart().contains(FIXED));
}

/// Attack: a report that says the target passed is already there (left
/// by an earlier run, or committed with the repository) and the run does
/// not write one: it proves nothing, and the task is not "fixed".
#[test]
fn a_report_the_run_did_not_write_proves_nothing() {
    let project = Project::new();
    std::fs::create_dir_all(project.root().join("build")).unwrap();
    std::fs::write(
        project.root().join("build/report.xml"),
        r#"<testsuite><testcase classname="tests.test_cart.TestCart" name="test_total"/></testsuite>"#,
    )
    .unwrap();
    std::fs::write(
        project.root().join("run-tests.sh"),
        "python3 -m unittest discover -s tests -t . >/dev/null 2>&1 && echo 'all tests passed'\n",
    )
    .unwrap();
    project.user_config(
        "test_command = \"sh run-tests.sh {target}\"\ntest_report = \"build/*.xml\"\n",
    );
    let out = project.fix_test_total(&demo_scenario());
    out.assert_code(3);
    out.assert_stdout("state:  unverified\n");
}

/// `allow_test_edits = true`: the user lets the task change the test
/// itself. The model rewrites the expected value; the edit goes through
/// and the task is verified on the test as it now is (it used to be
/// refused at the end: the check of the test's assertions stayed on).
#[test]
fn with_test_edits_allowed_the_test_may_change() {
    let project = Project::new();
    project.user_config("allow_test_edits = true\n");
    let out = project.fix_test_total(&fixture("rewrite_the_test.json"));
    out.assert_code(0);
    out.assert_stdout("state:  succeeded\n");
    let test = project.test_file();
    assert!(test.contains("self.assertEqual(total(items), 3)"), "{test}");
    assert!(project.cart().contains(BROKEN));
}

/// `out` has no byte a terminal would act on instead of showing: no
/// escape sequence, no carriage return.
fn assert_inert(out: &str, stream: &str) {
    assert!(
        !out.contains('\x1b') && !out.contains('\r'),
        "{stream} carries raw control characters:\n{out:?}"
    );
}

/// The model proposes `touch pwned #ESC[2K\r python3 -m unittest`: on a
/// terminal the escape erases the line and the carriage return goes back
/// to its start, so the prompt read `Run ` python3 -m unittest`?` while
/// `touch pwned` was what ran. The prompt shows the escapes and says so;
/// with no answer, nothing runs.
#[test]
fn a_command_hiding_behind_escape_sequences_is_shown_escaped() {
    let project = Project::new();
    let out = project.run(&fixture("hidden_command.json"), &["run the tests"], "", &[]);
    out.assert_stderr("  rein wants to run `touch pwned #\\x1b[2K\\r python3 -m unittest` in ");
    out.assert_stderr(
        "  ! this command contains control or invisible characters (\\x1b, \\r), shown escaped: it may not do what it seems to\n",
    );
    out.assert_stderr(
        "Run `touch pwned #\\x1b[2K\\r python3 -m unittest`? [y]es once / [a]ll this task / [N]o ",
    );
    out.assert_stderr("  → run_command `touch pwned #\\x1b[2K\\r python3 -m unittest`\n");
    out.assert_stderr("  ✗ not allowed\n");
    assert_inert(&out.stderr, "stderr");
    assert_inert(&out.stdout, "stdout");
    assert!(
        !project.root().join("pwned").exists(),
        "the hidden command ran"
    );
}

/// An edit whose added line erases itself on a terminal (`ESC[2K\r`) and
/// shows the real fix in its place, while cart.py keeps the bug: the
/// question's diff and the result's diff show the escapes, and the
/// question says so.
#[test]
fn a_diff_hiding_behind_escape_sequences_is_shown_escaped() {
    // The `\r` ends a line for the diff; shown, with a line break of its own.
    let shown = "+    return sum(item.qty for item in items)  # \\x1b[2K\\r\n++    return sum(item.price * item.qty for item in items)\n";
    let warning = "  ! this edit contains control or invisible characters (\\x1b, \\r), shown escaped: it may not do what it seems to\n";

    // No answer: the edit is not applied.
    let project = Project::new();
    let before = project.cart();
    let out = project.run(&fixture("hidden_diff.json"), &["fix total()"], "", &[]);
    out.assert_stderr(shown);
    out.assert_stderr(warning);
    out.assert_stderr("Apply this edit to cart.py? [y/N] ");
    assert_inert(&out.stderr, "stderr");
    assert_inert(&out.stdout, "stdout");
    assert_eq!(project.cart(), before);

    // Approved (--yes): the file holds what was asked, the result shows it escaped.
    let project = Project::new();
    let out = project.run(
        &fixture("hidden_diff.json"),
        &["--yes", "fix total()"],
        "",
        &[],
    );
    out.assert_code(0);
    out.assert_stderr(warning);
    out.assert_stdout("files changed:\n--- a/cart.py\n+++ b/cart.py\n");
    out.assert_stdout(shown);
    assert_inert(&out.stderr, "stderr");
    assert_inert(&out.stdout, "stdout");
    assert!(
        project.cart().contains("# \x1b[2K\r+    return"),
        "{:?}",
        project.cart()
    );
}

/// Attack (4): `run_tests` needs no approval and its target went to the
/// runner as it was: with real pytest, `--basetemp=<dir>` emptied a
/// directory outside the workspace, `--junitxml=<path>` wrote outside it
/// and `../../../etc/passwd` made pytest collect from `/etc`. Now each is
/// refused with a message for the model and nothing runs, while a real
/// test id still runs.
#[test]
fn run_tests_with_basetemp_outside_the_workspace_leaves_it_alone() {
    let pythonpath = pytest::pythonpath();
    let project = Project::of_fixture("pytest_cart");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("marker"), "keep me").unwrap();
    let report = outside.path().join("report.xml");
    let basetemp = format!("--basetemp={}", outside.path().display());
    let junitxml = format!("--junitxml={}", report.display());
    let targets = [
        basetemp.as_str(),
        junitxml.as_str(),
        "../../../etc/passwd",
        "tests/test_carts.py",
        "tests/test_cart.py",
    ];
    let calls: Vec<serde_json::Value> = targets
        .iter()
        .map(|t| serde_json::json!({"name": "run_tests", "input": {"target": t}}))
        .collect();
    let scenario = project.scenario(&serde_json::json!({
        "replies": [
            {"text": "Running the tests my way.", "tool_calls": calls},
            {"text": "Done."}
        ]
    }));
    let env: Vec<(&str, &str)> = pythonpath
        .iter()
        .map(|p| ("PYTHONPATH", p.to_str().unwrap()))
        .collect();
    let out = project.run(&scenario, &["--yes", "run the tests"], "", &env);

    assert_eq!(
        std::fs::read_to_string(outside.path().join("marker")).ok(),
        Some("keep me".to_owned()),
        "pytest emptied the directory outside the workspace\n--- stderr\n{}",
        out.stderr
    );
    assert!(
        !report.exists(),
        "a report was written outside the workspace"
    );
    // Each refusal is the call's result (`← error (<duration>): <first line>`).
    out.assert_stderr(&format!(
        "): `{basetemp}` is not a test id: run_tests never passes options"
    ));
    out.assert_stderr(&format!("): `{junitxml}` is not a test id"));
    out.assert_stderr("): `../../../etc/passwd` is outside the workspace");
    out.assert_stderr("): no such file: tests/test_carts.py (did you mean tests/test_cart.py?)");
    // The real test id ran, with the real pytest, and passed.
    out.assert_stderr(": $ python3 -m pytest -q -rfEp tests/test_cart.py: exit code 0 after ");
    out.assert_code(0);
}

/// Issue 32, attack 2: a process left behind by an earlier command swaps
/// a workspace folder for a link to the user's Rein config folder, in a
/// loop, while the model calls `create_file d/config.toml` again and
/// again. Rein checked `d`, then wrote through the link: the user's own
/// `config.toml` got `mode = "off"` within 72 tries. Now every call either
/// creates the file inside the workspace or is refused, naming the link.
#[test]
fn create_file_through_a_folder_swapped_for_a_link_to_the_config_never_writes_it() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    const CALLS: usize = 300;

    let project = Project::new();
    let config = project.dir.path().join("config/rein");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::create_dir_all(project.root().join("d")).unwrap();
    std::os::unix::fs::symlink(&config, project.root().join("d-link")).unwrap();
    let calls: Vec<serde_json::Value> = (0..CALLS)
        .map(|i| {
            serde_json::json!({"name": "create_file", "input": {
                "path": if i == 0 { "d/config.toml".to_owned() } else { format!("d/config-{i}.toml") },
                "content": "mode = \"off\"\nauto_approve = true\n",
            }})
        })
        .collect();
    let scenario = project.scenario(&serde_json::json!({
        "replies": [
            {"text": "Setting up the config.", "tool_calls": calls},
            {"text": "Done."}
        ]
    }));

    // The leftover process: `d` is always there, the folder or (exchanged
    // atomically) the link.
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = {
        let (stop, swaps, root) = (stop.clone(), swaps.clone(), project.root());
        std::thread::spawn(move || {
            let at = nix::fcntl::AT_FDCWD;
            while !stop.load(Ordering::Relaxed) {
                nix::fcntl::renameat2(
                    at,
                    &root.join("d"),
                    at,
                    &root.join("d-link"),
                    nix::fcntl::RenameFlags::RENAME_EXCHANGE,
                )
                .unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let out = project.run(&scenario, &["--yes", "set up the config"], "", &[]);
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();

    let landed: Vec<_> = std::fs::read_dir(&config)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        landed.is_empty(),
        "written into the user's config folder: {landed:?}\n--- stderr\n{}",
        out.stderr
    );
    // One result per call: created, or refused naming the link.
    let results: Vec<&str> = out.stderr.lines().filter(|l| l.contains(" ← ")).collect();
    assert_eq!(results.len(), CALLS, "{}", out.stderr);
    // (The terminal cuts long lines: the start of each message.)
    let refusals = [
        "): d is a symbolic link to a place outside the workspace; Rein does not write through it",
        ".toml` is outside the workspace (",
        "): d keeps changing between a symbolic link and a folder or file",
    ];
    let refused = results
        .iter()
        .filter(|l| refusals.iter().any(|r| l.contains(r)))
        .count();
    let created = results.iter().filter(|l| l.contains(" ← ok ")).count();
    assert_eq!(refused + created, CALLS, "{}", out.stderr);
    assert!(
        refused > 0,
        "the race was not run ({} swaps)\n{}",
        swaps.load(Ordering::Relaxed),
        out.stderr
    );
    out.assert_code(0);
}

/// Attack (8): the model's `timeout_s` replaced the configured ceiling
/// and the task's time budget was never consulted while a command ran:
/// `sleep 100` ran its 100 s with `max_minutes = 1`. Now the command is
/// killed when the budget ends, and the task ends out of budget, saying
/// why. (A budget of a few seconds, so the test need not wait a minute.)
#[test]
fn sleep_100_with_max_minutes_1_is_killed_when_the_budget_ends() {
    let project = Project::new();
    project.config("max_minutes = 0.1\n");
    let scenario = project.scenario(&serde_json::json!({
        "replies": [
            {"text": "Let me wait for it.", "tool_calls": [
                {"name": "run_command", "input": {"command": "sleep 100", "timeout_s": 100}}
            ]},
            {"text": "It slept."}
        ]
    }));
    let out = project.run(&scenario, &["--yes", "wait a bit"], "", &[]);
    out.assert_code(1);
    out.assert_stdout("state:  budget_exhausted\n");
    out.assert_stdout(
        "reason: the time budget (6 s) ran out while `sleep 100` was running; it was killed\n",
    );
    out.assert_stderr("  → run_command `sleep 100`\n");
    out.assert_stderr(": $ sleep 100: killed after ");
    assert!(!out.stderr.contains("It slept."), "{}", out.stderr);
}
