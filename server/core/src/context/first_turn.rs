//! The task's first message. For a fix-test task it carries what the
//! harness already knows, so the model starts from the bug: the failure as
//! the baseline run showed it (no need to run the test again), the test's
//! own source, and the code it exercises — found from the traceback's
//! frames and the test file's imports — within a token budget. Files shown
//! whole count as read (edits may be based on them at once); everything
//! shown is redacted and limited to files the policy lets the model read
//! without asking.
//!
//! Measured against Aider with a 1.5B local model: without this the model
//! re-ran the test, re-read the test file and never opened the file it had
//! to fix.

use std::fmt::Write;

use rein_models::Redactor;

use super::fit_tokens;
use super::history::fenced_block;
use crate::paths;
use crate::permissions::{Decision, Policy};
use crate::ports::BaselineOutput;
use crate::task::{Acceptance, TaskKind, TaskSpec};
use crate::testfind;
use crate::tools::read_file;
use crate::workspace::{ReadVersion, Workspace};

/// A file shown whole is at most this long; a longer one is excerpted
/// around the line the traceback names, or left for the model to read.
const WHOLE_FILE_LINES: usize = 300;
/// Lines of the baseline run's output shown.
const OUTPUT_LINES: usize = 40;
/// Lines either side of a traceback's line in an excerpt.
const EXCERPT_RADIUS: usize = 20;
/// Code files shown besides the test's.
const MAX_FILES: usize = 4;

/// The first message, and the files it showed whole (with the version
/// shown), which count as read.
pub struct FirstMessage {
    pub text: String,
    pub reads: Vec<(String, ReadVersion)>,
}

/// What the first message may use: where to read, what the model may
/// read, what it must never see, and how many tokens it may take.
pub struct Sources<'a> {
    pub workspace: &'a dyn Workspace,
    pub policy: &'a Policy,
    pub redactor: &'a Redactor,
    pub baseline: Option<&'a BaselineOutput>,
    pub budget_tokens: u64,
    /// The `whole` edit format: code shown as the model is to write it
    /// back (path, then a fenced block, no line numbers).
    pub whole_files: bool,
}

/// The naive loop's first message (`crate::harness`): the goal, and for a
/// fix-test task where the test is, nothing the harness already knows.
pub fn plain_message(task: &TaskSpec) -> String {
    match &task.kind {
        TaskKind::FixTest { path, name } => format!(
            "Fix the failing test `{name}` in `{path}`.\nRun it with run_tests to see how it fails.\n"
        ),
        TaskKind::FixDiagnostic { .. } => task.goal.clone(),
        _ => task.goal.clone(),
    }
}

