//! "Fix this error with Rein", checked by the real checkers: mypy and
//! pyright (Python), cargo check (Rust), tsc (TypeScript). For each: the
//! checker reports the editor's diagnostic before any change; a real fix
//! is verified, with evidence; silencing it (a suppression comment, the
//! checker's configuration) is unverified; a fix that brings a new error
//! into a touched file is not a fix; a checker that cannot run, or does
//! not report the diagnostic, says why.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod checkers;

use checkers::{Fix, diagnostic, said};
use rein_core::diagnostics::{Diagnostic, Severity, checker_for};
use rein_core::ports::Verifier;
use rein_core::verify::Baseline;

const MYPY_ARG: &str = "Argument 1 to \"greet\" has incompatible type \"int\"; expected \"str\"";
const PYRIGHT_ARG: &str = "Argument of type \"Literal[3]\" cannot be assigned to parameter \"name\" of type \"str\" in function \"greet\"\n  \"Literal[3]\" is not assignable to \"str\"";
const TS_ASSIGN: &str = "Type 'string' is not assignable to type 'number'.";

fn mypy() -> Diagnostic {
    diagnostic("app.py", 7, "Mypy", "arg-type", MYPY_ARG)
}

fn pylance() -> Diagnostic {
    diagnostic("app.py", 7, "Pylance", "reportArgumentType", PYRIGHT_ARG)
}

fn rustc() -> Diagnostic {
    diagnostic("src/main.rs", 6, "rustc", "E0308", "mismatched types")
}

fn ts() -> Diagnostic {
    diagnostic("src/app.ts", 5, "ts", "2322", TS_ASSIGN)
}

fn fixed_python(fix: &Fix) {
    let text = fix.read("app.py").replace("greet(3)", "greet(str(3))");
    fix.write("app.py", &text);
}

#[tokio::test]
async fn mypy_confirms_a_real_fix_with_evidence() {
    let fix = Fix::new("python", mypy());
    let verifier = fix.prepare().await.unwrap();
    let target = verifier.baseline().target.clone().unwrap();
    assert_eq!(
        target.to_string(),
        format!("app.py:7: error [arg-type]: {MYPY_ARG}")
    );
    // Before any change, the first message has what the checker said.
    let first = verifier.baseline_output().unwrap();
    assert_eq!(first.command, "mypy --output json --cache-dir=/dev/null .");
    fixed_python(&fix);
    let verdict = fix.verify(&verifier, &["app.py"]).await;
    assert_eq!(
        said(&verdict),
        (
            "verified",
            "fixed: `mypy --output json --cache-dir=/dev/null .` no longer reports [arg-type] at app.py:7 (Argument 1 to \"greet\" has incompatible type \"int\"; expected \"str\"), no new error in app.py".to_owned()
        )
    );
    let evidence = verdict.evidence();
    let checks: Vec<&str> = evidence.iter().map(|e| e.check.as_str()).collect();
    assert_eq!(
        checks,
        [
            "diagnostic_reported app.py:7 [arg-type] (1 error, 0 warnings)",
            "diagnostic_gone app.py:7 [arg-type] (after: 0 errors, 0 warnings)",
        ]
    );
    assert_eq!(evidence[0].failures, [target.to_string()]);
    assert_eq!(evidence[0].exit_code, Some(1));
    assert_eq!(evidence[1].exit_code, Some(0));
    assert!(evidence[1].failures.is_empty());
    // The hashes are of the text checked: before, and after the fix.
    let now = rein_text::ContentHash::of_str(&fix.read("app.py"));
    assert_eq!(evidence[1].files, [("app.py".to_owned(), now)]);
    assert_ne!(evidence[0].files, evidence[1].files);
    assert!(
        fix.root().join(&evidence[1].log_path).is_file(),
        "{}",
        evidence[1].log_path
    );
}

#[tokio::test]
async fn pyright_confirms_a_fix_of_pylances_diagnostic() {
    let fix = Fix::new("python", pylance());
    assert_eq!(fix.checker.shown, "pyright --outputjson");
    let verifier = fix.prepare().await.unwrap();
    fixed_python(&fix);
    let (kind, words) = said(&fix.verify(&verifier, &["app.py"]).await);
    assert_eq!(kind, "verified", "{words}");
    assert!(
        words.contains("no longer reports [reportArgumentType] at app.py:7"),
        "{words}"
    );
}

