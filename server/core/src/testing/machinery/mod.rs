//! What in a project's files can change how its tests run or report,
//! rather than what they test: statements that replace the test framework
//! (unittest's assertions, pytest internals, builtins, `sys.modules`, the
//! exit), files the runner loads by themselves (conftest.py, a
//! `sitecustomize.py`, `.pth` files, build.rs), and settings that add
//! plugins, options, setup files or reporters. Each is a [`Finding`];
//! pure: the verifier reads the files and compares the findings with
//! those of the same files before the task, so only what the task brought
//! counts.
//!
//! Lexical and deliberately narrow: a finding names a file and a line the
//! user can look at. What it cannot see (code that builds the names it
//! patches, a fixture changed inside its body) the verifier's isolated
//! runs and its reporter's checks are for.

mod config;
mod python;
mod source;

use serde::{Deserialize, Serialize};

/// One statement or setting that touches the test machinery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Workspace-relative.
    pub path: String,
    /// 1-based; 0 for the file as a whole.
    pub line: usize,
    /// The statement as written, whitespace collapsed: what the same
    /// finding is known by in another version of the file.
    pub key: FindingKey,
    /// What it does, for the user.
    pub what: String,
}

/// A finding as the baseline keeps it: its file and its statement.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FindingKey {
    pub path: String,
    pub text: String,
}

impl Finding {
    fn at(path: &str, line: usize, text: &str, what: String) -> Self {
        Self {
            path: path.to_owned(),
            line,
            key: FindingKey {
                path: path.to_owned(),
                text: text.to_owned(),
            },
            what,
        }
    }

    /// A finding about the file itself (it exists).
    fn file(path: &str, what: String) -> Self {
        Self::at(path, 0, "<file>", what)
    }

    /// `cart.py:14 calls os._exit, …`
    pub fn describe(&self) -> String {
        if self.line == 0 {
            format!("{} {}", self.path, self.what)
        } else {
            format!("{}:{} {}", self.path, self.line, self.what)
        }
    }
}

/// What a file is to the scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Any file of the project.
    Project,
    /// A module pytest loaded as a plugin (its report says so).
    PytestPlugin,
}

/// Whether [`scan`] has rules for the file at `path`.
pub fn is_scanned(path: &str) -> bool {
    let name = file_name(path);
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(
        ext,
        "py" | "pth" | "rs" | "go" | "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts"
    ) || config::is_config(path)
}

/// The findings of one file.
pub fn scan(path: &str, text: &str, role: Role) -> Vec<Finding> {
    let name = file_name(path);
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    let mut found = Vec::new();
    if config::is_config(path) {
        found.extend(config::scan(path, text));
        return found;
    }
    match ext {
        "py" => {
            let plugin = role == Role::PytestPlugin || name == "conftest.py";
            if name == "conftest.py" {
                found.push(Finding::file(
                    path,
                    "is a conftest.py: pytest loads it into the run of every test in its folder and below".into(),
                ));
            } else if role == Role::PytestPlugin {
                found.push(Finding::file(
                    path,
                    "is loaded by pytest as a plugin into the run".into(),
                ));
            }
            if matches!(name, "sitecustomize.py" | "usercustomize.py") {
                found.push(Finding::file(
                    path,
                    "runs whenever Python starts with it on its path, before any test".into(),
                ));
            }
            let kind = if plugin {
                python::PyFile::Plugin
            } else {
                python::PyFile::Plain
            };
            found.extend(python::scan(path, text, kind));
        }
        "pth" => found.extend(source::pth(path, text)),
        "rs" if name == "build.rs" => found.extend(source::build_script(path, text)),
        "rs" => found.extend(source::rust(path, text)),
        "go" => found.extend(source::go(path, text)),
        "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => {
            found.extend(source::javascript(path, text))
        }
        _ => {}
    }
    found
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Text a test runner prints about its tests' results (`… ... ok`,
/// `Ran 1 test in`, `1 passed`, `test result: ok.`, `--- PASS:`): the
/// line of `text` that looks like one, if any. The code under test has no
/// business printing those.
pub fn output_like(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|line| {
            line.ends_with(" ... ok")
                || ran_tests(line)
                || count_then(line, " passed")
                || line.starts_with("test result: ok")
                || line.starts_with("--- PASS: ")
                || line.starts_with("PASSED ")
                || (line.starts_with("Tests:") && line.contains(" passed"))
        })
        .map(|line| line.chars().take(120).collect())
}

/// `Ran 3 tests in 0.01s`.
fn ran_tests(line: &str) -> bool {
    line.strip_prefix("Ran ").is_some_and(|rest| {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        digits > 0 && rest[digits..].starts_with(" test")
    })
}

/// A number right before `word` (`2 passed`).
fn count_then(line: &str, word: &str) -> bool {
    line.match_indices(word).any(|(at, _)| {
        line[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runner_output_is_recognised() {
        for (text, found) in [
            ("test_total (a.B.test_total) ... ok", true),
            ("Ran 1 test in 0.001s", true),
            ("\nRan 12 tests in 0.1s\n\nOK\n", true),
            ("1 passed in 0.01s", true),
            ("test result: ok. 1 passed; 0 failed", true),
            ("--- PASS: TestTotal (0.00s)", true),
            ("Tests:       1 passed, 1 total", true),
            ("Ran out of stock", false),
            ("all items passed the check", false),
            ("OK", false),
        ] {
            assert_eq!(output_like(text).is_some(), found, "{text:?}");
        }
    }

    #[test]
    fn which_files_are_scanned() {
        for path in [
            "cart.py",
            "tests/conftest.py",
            "x.pth",
            "build.rs",
            "src/lib.rs",
            "pytest.ini",
            "setup.cfg",
            "pyproject.toml",
            "package.json",
            "jest.config.js",
            "web/vitest.config.mts",
            ".cargo/config.toml",
            "Cargo.toml",
            "main.go",
        ] {
            assert!(is_scanned(path), "{path}");
        }
        for path in ["README.md", "data.json", "Makefile", "config.toml"] {
            assert!(!is_scanned(path), "{path}");
        }
    }

    #[test]
    fn special_files_are_findings_of_their_own() {
        let whats = |path: &str, text: &str| -> Vec<String> {
            scan(path, text, Role::Project)
                .iter()
                .map(Finding::describe)
                .collect()
        };
        assert_eq!(
            whats("tests/conftest.py", "import pytest\n"),
            [
                "tests/conftest.py is a conftest.py: pytest loads it into the run of every test in its folder and below"
            ]
        );
        assert_eq!(
            whats("sitecustomize.py", "x = 1\n"),
            ["sitecustomize.py runs whenever Python starts with it on its path, before any test"]
        );
        assert_eq!(
            scan(
                "plugin.py",
                "def pytest_configure(config): pass\n",
                Role::PytestPlugin
            )
            .iter()
            .map(Finding::describe)
            .collect::<Vec<_>>(),
            [
                "plugin.py is loaded by pytest as a plugin into the run",
                "plugin.py:1 implements the pytest hook `pytest_configure`, which runs inside the test run"
            ]
        );
    }
}
