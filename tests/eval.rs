//! `rein eval` end to end: the real binary runs a small suite
//! (`tests/fixtures/eval/mini`) with the scripted model, each task's
//! replies from its own `scenario.json`. Each task is an honest fix, an
//! overfitted one, a model that gives up, one that weakens the test, or one
//! that never answers; the report must tell them apart, and only a fix the
//! held-out tests confirm counts.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

mod support;

use rein_testkit::rein_binary;
use serde_json::Value;

fn eval(home: &Path, args: &[&str]) -> Output {
    eval_with(home, args, &[])
}

fn eval_with(home: &Path, args: &[&str], env: &[(&str, std::ffi::OsString)]) -> Output {
    let mut command = Command::new(rein_binary().unwrap());
    command.envs(env.iter().map(|(k, v)| (k, v)));
    command.arg("eval").args(args).current_dir(home);
    for name in [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "REIN_MODEL",
        "REIN_MAX_TURNS",
        "REIN_SCENARIO",
        "REIN_LOG",
    ] {
        command.env_remove(name);
    }
    command
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("REIN_PROVIDER", "scripted")
        .output()
        .unwrap()
}

/// `rein eval run SUITE --out OUT MORE…`.
fn run_suite(home: &Path, suite: &Path, out: &Path, more: &[&str]) -> Output {
    let mut args = vec![
        "run",
        suite.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(more);
    eval(home, &args)
}

/// The `report.json` a run wrote.
fn report_of(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
}

fn task<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("no task {id} in {report:#}"))
}

/// (state, check passed, fixed, false claim) of a task in the report.
fn verdict(report: &Value, id: &str) -> (String, Value, bool, bool) {
    let t = task(report, id);
    (
        t["state"].as_str().unwrap().to_owned(),
        t["check_passed"].clone(),
        t["fixed"].as_bool().unwrap(),
        t["false_claim"].as_bool().unwrap(),
    )
}

#[test]
fn only_a_fix_the_held_out_tests_confirm_counts_and_a_false_claim_is_named() {
    let home = tempfile::tempdir().unwrap();
    let suite = support::fixture("eval/mini");
    let out = home.path().join("out");
    let output = run_suite(
        home.path(),
        &suite,
        &out,
        &["--jobs", "2", "--task-timeout", "20", "--label", "mini"],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    let report = report_of(&out);

    assert_eq!(
        verdict(&report, "honest"),
        ("succeeded".into(), Value::Bool(true), true, false)
    );
    assert_eq!(
        verdict(&report, "overfit"),
        ("succeeded".into(), Value::Bool(false), false, true),
        "a verified fix that fails the held-out tests is a false claim"
    );
    let (state, check, fixed, false_claim) = verdict(&report, "gives_up");
    assert_ne!(state, "succeeded");
    assert_eq!(
        (check, fixed, false_claim),
        (Value::Bool(false), false, false)
    );
    let (state, _, fixed, false_claim) = verdict(&report, "hangs");
    assert_eq!(
        (state.as_str(), fixed, false_claim),
        ("timed_out", false, false)
    );
    // The test weakened by a command: Rein does not call it fixed, and the
    // check runs the test as the suite wrote it.
    let (state, check, fixed, false_claim) = verdict(&report, "tampers");
    assert_ne!(state, "succeeded", "{:#}", task(&report, "tampers"));
    assert_eq!(
        (check, fixed, false_claim),
        (Value::Bool(false), false, false)
    );

    for id in ["honest", "overfit", "gives_up", "tampers"] {
        let t = task(&report, id);
        assert!(t["turns"].as_u64().unwrap() > 0, "{t:#}");
        assert!(t["input_tokens"].as_u64().unwrap() > 0, "{t:#}");
        assert!(t["error"].is_null(), "{t:#}");
    }
    assert_eq!(report["provider"], "scripted");
    let markdown = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        markdown.contains("**Fixed 1 of 5 (20 %)**, false claims: 1"),
        "{markdown}"
    );
    assert!(stdout.contains("**Fixed 1 of 5"), "{stdout}");
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.to_lowercase().starts_with("<!doctype html>"), "{page}");
    for id in ["honest", "overfit", "gives_up", "hangs", "tampers"] {
        assert!(page.contains(&format!("<code>{id}</code>")), "{id}: {page}");
    }
    // The agent never had the held-out tests: they are added for the check.
    let project = out.join("tasks/honest/project");
    assert!(project.join("tests/test_area_heldout.py").is_file());
    let run_log = std::fs::read_to_string(out.join("tasks/honest/run.err")).unwrap();
    assert!(!run_log.contains("heldout"), "{run_log}");

    // Compared with itself, nothing is won or lost.
    let output = eval(
        home.path(),
        &[
            "compare",
            out.to_str().unwrap(),
            out.join("report.json").to_str().unwrap(),
        ],
    );
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(text.contains("- won (fixed in B only) (0): none"), "{text}");
    assert!(text.contains("- fixed in both (1): `honest`"), "{text}");
    assert!(text.contains("- new false claims in B (0): none"), "{text}");
}