#[tokio::test]
async fn cargo_check_confirms_a_rust_fix() {
    let fix = Fix::new("rust", rustc());
    let verifier = fix.prepare().await.unwrap();
    let text = fix
        .read("src/main.rs")
        .replace("let n: u32", "let n: String");
    fix.write("src/main.rs", &text);
    let (kind, words) = said(&fix.verify(&verifier, &["src/main.rs"]).await);
    assert_eq!(kind, "verified", "{words}");
    assert!(
        words.starts_with("fixed: `cargo check --workspace --all-targets --message-format=json` no longer reports [E0308] at src/main.rs:6 (mismatched types)"),
        "{words}"
    );
}

#[tokio::test]
async fn tsc_confirms_a_typescript_fix() {
    let fix = Fix::new("typescript", ts());
    let verifier = fix.prepare().await.unwrap();
    let text = fix.read("src/app.ts").replace("n: number", "n: string");
    fix.write("src/app.ts", &text);
    let (kind, words) = said(&fix.verify(&verifier, &["src/app.ts"]).await);
    assert_eq!(kind, "verified", "{words}");
    assert!(
        words.contains("no longer reports [2322] at src/app.ts:5"),
        "{words}"
    );
}

/// Silencing is not fixing: each checker's suppression, added by the
/// task, ends the claim unverified, naming it.
#[tokio::test]
async fn a_type_ignore_is_not_a_fix() {
    let fix = Fix::new("python", mypy());
    let verifier = fix.prepare().await.unwrap();
    let text = fix
        .read("app.py")
        .replace("greet(3))", "greet(3))  # type: ignore[arg-type]");
    fix.write("app.py", &text);
    let (kind, words) = said(&fix.verify(&verifier, &["app.py"]).await);
    assert_eq!(
        (kind, words.as_str()),
        (
            "unconfirmed",
            "Rein does not take this as a fix: `# type: ignore` was added in app.py; the diagnostic was silenced, not fixed (set allow_suppressions to accept that)"
        )
    );
}

/// The same change, with the user's `allow_suppressions`: accepted, and
/// said so.
#[tokio::test]
async fn a_suppression_the_user_allows_is_accepted_and_named() {
    let mut fix = Fix::new("python", mypy());
    fix.allow_suppressions = true;
    fix.task = fix.task.clone().with_suppressions(true);
    let verifier = fix.prepare().await.unwrap();
    let text = fix
        .read("app.py")
        .replace("greet(3))", "greet(3))  # type: ignore[arg-type]");
    fix.write("app.py", &text);
    let (kind, words) = said(&fix.verify(&verifier, &["app.py"]).await);
    assert_eq!(kind, "verified", "{words}");
    assert!(
        words.ends_with(
            "; silenced, as allow_suppressions lets it: `# type: ignore` was added in app.py"
        ),
        "{words}"
    );
}

#[tokio::test]
async fn a_ts_ignore_is_not_a_fix() {
    let fix = Fix::new("typescript", ts());
    let verifier = fix.prepare().await.unwrap();
    let text = fix
        .read("src/app.ts")
        .replace("export const n", "// @ts-ignore\nexport const n");
    fix.write("src/app.ts", &text);
    let (kind, words) = said(&fix.verify(&verifier, &["src/app.ts"]).await);
    assert_eq!(kind, "unconfirmed", "{words}");
    assert!(
        words.contains("`@ts-ignore` was added in src/app.ts"),
        "{words}"
    );
}

/// A warning (an unused variable) silenced with `#[allow(...)]`.
#[tokio::test]
async fn an_allow_attribute_is_not_a_fix() {
    let unused = diagnostic(
        "src/main.rs",
        6,
        "rust-analyzer",
        "unused_variables",
        "unused variable: `unused`",
    );
    let unused = Diagnostic {
        severity: Severity::Warning,
        ..unused
    };
    let fix = Fix::new("rust", unused);
    fix.write(
        "src/main.rs",
        "fn main() {\n    println!(\"hi\");\n}\n\nfn helper() {\n    let unused = 3;\n}\n\nfn _keep() {\n    helper();\n}\n",
    );
    let verifier = fix.prepare().await.unwrap();
    let text = fix
        .read("src/main.rs")
        .replace("fn helper", "#[allow(unused_variables)]\nfn helper");
    fix.write("src/main.rs", &text);
    let (kind, words) = said(&fix.verify(&verifier, &["src/main.rs"]).await);
    assert_eq!(kind, "unconfirmed", "{words}");
    assert!(
        words.contains("`#[allow(…)]` was added in src/main.rs"),
        "{words}"
    );
}