pub async fn first_message(task: &TaskSpec, sources: &Sources<'_>) -> FirstMessage {
    if let TaskKind::FixDiagnostic { diagnostic } = &task.kind {
        return diagnostic_message(task, diagnostic, sources).await;
    }
    let TaskKind::FixTest { path, name } = &task.kind else {
        return FirstMessage {
            text: task.goal.clone(),
            reads: Vec::new(),
        };
    };
    let mut reads = Vec::new();
    let mut budget = Budget {
        left: sources.budget_tokens,
        redactor: sources.redactor,
    };
    // Spent in order of need (the failure, the test, the code); shown code
    // first: small models edit the first code they see, and the test is
    // the one file they must not change.
    let mut failure = String::new();
    match sources.baseline {
        Some(run) => budget.spend(&mut failure, &failure_block(run, sources.workspace.root())),
        None => failure.push_str("\nRun it with run_tests to see how it fails.\n"),
    }

    let mut test_block = String::new();
    let test_file = sources.workspace.read_file(path).await.ok();
    if let Some(file) = &test_file
        && readable(sources.policy, path)
    {
        let block =
            match testfind::lang_for_path(path).and_then(|l| testfind::find(&file.text, l, name)) {
                Some(test) => {
                    let lines: Vec<&str> = file.text.lines().collect();
                    let span = test.span.start..test.span.end.min(lines.len());
                    let shown = if sources.whole_files {
                        let mut text = lines[span.clone()].join("\n");
                        text.push('\n');
                        fenced("", &text)
                    } else {
                        format!("\n{}", numbered(&lines[span.clone()], span.start + 1))
                    };
                    let mut block = format!(
                        "\nThe test, {path} lines {}-{} ({}):{shown}",
                        span.start + 1,
                        span.end,
                        file.version.label(),
                    );
                    // The cases a table-driven test reads: which input
                    // failed is in them.
                    for data in super::test_data::definitions_used(&file.text, span.clone()) {
                        let lines = &lines[data.clone()];
                        let shown = if sources.whole_files {
                            let mut text = lines.join("\n");
                            text.push('\n');
                            fenced("", &text)
                        } else {
                            format!("\n{}", numbered(lines, data.start + 1))
                        };
                        block.push_str(&format!(
                            "\nWhat it reads, {path} lines {}-{}:{shown}",
                            data.start + 1,
                            data.end
                        ));
                    }
                    block
                }
                None => String::new(),
            };
        budget.spend(&mut test_block, &block);
    }

    let mut code = String::new();
    let mut shown: Vec<String> = Vec::new();
    for (candidate, line) in
        code_under_test(path, test_file.as_ref().map(|f| f.text.as_str()), sources)
    {
        // A small model rewrites whichever file it saw: show it one.
        let max_files = if sources.whole_files { 1 } else { MAX_FILES };
        if shown.len() == max_files || budget.left < 200 {
            break;
        }
        // Most candidates are guesses (an import's possible homes).
        if !sources.workspace.exists(&candidate).await {
            continue;
        }
        let Ok(file) = sources.workspace.read_file(&candidate).await else {
            continue;
        };
        let lines: Vec<&str> = file.text.lines().collect();
        let whole = lines.len() <= WHOLE_FILE_LINES;
        let block = if whole && sources.whole_files {
            fenced(&candidate, &file.text)
        } else if whole {
            format!(
                "\n{candidate} ({}), lines 1-{} of {}:\n{}",
                file.version.label(),
                lines.len(),
                lines.len(),
                numbered(&lines, 1)
            )
        } else if let Some(line) = line {
            let start = line.saturating_sub(EXCERPT_RADIUS + 1);
            let end = (line + EXCERPT_RADIUS).min(lines.len());
            format!(
                "\n{candidate} ({}), lines {}-{} of {} (read the rest with read_file):\n{}",
                file.version.label(),
                start + 1,
                end,
                lines.len(),
                numbered(&lines[start..end], start + 1)
            )
        } else {
            continue;
        };
        if rein_models::tokens::count_text(&block) > budget.left {
            continue;
        }
        // A file holding a secret is shown redacted: not the text an edit
        // would be based on.
        let clean = *sources.redactor.redact(&file.text) == *file.text;
        if whole && clean {
            reads.push((candidate.clone(), file.version.clone()));
        }
        budget.spend(&mut code, &block);
        shown.push(candidate);
    }

    let protected = task
        .acceptance
        .iter()
        .any(|a| matches!(a, Acceptance::AssertionsUnchanged { .. }));
    let mut out = format!("Fix the failing test `{name}` in `{path}`.");
    match (shown.first(), protected) {
        (Some(first), true) => out.push_str(&format!(
            " The test is right: fix the code it exercises, most likely `{first}`. Edits that change the test are refused.\n"
        )),
        (Some(first), false) => out.push_str(&format!(
            " Fix the code it exercises, most likely `{first}`.\n"
        )),
        (None, _) => out.push('\n'),
    }
    if !code.is_empty() {
        out.push_str(
            "\nThe code it exercises (from the failure's traceback and the test's imports):",
        );
        out.push_str(&code);
    }
    out.push_str(&failure);
    out.push_str(&test_block);
    if sources.whole_files {
        match shown.first() {
            // No example block: small models copy an example's placeholder
            // as the file.
            Some(file) => out.push_str(&format!(
                "\nFind the bug in the code under test. Reply with the fixed function whole: `{file}` alone on a line, then the complete fixed function in a fenced code block (only the function, not the rest of the file). Rein then runs the test."
            )),
            None => out.push_str(
                "\nRead the code under test with read_file, then reply with the fixed function whole: the file's path alone on a line, then the complete fixed function in a fenced code block (only the function, not the rest of the file). Rein then runs the test.",
            ),
        }
    } else {
        out.push_str(
            "\nFiles shown whole above count as read: edit them directly with edit_file (old_text is the file's text, without the line numbers). Find the bug in the code under test, fix it there, then run the test.",
        );
    }
    FirstMessage { text: out, reads }
}