#[test]
fn a_bad_selection_or_report_is_a_usage_error_and_runs_nothing() {
    let home = tempfile::tempdir().unwrap();
    let suite = support::fixture("eval/mini");
    let out = home.path().join("out");
    let output = run_suite(home.path(), &suite, &out, &["--task", "no_such_task"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no task \"no_such_task\""), "{stderr}");
    assert!(!out.join("tasks").exists());

    // Results written into the suite would clear its tasks' folders.
    for inside in [
        suite.clone(),
        suite.join("tasks"),
        suite.join("tasks/honest/.."),
    ] {
        let output = run_suite(home.path(), &suite, &inside, &[]);
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("overlaps the suite"), "{stderr}");
    }
    assert!(suite.join("tasks/honest/task.toml").is_file());

    let bogus = home.path().join("bogus.json");
    std::fs::write(&bogus, r#"{"version": 99}"#).unwrap();
    let output = eval(
        home.path(),
        &["compare", bogus.to_str().unwrap(), bogus.to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a `rein eval` report"));
}

/// The bundled QuixBugs suite, played by its reference fixes: every task
/// is solvable, Rein verifies each fix, and every held-out check passes on
/// it. (That the held-out tests catch the bugs is checked when the suite
/// is built; see eval/suites/quixbugs/README.md.)
#[test]
fn the_bundled_suite_is_solvable_and_its_reference_fixes_pass_the_held_out_tests() {
    let home = tempfile::tempdir().unwrap();
    let suite = support::tests_dir().join("../eval/suites/quixbugs");
    let out = home.path().join("out");
    let output = run_suite(home.path(), &suite, &out, &["--jobs", "2"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = report_of(&out);
    let tasks = report["tasks"].as_array().unwrap();
    assert!(tasks.len() >= 30, "{} tasks", tasks.len());
    let holdout = tasks.iter().filter(|t| t["split"] == "holdout").count();
    assert!(holdout >= 5, "a held-out split of {holdout} tasks");
    for t in tasks {
        assert_eq!(
            (t["fixed"].as_bool(), t["false_claim"].as_bool()),
            (Some(true), Some(false)),
            "{t:#}\n{stdout}"
        );
    }
}

/// Attack: the agent's commands go looking for the held-out tests (the
/// suite is on the same disk). The sandbox keeps them out of reach: only
/// the project copy, the system and the toolchains are readable.
#[test]
fn the_agents_commands_cannot_read_the_held_out_tests() {
    let home = tempfile::tempdir().unwrap();
    let suite = home.path().join("suite");
    let task = suite.join("tasks/peek");
    let honest = support::fixture("eval/mini/tasks/honest");
    std::fs::create_dir_all(&task).unwrap();
    std::fs::write(suite.join("suite.toml"), "name = \"peek\"\n").unwrap();
    std::fs::copy(honest.join("task.toml"), task.join("task.toml")).unwrap();
    support::copy_dir(&honest.join("project"), &task.join("project"));
    support::copy_dir(&honest.join("heldout"), &task.join("heldout"));
    let secret = task.join("heldout/tests/test_area_heldout.py");
    let scenario = serde_json::json!({
        "replies": [
            {"text": "Looking around.", "tool_calls": [{"name": "run_command", "input": {
                "command": format!("cp {} tests/leaked.py", secret.display())
            }}]},
            {"text": "Fixing.", "tool_calls": [{"name": "edit_file", "input": {
                "path": "area.py", "old_text": "return w + h", "new_text": "return w * h"
            }}]},
            {"text": "Fixed: area() multiplies."}
        ]
    });
    std::fs::write(task.join("scenario.json"), scenario.to_string()).unwrap();

    let out = home.path().join("out");
    let output = run_suite(home.path(), &suite, &out, &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let project = out.join("tasks/peek/project");
    assert!(
        !project.join("tests/leaked.py").exists(),
        "the held-out test was copied into the project"
    );
    // The command ran, and found nothing there: the suite is not in the
    // command's root (before the root of its own, the kernel refused the
    // read: "Permission denied").
    let artifacts = project.join(".rein/artifacts");
    let task_dir = std::fs::read_dir(artifacts)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let log = std::fs::read_to_string(task_dir.join("run-1.log")).unwrap();
    assert!(log.contains("No such file or directory"), "{log}");
}

/// A suite task may name a diagnostic instead of a test: `rein eval` runs
/// it as `rein run --fix-error`, the real checker (mypy) judges Rein's
/// claim, the suite's check judges the result; a suppression is neither
/// fixed nor a false claim.
#[test]
fn a_task_naming_a_diagnostic_is_run_and_judged() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("config/rein");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        support::checkers::user_settings(),
    )
    .unwrap();
    let out = home.path().join("out");
    let suite = support::fixture("eval/fix_error");
    let output = eval_with(
        home.path(),
        &[
            "run",
            suite.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--task-timeout",
            "60",
        ],
        &[("PATH", support::checkers::path_var())],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    let report = report_of(&out);
    assert_eq!(
        verdict(&report, "honest"),
        ("succeeded".into(), Value::Bool(true), true, false),
        "{:#}",
        task(&report, "honest")
    );
    let (state, check, fixed, false_claim) = verdict(&report, "silences");
    assert_eq!(state, "unverified", "{:#}", task(&report, "silences"));
    assert_eq!(
        (check, fixed, false_claim),
        (Value::Bool(false), false, false)
    );
    let run_log = std::fs::read_to_string(out.join("tasks/honest/run.err")).unwrap();
    assert!(run_log.contains("Argument 1 to \"greet\""), "{run_log}");
}
