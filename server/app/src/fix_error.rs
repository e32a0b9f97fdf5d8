//! "Fix this error with Rein" for every front end: whether a diagnostic can
//! be checked (the code action is offered only then), the verifier of a
//! fix-diagnostic task, and a diagnostic named by place
//! (`FILE:LINE[:MESSAGE]`, as `rein run --fix-error`, `rein eval` and an
//! ACP prompt name one) found in the checker's own report.
//!
//! Never here: a protocol's types; the front end converts its diagnostic
//! into [`Diagnostic`] first.

use std::path::Path;
use std::time::Duration;

use rein_core::budget::TimeBudget;
use rein_core::config::Config;
use rein_core::diagnostics::run::{self, RunAt};
use rein_core::diagnostics::{
    CheckSetup, Checker, Diagnostic, NotCheckable, Position, Range, Reported, Severity,
    checker_for, matching,
};
use rein_core::exec::Exec;
use rein_core::os::checkers;
use rein_core::testing::command::TestCommand;
use tokio_util::sync::CancellationToken;

/// The checker that can confirm `diagnostic` in the workspace at `root`
/// (the project's own checker programs only when the workspace is
/// trusted). `Err`: offer "Ask Rein…" instead, saying why.
pub fn checker(
    root: &Path,
    config: &Config,
    diagnostic: &Diagnostic,
) -> Result<Checker, NotCheckable> {
    let path = std::env::var_os("PATH");
    let project = checkers::scan(
        root,
        &diagnostic.path,
        path.as_deref(),
        config.workspace_trusted,
    );
    checker_for(diagnostic, &project, config.check_command.as_ref())
}

/// How a fix-diagnostic task with `config` is checked.
pub fn check_setup(
    root: &Path,
    config: &Config,
    diagnostic: &Diagnostic,
    test_command: Option<TestCommand>,
) -> Result<CheckSetup, String> {
    let checker = checker(root, config, diagnostic).map_err(|e| {
        format!("Rein cannot check this diagnostic, so it cannot tell a fix from a guess: {e}")
    })?;
    Ok(CheckSetup {
        checker,
        timeout: config.budgets.test_timeout,
        test_command,
        test_timeout: config.budgets.test_timeout,
        allow_suppressions: config.allow_suppressions,
    })
}

/// A diagnostic named by place: `FILE:LINE[:MESSAGE]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorTarget {
    /// Workspace-relative.
    pub path: String,
    /// 1-based.
    pub line: u32,
    /// Its message, or the start of it, when the line has several.
    pub message: Option<String>,
}

impl ErrorTarget {
    /// `FILE:LINE[:MESSAGE]`; the message may itself hold colons.
    pub fn parse(text: &str) -> Result<Self, String> {
        let usage = || {
            format!(
                "`{}` is not FILE:LINE[:MESSAGE] (for example `src/app.py:7` or `src/app.py:7:Argument 1`)",
                rein_core::inert::shown(text)
            )
        };
        let mut parts = text.splitn(3, ':');
        let path = parts.next().unwrap_or_default().trim();
        let line = parts.next().ok_or_else(usage)?.trim();
        let message = parts
            .next()
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .map(str::to_owned);
        let line: u32 = line.parse().map_err(|_| usage())?;
        if path.is_empty() || line == 0 {
            return Err(usage());
        }
        Ok(Self {
            path: path.trim_start_matches("./").to_owned(),
            line,
            message,
        })
    }

    /// The target as a diagnostic whose source is not known (the project's
    /// usual checker for the file is asked), before it is found.
    fn provisional(&self) -> Result<Diagnostic, String> {
        let line = self.line - 1;
        Diagnostic {
            path: self.path.clone(),
            range: Range {
                start: Position { line, character: 0 },
                end: Position { line, character: 0 },
            },
            severity: Severity::Error,
            source: None,
            code: None,
            message: self
                .message
                .clone()
                .unwrap_or_else(|| "(found by its place)".to_owned()),
        }
        .cleaned()
        .map_err(|e| e.to_string())
    }
}