/// A fix-diagnostic task's first message: the goal (the diagnostic
/// quoted), what the checker reported before any change (so the model
/// need not run it), and the file around the diagnostic — whole when
/// short, when it then counts as read.
async fn diagnostic_message(
    task: &TaskSpec,
    diagnostic: &crate::diagnostics::Diagnostic,
    sources: &Sources<'_>,
) -> FirstMessage {
    let mut budget = Budget {
        left: sources.budget_tokens,
        redactor: sources.redactor,
    };
    let mut out = String::new();
    budget.spend(&mut out, &task.goal);
    out.push('\n');
    if let Some(run) = sources.baseline {
        let mut block = format!(
            "\nRein ran the checker before you started, and it reports it:\n$ {}\n",
            run.command
        );
        for line in run.tail.iter().take(OUTPUT_LINES) {
            let _ = writeln!(block, "{line}");
        }
        if !run.log_path.is_empty() {
            let _ = writeln!(block, "full log: {}", run.log_path);
        }
        budget.spend(&mut out, &block);
    }
    let path = &diagnostic.path;
    let mut reads = Vec::new();
    if readable(sources.policy, path)
        && let Ok(file) = sources.workspace.read_file(path).await
    {
        let lines: Vec<&str> = file.text.lines().collect();
        let whole = lines.len() <= WHOLE_FILE_LINES;
        let line = diagnostic.line() as usize;
        let block = if whole && sources.whole_files {
            fenced(path, &file.text)
        } else if whole {
            format!(
                "\n{path} ({}), lines 1-{} of {}:\n{}",
                file.version.label(),
                lines.len(),
                lines.len(),
                numbered(&lines, 1)
            )
        } else {
            let start = line.saturating_sub(EXCERPT_RADIUS + 1).min(lines.len());
            let end = (line + EXCERPT_RADIUS).min(lines.len());
            format!(
                "\n{path} ({}), lines {}-{end} of {} (read the rest with read_file):\n{}",
                file.version.label(),
                start + 1,
                lines.len(),
                numbered(&lines[start..end], start + 1)
            )
        };
        if rein_models::tokens::count_text(&block) <= budget.left {
            let clean = *sources.redactor.redact(&file.text) == *file.text;
            if whole && clean {
                reads.push((path.clone(), file.version.clone()));
            }
            budget.spend(&mut out, &block);
        }
    }
    out.push_str(if sources.whole_files {
        "\nFix the cause. Reply with the fixed function whole: the file's path alone on a line, then the complete fixed function in a fenced code block (only the function, not the rest of the file; the whole file for a change outside any function). Rein then runs the checker again."
    } else {
        "\nFix the cause in the code (a file shown whole above counts as read: edit it directly with edit_file). Silencing the checker — a suppression comment, a change to its configuration — is not accepted. Rein runs the checker again when you say you are done."
    });
    FirstMessage { text: out, reads }
}

/// The tokens the message may still take; what it adds is redacted first.
struct Budget<'a> {
    left: u64,
    redactor: &'a Redactor,
}

impl Budget<'_> {
    fn spend(&mut self, out: &mut String, block: &str) {
        let block = self.redactor.redact(block);
        let block = fit_tokens(&block, self.left);
        self.left = self
            .left
            .saturating_sub(rein_models::tokens::count_text(&block));
        out.push_str(&block);
    }
}

/// The baseline run as the model reads it.
/// Paths in the output are shown relative to the project, as the tools
/// take them: a model that sees `/tmp/x/project/gcd.py` calls
/// `project/gcd.py`.
fn failure_block(run: &BaselineOutput, root: &std::path::Path) -> String {
    let prefix = format!("{}/", root.display());
    let mut out = String::from(
        "\nRein ran the tests before you started, so you do not need to run them to see the failure:\n",
    );
    let _ = writeln!(out, "$ {}", run.command);
    let exit = run
        .exit_code
        .map_or_else(|| "no exit code".to_owned(), |c| format!("exit code {c}"));
    let failing = if run.failures.is_empty() {
        String::new()
    } else {
        format!("; failing: {}", run.failures.join(", "))
    };
    let _ = writeln!(out, "{exit}{failing}");
    let tail: Vec<&String> = run
        .tail
        .iter()
        .skip(run.tail.len().saturating_sub(OUTPUT_LINES))
        .collect();
    if !tail.is_empty() {
        out.push_str("output (last lines):\n");
        for line in tail {
            let _ = writeln!(out, "{}", line.replace(&prefix, ""));
        }
    }
    if !run.log_path.is_empty() {
        let _ = writeln!(out, "full log: {}", run.log_path);
    }
    out
}

