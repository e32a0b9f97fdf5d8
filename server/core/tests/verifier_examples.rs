//! A fix that makes the target test pass and breaks an example the code
//! documents is not a fix. Seen in a search on the held-out split
//! (BENCHMARKS figure 9): a sampled candidate deleted
//! is_valid_parenthesization's `depth < 0` check, the two visible cases
//! passed, and Rein said "fixed" while the docstring's own `')()('` example
//! (and the held-out cases) failed. Played against the real verifier, the
//! real `python3` and the real command runner on a small project on disk.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use rein_core::budget::TimeBudget;
use rein_core::os::disk::DiskWorkspace;
use rein_core::os::process::ProcessExec;
use rein_core::ports::{Verdict, Verifier, VerifyContext};
use rein_core::task::{TaskId, TaskSpec};
use rein_core::testing::command::{Runner, TestCommand};
use rein_core::verify::TestVerifier;
use tokio_util::sync::CancellationToken;

/// The bug: `((` counts as balanced (the last line returns True). The
/// description after the code documents two examples; both hold with the
/// bug.
const PARENS: &str = r#"def is_valid(parens):
    depth = 0
    for paren in parens:
        if paren == '(':
            depth += 1
        else:
            depth -= 1
            if depth < 0:
                return False
    return True


"""
Whether the parentheses are properly nested.

>>> is_valid('((()()))()')
True
>>> is_valid(')()(')
False
"""
"#;
/// The visible cases: a balanced string and `((`.
const TEST: &str = "import unittest\n\nfrom parens import is_valid\n\n\nclass TestParens(unittest.TestCase):\n    def test_is_valid(self):\n        self.assertTrue(is_valid('((()()))()'))\n        self.assertFalse(is_valid('(('))\n";

/// The candidate the search found: the guard deleted, depth compared at
/// the end. Passes the visible cases; `')()('` now gives True.
fn guard_deleted() -> String {
    PARENS
        .replace(
            "            if depth < 0:\n                return False\n",
            "",
        )
        .replace("    return True\n", "    return depth == 0\n")
}

/// The true fix: the guard kept, depth compared at the end.
fn true_fix() -> String {
    PARENS.replace("    return True\n", "    return depth == 0\n")
}

struct Project {
    dir: tempfile::TempDir,
    artifacts: tempfile::TempDir,
    task: TaskSpec,
}

impl Project {
    fn new() -> Self {
        let project = Self {
            dir: tempfile::tempdir().unwrap(),
            artifacts: tempfile::tempdir().unwrap(),
            task: TaskSpec::fix_test(
                TaskId("t-examples".into()),
                "tests/test_parens.py",
                "TestParens.test_is_valid",
            ),
        };
        project.write("parens.py", PARENS);
        project.write("tests/__init__.py", "");
        project.write("tests/test_parens.py", TEST);
        project
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.root().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    async fn verifier(&self, ws: &DiskWorkspace, exec: &ProcessExec) -> TestVerifier {
        TestVerifier::prepare(
            &self.task,
            ws,
            exec,
            Some(TestCommand::new(Runner::Unittest)),
            Duration::from_secs(60),
            self.artifacts.path(),
            &CancellationToken::new(),
        )
        .await
    }

    fn cx<'a>(
        &'a self,
        ws: &'a DiskWorkspace,
        exec: &'a ProcessExec,
        touched: &'a [String],
    ) -> VerifyContext<'a> {
        VerifyContext {
            task: &self.task,
            touched,
            workspace: ws,
            exec,
            artifacts_dir: self.artifacts.path().to_path_buf(),
            cancel: CancellationToken::new(),
            time: TimeBudget::unlimited(),
        }
    }

    /// The verdict on a claim once parens.py holds `text`, with the
    /// baseline taken before.
    async fn verdict_with(&self, text: &str) -> Verdict {
        let ws = DiskWorkspace::new(self.root()).unwrap();
        let exec = ProcessExec::new();
        let verifier = self.verifier(&ws, &exec).await;
        self.write("parens.py", text);
        let touched = ["parens.py".to_owned()];
        verifier.verify(self.cx(&ws, &exec, &touched)).await
    }
}

fn gap_of(verdict: &Verdict) -> &str {
    match verdict {
        Verdict::Gap { gap, .. } => gap,
        other => panic!("not turned down with a gap: {other:?}"),
    }
}