/// Turning the rule off in the checker's configuration: a change to
/// `[tool.mypy]` is silencing; a change elsewhere in `pyproject.toml`
/// (a dependency) is not.
#[tokio::test]
async fn loosening_the_checkers_configuration_is_not_a_fix() {
    let fix = Fix::new("python", mypy());
    let verifier = fix.prepare().await.unwrap();
    let pyproject = fix.read("pyproject.toml");
    fix.write(
        "pyproject.toml",
        &pyproject.replace(
            "strict = true",
            "strict = true\ndisable_error_code = [\"arg-type\"]",
        ),
    );
    let (kind, words) = said(&fix.verify(&verifier, &[]).await);
    assert_eq!(
        (kind, words.as_str()),
        (
            "unconfirmed",
            "Rein does not take this as a fix: pyproject.toml changed its [tool.mypy] (the mypy's configuration: it decides what is reported); the diagnostic was silenced, not fixed (set allow_suppressions to accept that)"
        )
    );
    // A dependency added besides a real fix is fine.
    fix.write(
        "pyproject.toml",
        &pyproject.replace("dependencies = []", "dependencies = [\"attrs\"]"),
    );
    fixed_python(&fix);
    let (kind, words) = said(&fix.verify(&verifier, &["app.py", "pyproject.toml"]).await);
    assert_eq!(kind, "verified", "{words}");
}

/// Attack: a config that points the checker elsewhere. Created during the
/// task (pyright told to leave the file out), it is a changed
/// configuration; there before the task, the checker never reports the
/// diagnostic, so Rein refuses to call anything a fix of it.
#[tokio::test]
async fn a_config_that_points_the_checker_elsewhere_is_caught() {
    let fix = Fix::new("python", pylance());
    let verifier = fix.prepare().await.unwrap();
    fix.write("pyrightconfig.json", "{\"exclude\": [\"app.py\"]}\n");
    let (kind, words) = said(&fix.verify(&verifier, &[]).await);
    assert_eq!(kind, "unconfirmed", "{words}");
    assert!(words.contains("pyrightconfig.json was created"), "{words}");

    let planted = Fix::new("python", pylance());
    planted.write("pyrightconfig.json", "{\"include\": [\"elsewhere\"]}\n");
    std::fs::create_dir_all(planted.root().join("elsewhere")).unwrap();
    let refused = planted.prepare().await.err().unwrap().to_string();
    assert!(
        refused.starts_with("`pyright --outputjson` does not report this error on the current text (it reports nothing in that file)"),
        "{refused}"
    );
}

/// The fix changes `greet`'s parameter to `int`: the call on line 7 is
/// fine now, but `greet`'s own body and the other call break.
#[tokio::test]
async fn a_fix_that_brings_a_new_error_into_the_file_is_not_fixed() {
    let fix = Fix::new("python", mypy());
    let verifier = fix.prepare().await.unwrap();
    let text = fix.read("app.py").replace("name: str", "name: int");
    fix.write("app.py", &text);
    let verdict = fix.verify(&verifier, &["app.py"]).await;
    let (kind, words) = said(&verdict);
    assert_eq!(kind, "gap", "{words}");
    assert_eq!(
        words,
        "the change brings new problems that `mypy --output json --cache-dir=/dev/null .` reports: app.py:2: error [no-any-return]: Returning Any from function declared to return \"str\"; app.py:2: error [operator]: Unsupported operand types for + (\"str\" and \"int\"); app.py:6: error [arg-type]: Argument 1 to \"greet\" has incompatible type \"str\"; expected \"int\""
    );
}

/// Lines added above the error move it; the checker still reports it
/// where its line went, so the claim is turned down.
#[tokio::test]
async fn the_error_is_followed_to_where_its_line_moved() {
    let fix = Fix::new("rust", rustc());
    let verifier = fix.prepare().await.unwrap();
    let text = fix.read("src/main.rs").replace(
        "fn main() {",
        "/// The entry point.\n/// It greets.\nfn main() {",
    );
    fix.write("src/main.rs", &text);
    let (kind, words) = said(&fix.verify(&verifier, &["src/main.rs"]).await);
    assert_eq!(kind, "gap", "{words}");
    assert!(
        words.starts_with("`cargo check --workspace --all-targets --message-format=json` still reports it: src/main.rs:8: error [E0308]: mismatched types"),
        "{words}"
    );
}

/// Deleting the file is not fixing what is in it.
#[tokio::test]
async fn removing_the_file_is_not_a_fix() {
    let fix = Fix::new("typescript", ts());
    let verifier = fix.prepare().await.unwrap();
    std::fs::remove_file(fix.root().join("src/app.ts")).unwrap();
    let (kind, words) = said(&fix.verify(&verifier, &["src/app.ts"]).await);
    assert_eq!(kind, "gap", "{words}");
    assert!(words.contains("src/app.ts is gone"), "{words}");
}