/// A whole file as the `whole` edit format writes it back: its path on a
/// line, then the file in a fenced block.
fn fenced(path: &str, text: &str) -> String {
    let lang = path.rsplit_once('.').map(|(_, ext)| ext).unwrap_or("");
    let label = if path.is_empty() {
        String::new()
    } else {
        format!("\n{path}")
    };
    format!("{label}\n{}\n", fenced_block(lang, text))
}

fn numbered(lines: &[&str], first: usize) -> String {
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        let _ = writeln!(out, "{:>6}\t{line}", first + i);
    }
    out
}

/// The file a fix-test task's first message names as most likely holding
/// the bug (the first shown of [`code_under_test`]'s): what the model is
/// pointed back to when it writes the test instead.
pub async fn likely_under_test(task: &TaskSpec, sources: &Sources<'_>) -> Option<String> {
    let TaskKind::FixTest { path, .. } = &task.kind else {
        return None;
    };
    let test_file = sources.workspace.read_file(path).await.ok();
    for (candidate, _) in
        code_under_test(path, test_file.as_ref().map(|f| f.text.as_str()), sources)
    {
        if sources.workspace.exists(&candidate).await {
            return Some(candidate);
        }
    }
    None
}

fn readable(policy: &Policy, path: &str) -> bool {
    policy.check(&read_file::action(path)).decision == Decision::Allow
}

/// Files the failing test exercises, most telling first: the frames of
/// the traceback (innermost last in Python, so read backwards), then the
/// test file's imports; each with the line a frame names, if one does.
/// Only workspace paths the model may read without asking; never the test
/// file itself. Whether each exists is for the reader to find.
fn code_under_test(
    test_path: &str,
    test_text: Option<&str>,
    sources: &Sources<'_>,
) -> Vec<(String, Option<usize>)> {
    let root = sources.workspace.root();
    let mut out: Vec<(String, Option<usize>)> = Vec::new();
    let mut add = |raw: &str, line: Option<usize>| {
        let raw = raw.trim();
        let relative = raw
            .strip_prefix(&format!("{}/", root.display()))
            .unwrap_or(raw);
        let Ok(path) = paths::resolve(root, relative) else {
            return;
        };
        if path.is_empty()
            || path == test_path
            || out.iter().any(|(p, _)| *p == path)
            || !readable(sources.policy, &path)
        {
            return;
        }
        out.push((path, line));
    };
    if let Some(run) = sources.baseline {
        for line in run.tail.iter().rev() {
            for (path, at) in frames(line) {
                add(&path, at);
            }
        }
    }
    if let Some(text) = test_text {
        let mut modules = imports(test_path, text);
        // The module named after the test file first: seen on QuixBugs'
        // reverse_linked_list, whose test imports `node` before
        // `reverse_linked_list`; node.py was shown as the likely home of
        // the bug, and a 1.5B model rewrote it for five minutes.
        if let Some(tested) = tested_name(test_path) {
            modules.sort_by_key(|m| module_name(m) != tested);
        }
        for module in modules {
            add(&module, None);
        }
    }
    // A frame in the tests' own helpers (a time limit's signal handler, a
    // fixture) is where the failure surfaced, not the bug: seen in
    // QuixBugs, where an infinite loop ends in `tests/_timeout.py` and a
    // small model, shown that file, rewrote it.
    out.sort_by_key(|(path, _)| is_test_support(path));
    out
}

/// The name a test file gives the code it tests: `tests/test_gcd.py`,
/// `gcd_test.go`, `gcd.test.ts` → `gcd`; `None` for a file named
/// otherwise.
fn tested_name(test_path: &str) -> Option<&str> {
    let name = test_path.rsplit('/').next()?;
    let stem = name.split('.').next()?;
    let bare = stem
        .strip_prefix("test_")
        .or_else(|| stem.strip_suffix("_test"))
        .or_else(|| stem.strip_suffix("_spec"))
        .or_else(|| (name.contains(".test.") || name.contains(".spec.")).then_some(stem));
    bare.filter(|b| !b.is_empty())
}