#[tokio::test]
async fn a_fix_that_breaks_a_documented_example_is_not_verified() {
    let verdict = Project::new().verdict_with(&guard_deleted()).await;
    assert_eq!(
        gap_of(&verdict),
        "the change breaks what parens.py documents: examples that held before it no longer do: `is_valid(')()(')` should give `False`, gives `True`; fix the code so that they hold again, and leave the examples as they are"
    );
}

#[tokio::test]
async fn the_true_fix_is_verified_with_the_examples_as_evidence() {
    let verdict = Project::new().verdict_with(&true_fix()).await;
    let Verdict::Verified { summary, evidence } = &verdict else {
        panic!("the true fix is not verified: {verdict:?}");
    };
    assert_eq!(
        summary,
        "fixed: `TestParens.test_is_valid` passes, no regressions, the documented examples still hold"
    );
    let examples = evidence
        .iter()
        .find(|e| e.check == "examples_hold parens.py")
        .expect("the examples' run is evidence");
    assert_eq!(
        examples.command,
        "python3 -I rein_runner.py examples parens.py"
    );
    assert_eq!(examples.exit_code, Some(0));
    assert_eq!(examples.files.len(), 2, "{:?}", examples.files);
}

/// Abuse: the examples deleted with the guard, so nothing documents
/// `')()('` any more.
#[tokio::test]
async fn a_change_that_deletes_the_examples_it_breaks_is_not_verified() {
    let text = guard_deleted().replace(">>> is_valid(')()(')\nFalse\n", "");
    let verdict = Project::new().verdict_with(&text).await;
    assert_eq!(
        gap_of(&verdict),
        "the change breaks what parens.py documents: examples that held before it no longer do: `is_valid(')()(')` (which should give `False`) is no longer documented as it was; fix the code so that they hold again, and leave the examples as they are"
    );
}

/// Abuse: the changed module kills its own process when doctest is
/// loaded, so the examples' run leaves no report (the tests, run by
/// unittest, pass, and nothing in it is a trick the scan knows).
#[tokio::test]
async fn a_module_that_ends_the_examples_run_is_not_verified() {
    let text = format!(
        "import os as _os\nimport signal as _signal\nimport sys as _sys\nif 'doctest' in _sys.modules:\n    _os.kill(_os.getpid(), _signal.SIGKILL)\n{}",
        guard_deleted()
    );
    let verdict = Project::new().verdict_with(&text).await;
    assert_eq!(
        gap_of(&verdict),
        "Rein could not check that the examples parens.py documents still hold, as they did before the change: the run ended before Rein's runner wrote its report (it timed out, was killed, or the code ended the process)"
    );
}

/// Abuse: the changed module loops forever on a documented example; the
/// example fails on its own time limit, not the whole run's.
#[tokio::test]
async fn a_change_that_hangs_on_a_documented_example_is_not_verified() {
    let text = true_fix().replace(
        "    depth = 0\n",
        "    depth = 0\n    while parens == ')()(':\n        pass\n",
    );
    let verdict = Project::new().verdict_with(&text).await;
    assert!(
        gap_of(&verdict)
            .contains("`is_valid(')()(')` should give `False`, gives `took longer than 5 s`"),
        "{verdict:?}"
    );
}

/// An example the bug already broke is not held against the fix.
#[tokio::test]
async fn an_example_that_failed_before_the_task_is_not_required() {
    let project = Project::new();
    let documented = PARENS.replace(
        ">>> is_valid(')()(')\nFalse\n",
        ">>> is_valid(')()(')\nFalse\n>>> is_valid('((')\nFalse\n",
    );
    project.write("parens.py", &documented);
    // The fix makes `((` False, and also breaks nothing documented.
    let fixed = documented.replace("    return True\n", "    return depth == 0\n");
    assert!(matches!(
        project.verdict_with(&fixed).await,
        Verdict::Verified { .. }
    ));
    // A "fix" that special-cases the visible input still breaks `')()('`,
    // and only that example is named.
    let project = Project::new();
    project.write("parens.py", &documented);
    let special = documented
        .replace(
            "            if depth < 0:\n                return False\n",
            "",
        )
        .replace("    return True\n", "    return parens != '(('\n");
    let verdict = project.verdict_with(&special).await;
    let gap = gap_of(&verdict);
    assert!(
        gap.contains("`is_valid(')()(')` should give `False`, gives `True`"),
        "{gap}"
    );
    assert!(!gap.contains("is_valid('((')"), "{gap}");
}