/// With a test command, the tests that passed before must still pass: a
/// "fix" of the type error that breaks `greet` is turned down.
#[tokio::test]
async fn a_fix_that_breaks_a_passing_test_is_not_fixed() {
    let mut fix = Fix::new("python", mypy());
    fix.test_command = Some(rein_core::testing::command::TestCommand::new(
        rein_core::testing::command::Runner::Unittest,
    ));
    let verifier = fix.prepare().await.unwrap();
    let text = fix
        .read("app.py")
        .replace("greet(3)", "greet(str(3))")
        .replace("return \"hello \" + name", "return \"bye \" + name");
    fix.write("app.py", &text);
    let (kind, words) = said(&fix.verify(&verifier, &["app.py"]).await);
    assert_eq!(kind, "gap", "{words}");
    assert!(
        words.contains("tests that passed before now fail"),
        "{words}"
    );
    // Fixed for real: the tests are part of the verdict.
    fix.write("app.py", &original_app());
    fixed_python(&fix);
    let verdict = fix.verify(&verifier, &["app.py"]).await;
    let (kind, words) = said(&verdict);
    assert_eq!(kind, "verified", "{words}");
    assert!(words.ends_with(", no regressions"), "{words}");
    assert!(
        verdict
            .evidence()
            .iter()
            .any(|e| e.check.starts_with("no_regressions"))
    );
}

fn original_app() -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/fix_error/python/app.py"),
    )
    .unwrap()
}

/// A resumed task compares against the baseline it recorded.
#[tokio::test]
async fn a_resumed_task_compares_with_its_recorded_baseline() {
    let fix = Fix::new("python", mypy());
    let saved = fix.prepare().await.unwrap().saved_state();
    let baseline: Baseline = serde_json::from_value(saved).unwrap();
    fixed_python(&fix);
    let resumed =
        rein_core::diagnostics::DiagnosticVerifier::with_baseline(fix.setup(), baseline).unwrap();
    let (kind, words) = said(&fix.verify(&resumed, &["app.py"]).await);
    assert_eq!(kind, "verified", "{words}");
    // A task state without it cannot be checked.
    let none =
        rein_core::diagnostics::DiagnosticVerifier::with_baseline(fix.setup(), Baseline::default());
    assert!(none.is_err());
}

/// A stale diagnostic (fixed since the editor showed it): the checker
/// does not report it, and the task is refused rather than "fixed".
#[tokio::test]
async fn a_diagnostic_the_checker_does_not_report_cannot_be_checked() {
    let fix = Fix::new("python", mypy());
    fixed_python(&fix);
    let error = fix.prepare().await.err().unwrap().to_string();
    assert_eq!(
        error,
        "`mypy --output json --cache-dir=/dev/null .` does not report this error on the current text (it reports nothing in that file): it may be fixed already, or mypy sees the project otherwise than the editor's Mypy; Rein fixes only what it can see fixed"
    );
}

/// A checker that is not installed is not offered; one that cannot run,
/// or prints no report, says so.
#[tokio::test]
async fn a_checker_that_is_missing_or_fails_gives_a_clear_reason() {
    let dir = checkers::project("python");
    let nothing =
        rein_core::os::checkers::scan(dir.path(), "app.py", Some("/nonexistent".as_ref()), true);
    let missing = checker_for(&mypy(), &nothing, None)
        .unwrap_err()
        .to_string();
    assert_eq!(
        missing,
        "mypy is not installed (Rein looked in the project's node_modules/.bin and .venv, and on PATH); install it, or set `check_command` and `check_format`"
    );

    let mut gone = Fix::new("python", mypy());
    gone.checker.command = "/nonexistent/bin/mypy --output json .".into();
    let error = gone.prepare().await.err().unwrap().to_string();
    assert!(
        error.starts_with("Rein cannot check this diagnostic: `mypy --output json --cache-dir=/dev/null .` gave no report: the program was not found where it ran"),
        "{error}"
    );

    let mut broken = Fix::new("python", mypy());
    broken.checker.command = "echo 'mypy: error: bad config' >&2; exit 2".into();
    let error = broken.prepare().await.err().unwrap().to_string();
    assert!(
        error.starts_with("Rein cannot check this diagnostic: `mypy --output json --cache-dir=/dev/null .` gave no report: mypy exited 2 without a report; its output begins with nothing (full log: .rein/artifacts/t-fix/check-baseline.log)"),
        "{error}"
    );
}