/// The module a path holds: its file's stem, or its folder's name for a
/// package's `__init__.py` / `index.js` / `mod.rs`.
fn module_name(path: &str) -> &str {
    let mut parts = path.rsplit('/');
    let name = parts.next().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name);
    match stem {
        "__init__" | "index" | "mod" => parts.next().unwrap_or(stem),
        _ => stem,
    }
}

/// Whether a path belongs to the tests rather than the code they test: a
/// test directory on its way, or a test file's name.
fn is_test_support(path: &str) -> bool {
    let (dirs, name) = path.rsplit_once('/').unwrap_or(("", path));
    let in_tests = dirs.split('/').any(|d| {
        matches!(
            d,
            "tests" | "test" | "testing" | "__tests__" | "spec" | "specs"
        )
    });
    let stem = name.split('.').next().unwrap_or(name);
    in_tests
        || name == "conftest.py"
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || name.contains(".test.")
        || name.contains(".spec.")
}

/// Source locations a line of test output names: Python's `File "x.py",
/// line 7`, and `path.ext:line` as Rust, Go, JS and most tools print them.
fn frames(line: &str) -> Vec<(String, Option<usize>)> {
    let mut found = Vec::new();
    if let Some(rest) = line.trim_start().strip_prefix("File \"")
        && let Some((path, after)) = rest.split_once('"')
    {
        let number = after
            .trim_start_matches(", line ")
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|n| n.parse().ok());
        found.push((path.to_owned(), number));
        return found;
    }
    for word in line.split(|c: char| c.is_whitespace() || "()[]'\"`,".contains(c)) {
        let mut parts = word.split(':');
        let (Some(path), Some(number)) = (parts.next(), parts.next()) else {
            continue;
        };
        if is_source_path(path)
            && let Ok(number) = number.parse()
        {
            found.push((path.trim_start_matches("./").to_owned(), Some(number)));
        }
    }
    found
}

fn is_source_path(path: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        ".py", ".rs", ".go", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx",
    ];
    !path.is_empty() && EXTENSIONS.iter().any(|e| path.ends_with(e))
}

