//! The examples a Python file documents (doctest's `>>> call` and the
//! line it should give, in its docstrings and in strings standing alone,
//! as a description after the code): what the code said it does before a
//! change. A fix that makes the target test pass and breaks one of them is
//! a test passed by luck, not a fix — a search that samples many
//! candidates finds such changes (a check deleted, the visible cases
//! special-cased), and the verifier holds them against the change.
//!
//! They run through Rein's own runner (`rein_runner.py examples <files>`,
//! see [`super::isolated`]), each example reported as a test. A run the
//! code under test cuts short or fakes only removes what the check
//! relies on: no report, or one without the examples, fails the check.

use serde::{Deserialize, Serialize};

use super::command::quote;
use super::isolated::{Isolated, REPORT_FILE, RUNNER_FILE, RUNNER_PY};
use super::reporter::Outcome;
use crate::exec::{PrivateReport, RUN_DIR_VAR, ReportSpec};

/// At most this many files' examples are recorded before a task.
pub const MAX_FILES: usize = 20;

/// How many broken examples a gap names.
const SHOWN: usize = 3;

/// Whether `path`, holding `text`, may document examples: a Python file
/// with a `>>>` in it (the runner looks closer), of the project's own — not
/// a package installed into the workspace (a virtualenv's
/// `site-packages`, anything under a hidden folder such as `.venv` or
/// `.tox`), whose examples no task of the project is about.
pub fn may_document(path: &str, text: &str) -> bool {
    let installed = path.split('/').any(|part| {
        part.starts_with('.') && part != "." && part != ".."
            || part == "site-packages"
            || part == "dist-packages"
    });
    path.ends_with(".py") && !installed && text.contains(">>>")
}

/// The run of the examples `files` (workspace-relative) document.
pub fn run(files: &[String]) -> Isolated {
    let args: Vec<String> = files.iter().map(|f| quote(f)).collect();
    let args = args.join(" ");
    Isolated {
        command: format!("python3 -I \"${RUN_DIR_VAR}/{RUNNER_FILE}\" examples {args}"),
        shown: format!("python3 -I rein_runner.py examples {args}"),
        report: ReportSpec::Private {
            files: vec![(RUNNER_FILE.to_owned(), RUNNER_PY.to_owned())],
            report: REPORT_FILE.to_owned(),
        },
    }
}

/// One documented example, and whether it held.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Example {
    /// Workspace-relative.
    pub file: String,
    /// The call and what it should give, as the runner names it (unique
    /// in its file).
    pub name: String,
    pub source: String,
    pub want: String,
    #[serde(default)]
    pub line: u32,
    pub held: bool,
    /// What it gave instead, when it did not hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub got: Option<String>,
}

#[derive(Deserialize)]
struct Report {
    #[serde(default)]
    tests: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    class: String,
    name: String,
    outcome: Outcome,
    #[serde(default)]
    line: Option<u32>,
    #[serde(default)]
    source: String,
    #[serde(default)]
    want: String,
    #[serde(default)]
    got: Option<String>,
}

/// The examples a run reported, or why it showed none.
pub fn read(report: Option<&PrivateReport>) -> Result<Vec<Example>, String> {
    let text = match report {
        Some(PrivateReport::Text(text)) => text,
        Some(PrivateReport::Unreadable(why)) => {
            return Err(format!("its report could not be read ({why})"));
        }
        Some(PrivateReport::Missing) | None => {
            return Err(
                "the run ended before Rein's runner wrote its report (it timed out, was killed, or the code ended the process)"
                    .into(),
            );
        }
    };
    let report: Report =
        serde_json::from_str(text).map_err(|e| format!("its report is not Rein's ({e})"))?;
    Ok(report
        .tests
        .into_iter()
        .map(|e| {
            let held = e.outcome == Outcome::Passed;
            Example {
                file: e.class,
                name: e.name,
                source: e.source,
                want: e.want,
                line: e.line.unwrap_or(0),
                held,
                got: if held { None } else { e.got },
            }
        })
        .collect())
}

/// An example that held before a change and does not now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Broken<'a> {
    pub before: &'a Example,
    /// How it ran now; `None`: it is no longer documented as it was.
    pub now: Option<&'a Example>,
}

/// The examples of `files` that held in `before` and do not in `now`.
pub fn broken<'a>(before: &'a [Example], now: &'a [Example], files: &[String]) -> Vec<Broken<'a>> {
    before
        .iter()
        .filter(|b| b.held && files.contains(&b.file))
        .filter_map(|b| {
            let now = now.iter().find(|n| n.file == b.file && n.name == b.name);
            match now {
                Some(n) if n.held => None,
                now => Some(Broken { before: b, now }),
            }
        })
        .collect()
}