impl std::fmt::Display for ErrorTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.path, self.line)?;
        if let Some(message) = &self.message {
            write!(f, ":{message}")?;
        }
        Ok(())
    }
}

/// Where and how a checker runs to find a diagnostic.
pub struct Find<'a> {
    pub root: &'a Path,
    pub config: &'a Config,
    /// The task's executor: the checker runs in the sandbox like every
    /// command.
    pub exec: &'a dyn Exec,
    pub log_path: &'a Path,
    pub timeout: Duration,
    pub cancel: &'a CancellationToken,
}

/// The diagnostic at `target`, as the project's checker reports it now:
/// on its line, an error before a warning, the one whose message starts
/// like the target's when it names one. `Err`, in words the user can act
/// on: no checker, the checker did not run, nothing reported there
/// (with what it did report in the file), several alike.
pub async fn find(target: &ErrorTarget, at: Find<'_>) -> Result<Diagnostic, String> {
    let provisional = target.provisional()?;
    if !at.root.join(&provisional.path).is_file() {
        return Err(format!(
            "`{}` is not a file in the workspace",
            rein_core::inert::shown(&provisional.path)
        ));
    }
    let checker = checker(at.root, at.config, &provisional).map_err(|e| e.to_string())?;
    let ran = run::run(
        &checker,
        RunAt {
            root: at.root,
            exec: at.exec,
            log_path: at.log_path.to_path_buf(),
            cancel: at.cancel,
            timeout: at.timeout,
            time: TimeBudget::unlimited(),
        },
    )
    .await?;
    let reported = ran.reported?;
    let found = pick(target, &provisional.path, &reported)?;
    Diagnostic {
        path: provisional.path,
        range: Range {
            start: Position {
                line: found.line.saturating_sub(1),
                character: found.column.saturating_sub(1),
            },
            end: Position {
                line: found.end_line.max(found.line).saturating_sub(1),
                character: 0,
            },
        },
        severity: found.severity,
        source: Some(checker.tool.name().to_owned()),
        code: found.code.clone(),
        message: found.message.clone(),
    }
    .cleaned()
    .map_err(|e| e.to_string())
    .map(|d| {
        tracing::info!(diagnostic = %d, checker = %checker.shown, "found the diagnostic to fix");
        d
    })
}

/// How many of a file's other diagnostics an error names.
const LISTED: usize = 5;