/// The workspace paths a test file's imports may name (not checked to
/// exist here): Python modules as `a/b.py` or `a/b/__init__.py`, at the
/// root, beside the test and under `src/`; JS/TS relative imports with
/// the usual extensions; for Go, nothing (the package is the directory).
fn imports(test_path: &str, text: &str) -> Vec<String> {
    let dir = test_path.rsplit_once('/').map_or("", |(d, _)| d);
    let join = |base: &str, rest: &str| {
        if base.is_empty() {
            rest.to_owned()
        } else {
            format!("{base}/{rest}")
        }
    };
    let mut out = Vec::new();
    if test_path.ends_with(".py") {
        for line in text.lines() {
            let line = line.trim();
            let module = if let Some(rest) = line.strip_prefix("from ") {
                rest.split_whitespace().next()
            } else if let Some(rest) = line.strip_prefix("import ") {
                rest.split([',', ' ']).next()
            } else {
                None
            };
            let Some(module) = module.filter(|m| !m.starts_with('.') && !m.is_empty()) else {
                continue;
            };
            let file = module.replace('.', "/");
            for base in [String::new(), dir.to_owned(), "src".to_owned()] {
                out.push(join(&base, &format!("{file}.py")));
                out.push(join(&base, &format!("{file}/__init__.py")));
            }
        }
    } else if [".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx"]
        .iter()
        .any(|e| test_path.ends_with(e))
    {
        for line in text.lines() {
            for quote in ['\'', '"'] {
                for piece in line.split(quote).skip(1).step_by(2) {
                    if !piece.starts_with("./") && !piece.starts_with("../") {
                        continue;
                    }
                    let base = join(dir, piece.strip_prefix("./").unwrap_or(piece));
                    out.push(base.clone());
                    for ext in [
                        ".ts",
                        ".tsx",
                        ".js",
                        ".jsx",
                        ".mjs",
                        "/index.ts",
                        "/index.js",
                    ] {
                        out.push(format!("{base}{ext}"));
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seen with Qwen2.5-Coder-1.5B: `/tmp/…/project/gcd.py` in a traceback
    /// became `edit_file project/gcd.py`.
    #[test]
    fn paths_in_the_failure_are_shown_relative_to_the_project() {
        let run = BaselineOutput {
            command: "python3 -m unittest tests.test_gcd".into(),
            exit_code: Some(1),
            failures: vec!["tests.test_gcd.TestGcd.test_gcd".into()],
            tail: vec![
                "  File \"/tmp/e/tasks/gcd/project/gcd.py\", line 5, in gcd".into(),
                "  File \"/tmp/e/tasks/gcd/projectile/x.py\", line 1".into(),
            ],
            log_path: String::new(),
        };
        let block = failure_block(&run, std::path::Path::new("/tmp/e/tasks/gcd/project"));
        assert!(
            block.contains("  File \"gcd.py\", line 5, in gcd"),
            "{block}"
        );
        assert!(
            block.contains("/tmp/e/tasks/gcd/projectile/x.py"),
            "{block}"
        );
    }

    #[test]
    fn a_test_file_names_the_module_it_tests() {
        let named: Vec<Option<&str>> = [
            "tests/test_reverse_linked_list.py",
            "pkg/gcd_test.go",
            "spec/cart_spec.rb",
            "src/cart.test.ts",
            "src/cart.spec.js",
            "tests/conftest.py",
            "tests/test_.py",
            "test_x",
        ]
        .iter()
        .map(|p| tested_name(p))
        .collect();
        assert_eq!(
            named,
            [
                Some("reverse_linked_list"),
                Some("gcd"),
                Some("cart"),
                Some("cart"),
                Some("cart"),
                None,
                None,
                Some("x"),
            ]
        );
        assert_eq!(module_name("src/cart/__init__.py"), "cart");
        assert_eq!(module_name("lib/cart/index.js"), "cart");
        assert_eq!(module_name("node.py"), "node");
    }

    #[test]
    fn frames_are_found_in_the_runners_words() {
        assert_eq!(
            frames(r#"  File "/w/proj/cart.py", line 12, in total"#),
            vec![("/w/proj/cart.py".to_owned(), Some(12))]
        );
        assert_eq!(
            frames("thread 'tests::total' panicked at src/cart.rs:7:5:"),
            vec![("src/cart.rs".to_owned(), Some(7))]
        );
        assert_eq!(
            frames("    at total (./src/cart.js:3:10)"),
            vec![("src/cart.js".to_owned(), Some(3))]
        );
        assert_eq!(
            frames("    cart_test.go:12: got 3, want 30"),
            vec![("cart_test.go".to_owned(), Some(12))]
        );
        assert!(frames("AssertionError: 3 != 30").is_empty());
        assert!(frames("http://localhost:8080/x.js").is_empty());
    }

    #[test]
    fn test_helpers_are_told_from_the_code_they_test() {
        for helper in [
            "tests/_timeout.py",
            "test/helpers.js",
            "pkg/tests/util/fixtures.py",
            "conftest.py",
            "test_cart.py",
            "cart_test.go",
            "src/cart.test.ts",
            "src/__tests__/x.js",
        ] {
            assert!(is_test_support(helper), "{helper}");
        }
        for code in [
            "cart.py",
            "src/testing_utils_are_not_tests.rs",
            "contest.py",
            "latest/cart.py",
            "attest.py",
        ] {
            assert!(!is_test_support(code), "{code}");
        }
    }

    #[test]
    fn imports_name_the_files_they_may_be() {
        let py = imports(
            "tests/test_cart.py",
            "import unittest\nfrom cart import Item, total\nfrom shop.pricing import tax\nfrom . import helpers\n",
        );
        assert!(py.contains(&"cart.py".to_owned()));
        assert!(py.contains(&"tests/cart.py".to_owned()));
        assert!(py.contains(&"src/shop/pricing.py".to_owned()));
        assert!(py.contains(&"unittest.py".to_owned()));
        assert!(!py.iter().any(|p| p.contains("helpers")));
        let js = imports(
            "src/cart.test.ts",
            "import { total } from './cart';\nconst x = require(\"../lib/util\");\nimport fs from 'fs';\n",
        );
        assert!(js.contains(&"src/cart.ts".to_owned()));
        assert!(js.contains(&"src/../lib/util.js".to_owned()));
        assert!(!js.iter().any(|p| p.contains("fs")));
    }
}