/// What the model is told: which examples no longer hold, and what each
/// gives now.
pub fn gap(broken: &[Broken<'_>]) -> String {
    let mut files: Vec<&str> = broken.iter().map(|b| b.before.file.as_str()).collect();
    files.dedup();
    let shown: Vec<String> = broken
        .iter()
        .take(SHOWN)
        .map(|b| {
            let (source, want) = (&b.before.source, &b.before.want);
            match b.now.and_then(|n| n.got.as_deref()) {
                Some(got) => format!("`{source}` should give `{want}`, gives `{got}`"),
                None if b.now.is_some() => format!("`{source}` should give `{want}`, and does not"),
                None => format!(
                    "`{source}` (which should give `{want}`) is no longer documented as it was"
                ),
            }
        })
        .collect();
    let more = match broken.len().saturating_sub(SHOWN) {
        0 => String::new(),
        n => format!("; and {n} more"),
    };
    format!(
        "the change breaks what {} documents: examples that held before it no longer do: {}{more}; fix the code so that they hold again, and leave the examples as they are",
        files.join(", "),
        shown.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    fn example(name: &str, held: bool, got: Option<&str>) -> Example {
        let (source, want) = name.split_once(" => ").unwrap();
        Example {
            file: "parens.py".into(),
            name: name.into(),
            source: source.into(),
            want: want.into(),
            line: 3,
            held,
            got: got.map(str::to_owned),
        }
    }

    #[test]
    fn the_run_names_the_files_quoted_and_reports_privately() {
        let run = run(&["parens.py".into(), "my dir/it's.py".into()]);
        expect![[
            r#"python3 -I "$REIN_RUN_DIR/rein_runner.py" examples parens.py 'my dir/it'\''s.py'"#
        ]]
        .assert_eq(&run.command);
        assert!(matches!(run.report, ReportSpec::Private { .. }));
    }

    #[test]
    fn only_python_files_with_a_prompt_may_document_examples() {
        assert!(may_document("a/parens.py", "\"\"\"\n>>> f()\n1\n\"\"\""));
        assert!(!may_document("a/parens.py", "def f(): return 1"));
        assert!(!may_document("README.md", ">>> f()"));
        for installed in [
            ".venv/lib/python3.11/site-packages/numpy/core/numeric.py",
            "venv/lib/python3.11/site-packages/attr/_make.py",
            "env/lib/python3/dist-packages/six.py",
            "src/.tox/py311/lib/x.py",
        ] {
            assert!(!may_document(installed, ">>> f()"), "{installed}");
        }
        assert!(may_document("./src/pkg/mod.py", ">>> f()"));
    }

    #[test]
    fn the_report_is_read_as_examples_held_or_not() {
        let text = r#"{"runner":"examples","tests":[
            {"class":"parens.py","name":"f('(') => False","outcome":"passed","line":4,"source":"f('(')","want":"False"},
            {"class":"parens.py","name":"f(')(') => False","outcome":"failed","line":6,"source":"f(')(')","want":"False","got":"True"}]}"#;
        let read = read(Some(&PrivateReport::Text(text.into()))).unwrap();
        assert_eq!(
            read,
            vec![
                Example {
                    line: 4,
                    ..example("f('(') => False", true, None)
                },
                Example {
                    line: 6,
                    ..example("f(')(') => False", false, Some("True"))
                },
            ]
        );
    }

    #[test]
    fn a_run_without_its_report_shows_nothing() {
        let missing = read(Some(&PrivateReport::Missing)).unwrap_err();
        assert!(
            missing.contains("before Rein's runner wrote its report"),
            "{missing}"
        );
        assert!(read(None).is_err());
        let forged = read(Some(&PrivateReport::Text("all passed".into()))).unwrap_err();
        assert!(forged.starts_with("its report is not Rein's"), "{forged}");
    }

    #[test]
    fn an_example_that_held_and_now_fails_or_is_gone_is_broken() {
        let before = [
            example("f('((') => False", true, None),
            example("f(')(') => False", true, None),
            example("f('()') => True", true, None),
            // Failed before the change: not held against it.
            example("f('(()') => False", false, Some("True")),
        ];
        let now = [
            example("f('((') => False", true, None),
            example("f(')(') => False", false, Some("True")),
            example("f('(()') => False", false, Some("True")),
        ];
        let files = ["parens.py".to_owned()];
        let broken = broken(&before, &now, &files);
        assert_eq!(
            broken
                .iter()
                .map(|b| b.before.name.as_str())
                .collect::<Vec<_>>(),
            ["f(')(') => False", "f('()') => True"]
        );
        expect![[r#"the change breaks what parens.py documents: examples that held before it no longer do: `f(')(')` should give `False`, gives `True`; `f('()')` (which should give `True`) is no longer documented as it was; fix the code so that they hold again, and leave the examples as they are"#]]
            .assert_eq(&gap(&broken));
    }

    #[test]
    fn examples_of_files_the_change_did_not_touch_are_not_checked() {
        let before = [example("f(')(') => False", true, None)];
        assert!(broken(&before, &[], &["other.py".to_owned()]).is_empty());
    }
}