/// The one reported diagnostic `target` means.
fn pick<'a>(
    target: &ErrorTarget,
    path: &str,
    reported: &'a [Reported],
) -> Result<&'a Reported, String> {
    let in_file: Vec<&Reported> = reported
        .iter()
        .filter(|r| r.path == path && r.severity <= Severity::Warning)
        .collect();
    let starts_like = |r: &Reported| match &target.message {
        None => true,
        Some(message) => {
            let (r, m) = (r.headline().to_lowercase(), message.trim().to_lowercase());
            r.starts_with(&m) || matching::same_message(&r, &m)
        }
    };
    let on_line: Vec<&Reported> = in_file
        .iter()
        .copied()
        .filter(|r| r.line <= target.line && target.line <= r.end_line.max(r.line))
        .filter(|r| starts_like(r))
        .collect();
    let worst = on_line.iter().map(|r| r.severity).min();
    let chosen: Vec<&Reported> = on_line
        .into_iter()
        .filter(|r| Some(r.severity) == worst)
        .collect();
    match chosen.as_slice() {
        [one] => Ok(one),
        [first, rest @ ..] if rest.iter().all(|r| r.message == first.message) => Ok(first),
        [] => {
            let what = if target.message.is_some() {
                "no error or warning starting so"
            } else {
                "no error or warning"
            };
            let mut message = format!("the checker reports {what} at {path}:{}", target.line);
            if in_file.is_empty() {
                message.push_str(&format!(", and none in {path}"));
            } else {
                message.push_str("; in this file it reports:");
                for r in in_file.iter().take(LISTED) {
                    message.push_str(&format!("\n  {r}"));
                }
            }
            Err(message)
        }
        several => {
            let mut message = format!(
                "the checker reports {} problems at {path}:{}; name one by the start of its message (FILE:LINE:MESSAGE):",
                several.len(),
                target.line
            );
            for r in several.iter().take(LISTED) {
                message.push_str(&format!("\n  {r}"));
            }
            Err(message)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reported(line: u32, severity: Severity, message: &str) -> Reported {
        Reported {
            path: "app.py".into(),
            line,
            column: 5,
            end_line: line,
            severity,
            code: Some("arg-type".into()),
            message: message.into(),
        }
    }

    #[test]
    fn a_target_parses_with_a_message_that_holds_colons() {
        let cases = [
            ("app.py:7", Ok(("app.py", 7, None))),
            (
                "./src/a.rs:12:expected `u8`: found",
                Ok(("src/a.rs", 12, Some("expected `u8`: found"))),
            ),
            ("app.py:7:", Ok(("app.py", 7, None))),
            ("app.py", Err(())),
            ("app.py:0", Err(())),
            ("app.py:seven", Err(())),
            (":7", Err(())),
        ];
        for (text, expected) in cases {
            let got = ErrorTarget::parse(text);
            match expected {
                Ok((path, line, message)) => {
                    let got = got.unwrap();
                    assert_eq!(
                        (got.path.as_str(), got.line, got.message.as_deref()),
                        (path, line, message),
                        "{text}"
                    );
                }
                Err(()) => assert!(got.unwrap_err().contains("FILE:LINE"), "{text}"),
            }
        }
    }

    /// A target outside the workspace is refused before any checker runs.
    #[test]
    fn a_target_outside_the_workspace_is_refused() {
        for text in ["../secret.py:1", "/etc/passwd:1", "a/../../b.py:3"] {
            let target = ErrorTarget::parse(text).unwrap();
            let error = target.provisional().unwrap_err();
            assert!(
                error.contains("not a path inside the workspace"),
                "{text}: {error}"
            );
        }
    }

    #[test]
    fn the_error_on_the_line_is_picked_before_a_warning() {
        let all = [
            reported(3, Severity::Warning, "unused variable"),
            reported(3, Severity::Error, "Argument 1 has incompatible type"),
            reported(9, Severity::Error, "Name \"x\" is not defined"),
        ];
        let target = ErrorTarget::parse("app.py:3").unwrap();
        assert_eq!(pick(&target, "app.py", &all).unwrap().line, 3);
        assert_eq!(
            pick(&target, "app.py", &all).unwrap().severity,
            Severity::Error
        );
        let warning = ErrorTarget::parse("app.py:3:unused").unwrap();
        assert_eq!(
            pick(&warning, "app.py", &all).unwrap().message,
            "unused variable"
        );
    }

    #[test]
    fn nothing_at_the_line_says_what_the_file_has() {
        let all = [reported(9, Severity::Error, "Name \"x\" is not defined")];
        let target = ErrorTarget::parse("app.py:4").unwrap();
        expect_test::expect![[r#"
            the checker reports no error or warning at app.py:4; in this file it reports:
              app.py:9: error [arg-type]: Name "x" is not defined"#]]
        .assert_eq(&pick(&target, "app.py", &all).unwrap_err());
        let elsewhere = ErrorTarget::parse("other.py:1").unwrap();
        expect_test::expect![
            "the checker reports no error or warning at other.py:1, and none in other.py"
        ]
        .assert_eq(&pick(&elsewhere, "other.py", &all).unwrap_err());
    }

    #[test]
    fn several_different_errors_on_the_line_are_named_not_guessed() {
        let all = [
            reported(3, Severity::Error, "first problem"),
            reported(3, Severity::Error, "second problem"),
        ];
        let target = ErrorTarget::parse("app.py:3").unwrap();
        expect_test::expect![[r#"
            the checker reports 2 problems at app.py:3; name one by the start of its message (FILE:LINE:MESSAGE):
              app.py:3: error [arg-type]: first problem
              app.py:3: error [arg-type]: second problem"#]]
        .assert_eq(&pick(&target, "app.py", &all).unwrap_err());
        let named = ErrorTarget::parse("app.py:3:second").unwrap();
        assert_eq!(
            pick(&named, "app.py", &all).unwrap().message,
            "second problem"
        );
    }
}
