//! A `run_tests` target: a test id, checked once, that the runner gets as
//! data and never as an option.
//!
//! The model names tests the way the failure list and editors do:
//! `path::name` (`tests/test_cart.py::TestCart::test_total`,
//! `tests/cart.rs::total`, `pkg/cart/cart_test.go::TestTotal`,
//! `src/cart.test.ts::Cart > total`, or vitest's own
//! `src/cart.test.ts > Cart > total`), a path alone (a file, a directory,
//! go's `pkg/...`), or a name alone (`cart::tests::total`, `TestTotal`,
//! `tests.test_cart.TestCart`).
//!
//! [`TestTarget::parse`] reads the text: no part of it may read as an
//! option (a leading `-`, or `@`, which makes pytest read arguments from a
//! file), and the path is relative and stays inside the workspace.
//! [`TestTarget::check`] also resolves the path the way every path from the
//! model is resolved ([`crate::paths`]: symbolic links that leave the
//! workspace are refused) and requires it to exist. A runner's command is
//! built only from a `TestTarget` ([`TestCommand::for_target`]), so the
//! same rules hold for `run_tests`, the permission check (rules match its
//! text) and the verifier.
//!
//! [`TestCommand::for_target`]: crate::testing::command::TestCommand::for_target

use std::fmt;

use crate::paths::{self, PathError};
use crate::workspace::{Workspace, WorkspaceError};

/// A test id: a file or directory inside the workspace, a test name in
/// the runner's syntax, or both. Nothing in it starts with `-` or `@`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestTarget {
    /// Workspace-relative, normalized; a directory known as one ends with
    /// `/`; go's `dir/...` pattern keeps its `/...`.
    path: Option<String>,
    name: Option<String>,
}

/// How a target is written, for the messages that refuse one.
pub const TARGET_FORMAT: &str = "a test file or directory relative to the project root, optionally followed by ::test_name (e.g. tests/test_cart.py::test_total), or a test name alone";

/// Why a target was refused. Every message is written for the model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error(
        "`{target}` is not a test id: run_tests never passes options to the test runner, and {part} starts with `{prefix}`. Give {TARGET_FORMAT}; to run the runner with options of your own, use run_command."
    )]
    Option {
        target: String,
        /// Which part: "the target", "its path", "its test name".
        part: &'static str,
        prefix: char,
    },
    #[error(
        "`{}` contains a control character; give {TARGET_FORMAT}.",
        .target.escape_debug()
    )]
    Control { target: String },
    #[error(
        "`{target}` is an absolute path: test targets are relative to the project root. Give {TARGET_FORMAT}."
    )]
    Absolute { target: String },
    #[error(
        "`{target}` is outside the workspace; only the project's own tests can be run. Give {TARGET_FORMAT}."
    )]
    Outside { target: String },
    #[error("`{target}`: {reason}")]
    Path { target: String, reason: String },
    #[error("no such file: {path}{}; a test target names an existing test file or directory (relative to the project root), optionally with ::test_name", did_you_mean(.suggestions))]
    NoSuchFile {
        path: String,
        suggestions: Vec<String>,
    },
}

fn did_you_mean(suggestions: &[String]) -> String {
    match suggestions {
        [] => String::new(),
        [one] => format!(" (did you mean {one}?)"),
        many => format!(" (did you mean one of {}?)", many.join(", ")),
    }
}

/// Extensions of the source files a target may name.
const SOURCE_EXTENSIONS: &[&str] = &[
    "rs", "py", "go", "js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts",
];

/// First characters that make a runner read an argument as something
/// other than a test: an option, or (pytest) a file of arguments.
const OPTION_PREFIXES: &[char] = &['-', '@'];

/// Go's "this directory and every package below it".
const GO_PACKAGES: &str = "...";

impl TestTarget {
    /// Reads a target. `Ok(None)`: a blank target, or the project root
    /// (`.`): the whole suite.
    pub fn parse(raw: &str) -> Result<Option<Self>, TargetError> {
        let text = raw.trim();
        if text.chars().any(char::is_control) {
            return Err(TargetError::Control {
                target: raw.to_owned(),
            });
        }
        let option = |part, text: &str| {
            text.chars()
                .next()
                .filter(|c| OPTION_PREFIXES.contains(c))
                .map(|prefix| TargetError::Option {
                    target: text_of(raw),
                    part,
                    prefix,
                })
        };
        if let Some(e) = option("the target", text) {
            return Err(e);
        }
        let unprefixed = text.strip_prefix("./").unwrap_or(text);
        if unprefixed.is_empty() || unprefixed == "." {
            return Ok(None);
        }
        if unprefixed == ".." {
            return Err(TargetError::Outside {
                target: text_of(raw),
            });
        }
        // `./tests` is a path even without a `/` or an extension after it.
        let (path, name) = split(unprefixed, unprefixed.len() < text.len());
        let name = name.map(str::trim).filter(|n| !n.is_empty());
        if let Some(name) = name {
            // Each level of a name too: `path::--x` is one argument for
            // pytest, but `--x` once a runner's syntax splits it.
            for part in name.split("::").flat_map(|p| p.split(" > ")) {
                if let Some(e) = option("its test name", part.trim()) {
                    return Err(e);
                }
            }
        }
        let path = match path {
            Some(path) => normalize(raw, path)?,
            None => None,
        };
        if path.is_none() && name.is_none() {
            // `tests/..`: the project root, so the whole suite.
            return Ok(None);
        }
        Ok(Some(Self {
            path,
            name: name.map(str::to_owned),
        }))
    }

    /// Reads a target ([`TestTarget::parse`]) and resolves its path in
    /// `workspace`: inside it (symbolic links followed) and existing.
    pub async fn check(raw: &str, workspace: &dyn Workspace) -> Result<Option<Self>, TargetError> {
        let Some(mut target) = Self::parse(raw)? else {
            return Ok(None);
        };
        if let Some(path) = &target.path {
            target.path = Some(resolve(raw, path, workspace).await?);
        }
        Ok(Some(target))
    }

    /// The file or directory, workspace-relative.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// The test name, in the runner's syntax.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Whether the path names a directory (or go's `dir/...`) rather than
    /// a file: it ends with `/`, or its last part has no extension.
    pub fn is_directory(&self) -> bool {
        self.path
            .as_deref()
            .is_some_and(|p| p.ends_with('/') || extension(p).is_none())
    }
}

impl fmt::Display for TestTarget {
    /// `path::name`, `path` or `name`: the form [`TestTarget::parse`]
    /// reads back as the same target.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.path, &self.name) {
            (Some(path), Some(name)) => write!(f, "{path}::{name}"),
            (Some(path), None) => f.write_str(path),
            (None, Some(name)) => f.write_str(name),
            (None, None) => Ok(()),
        }
    }
}

/// The raw target as messages quote it.
fn text_of(raw: &str) -> String {
    raw.trim().to_owned()
}

/// `path::name` (every runner), or vitest's own `path > name`; else the
/// whole text is a path or a name. `explicit`: the text was written as a
/// path (`./…`).
fn split(text: &str, explicit: bool) -> (Option<&str>, Option<&str>) {
    let is_path = |p: &str| {
        looks_like_path(p) || (explicit && !p.is_empty() && !p.contains(char::is_whitespace))
    };
    for separator in ["::", " > "] {
        if let Some((path, name)) = text.split_once(separator)
            && is_path(path)
        {
            return (Some(path), Some(name));
        }
    }
    if is_path(text) {
        (Some(text), None)
    } else {
        (None, Some(text))
    }
}

/// Test names often have spaces (`Cart > adds items`) and may have
/// slashes (go subtests `TestTotal/empty`); paths in a repository have no
/// spaces, and a go test name is never a directory.
fn looks_like_path(text: &str) -> bool {
    let has_source_extension = extension(text).is_some_and(|e| SOURCE_EXTENSIONS.contains(&e));
    !text.is_empty()
        && !text.contains(char::is_whitespace)
        && (has_source_extension || (text.contains('/') && !is_go_test_name(text)))
}

/// `TestTotal`, `TestTotal/empty`, `BenchmarkX`: go's `TestXxx` rule (the
/// letter after the prefix is not lower case).
fn is_go_test_name(text: &str) -> bool {
    let first = text.split('/').next().unwrap_or(text);
    ["Test", "Benchmark", "Example", "Fuzz"]
        .iter()
        .any(|prefix| {
            first
                .strip_prefix(prefix)
                .is_some_and(|rest| !rest.starts_with(|c: char| c.is_lowercase()))
        })
}

/// The extension of a path's last part (`py` for `tests/test_a.py`).
fn extension(path: &str) -> Option<&str> {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.rsplit_once('.')
        .map(|(_, ext)| ext)
        .filter(|e| !e.is_empty())
}

/// The path lexically normalized (`.` and empty parts dropped, `..`
/// applied), refused when absolute, when it leaves the root or when a
/// part of it reads as an option. A trailing `/` is kept; `None` is the
/// root.
fn normalize(raw: &str, path: &str) -> Result<Option<String>, TargetError> {
    if path.starts_with('/') {
        return Err(TargetError::Absolute {
            target: text_of(raw),
        });
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(TargetError::Outside {
                        target: text_of(raw),
                    });
                }
            }
            part => {
                if let Some(prefix) = part.chars().next().filter(|c| OPTION_PREFIXES.contains(c)) {
                    return Err(TargetError::Option {
                        target: text_of(raw),
                        part: "its path",
                        prefix,
                    });
                }
                parts.push(part);
            }
        }
    }
    if parts.is_empty() {
        return Ok(None);
    }
    let mut normalized = parts.join("/");
    if path.ends_with('/') {
        normalized.push('/');
    }
    Ok(Some(normalized))
}

/// The path as it is in the workspace (symbolic links resolved, a
/// directory ending with `/`), or why it cannot be run.
async fn resolve(raw: &str, path: &str, workspace: &dyn Workspace) -> Result<String, TargetError> {
    let (base, go_packages) = match path.strip_suffix(GO_PACKAGES) {
        Some(dir) if dir.is_empty() || dir.ends_with('/') => (dir, true),
        _ => (path, false),
    };
    let base = if base.is_empty() { "." } else { base };
    let resolved = paths::resolve(workspace.root(), base).map_err(|e| match e {
        PathError::Outside {
            through_symlink: None,
            ..
        } => TargetError::Outside {
            target: text_of(raw),
        },
        other => TargetError::Path {
            target: text_of(raw),
            reason: other.to_string(),
        },
    })?;
    let is_dir = match workspace.read_file(&resolved).await {
        Ok(_) => false,
        Err(WorkspaceError::IsADirectory { .. }) => true,
        Err(WorkspaceError::NotFound { suggestions, .. }) => {
            // A workspace that only knows files (an editor's buffers) has
            // directories only as the folders of its files.
            let listed = workspace.list_files(&resolved, None, 1).await;
            if resolved.is_empty() || listed.is_ok_and(|l| !l.paths.is_empty()) {
                true
            } else {
                return Err(TargetError::NoSuchFile {
                    path: base.trim_end_matches('/').to_owned(),
                    suggestions,
                });
            }
        }
        // There, but not readable as text here (too large, binary): the
        // runner may still know what to do with it.
        Err(_) => false,
    };
    if !is_dir && (go_packages || path.ends_with('/')) {
        return Err(TargetError::NoSuchFile {
            path: format!("{}/", resolved),
            suggestions: Vec::new(),
        });
    }
    Ok(match (is_dir, go_packages) {
        (true, true) if resolved.is_empty() => format!("./{GO_PACKAGES}"),
        (true, true) => format!("{resolved}/{GO_PACKAGES}"),
        (true, false) if resolved.is_empty() => "./".to_owned(),
        (true, false) => format!("{resolved}/"),
        (false, _) => resolved,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// A target as `path | name`, `-` for a missing part; `None` for
    /// the whole suite.
    fn parsed(raw: &str) -> Option<String> {
        TestTarget::parse(raw).unwrap().map(|t| {
            let part = |p: Option<&str>| p.unwrap_or("-").to_owned();
            format!("{} | {}", part(t.path()), part(t.name()))
        })
    }

    #[test]
    fn targets_split_into_path_and_name() {
        let cases: &[(&str, Option<&str>)] = &[
            (
                "tests/test_cart.py::TestCart::test_total",
                Some("tests/test_cart.py | TestCart::test_total"),
            ),
            ("./tests//test_cart.py", Some("tests/test_cart.py | -")),
            ("./tests", Some("tests | -")),
            ("tests", Some("- | tests")),
            ("tests/", Some("tests/ | -")),
            ("cart::tests::total", Some("- | cart::tests::total")),
            ("TestTotal/empty", Some("- | TestTotal/empty")),
            (
                "src/cart.test.ts > Cart > total",
                Some("src/cart.test.ts | Cart > total"),
            ),
            ("./pkg/...", Some("pkg/... | -")),
            ("tests/../cart_test.go", Some("cart_test.go | -")),
            ("tests/..::test_total", Some("- | test_total")),
            ("  ", None),
            (".", None),
            ("./", None),
        ];
        for (raw, expected) in cases {
            assert_eq!(parsed(raw).as_deref(), *expected, "{raw:?}");
        }
    }

    #[test]
    fn the_text_of_a_target_reads_back_as_the_same_target() {
        for raw in [
            "tests/test_cart.py::TestCart::test_total",
            "tests/",
            "cart::tests::total",
            "src/cart.test.ts::Cart > total",
            "pkg/...",
            "tests/test_cart.py::test_param[a - b]",
        ] {
            let target = TestTarget::parse(raw).unwrap().unwrap();
            assert_eq!(target.to_string(), raw);
            assert_eq!(TestTarget::parse(raw).unwrap(), Some(target));
        }
    }

    /// Attack (4): `run_tests` needs no approval, and its target went to
    /// the runner as a raw argument: `--basetemp=<dir>` made pytest delete
    /// a directory outside the workspace.
    #[test]
    fn a_target_starting_with_a_dash_is_not_a_test_id() {
        let cases: &[(&str, &str, char)] = &[
            ("--basetemp=/tmp/x", "the target", '-'),
            ("-k x", "the target", '-'),
            ("-- x", "the target", '-'),
            ("  --junitxml=/tmp/report.xml", "the target", '-'),
            ("-x", "the target", '-'),
            ("@args.txt", "the target", '@'),
            ("tests/t.py::--basetemp=/x", "its test name", '-'),
            ("tests/t.py:: -k", "its test name", '-'),
            ("tests/t.py::TestA::-x", "its test name", '-'),
            ("src/a.test.ts > -t x", "its test name", '-'),
            ("tests/-x/test_a.py", "its path", '-'),
            ("tests/@args/test_a.py::t", "its path", '@'),
        ];
        for (raw, part, prefix) in cases {
            match TestTarget::parse(raw) {
                Err(TargetError::Option {
                    part: p, prefix: c, ..
                }) => assert_eq!((p, c), (*part, *prefix), "{raw:?}"),
                other => panic!("{raw:?} was not refused: {other:?}"),
            }
        }
        let message = TestTarget::parse("--basetemp=/tmp/x")
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            "`--basetemp=/tmp/x` is not a test id: run_tests never passes options to the test runner, and the target starts with `-`. Give a test file or directory relative to the project root, optionally followed by ::test_name (e.g. tests/test_cart.py::test_total), or a test name alone; to run the runner with options of your own, use run_command."
        );
    }

    #[test]
    fn control_characters_are_refused() {
        assert!(matches!(
            TestTarget::parse("tests/a.py\0"),
            Err(TargetError::Control { .. })
        ));
        assert!(matches!(
            TestTarget::parse("a\nb"),
            Err(TargetError::Control { .. })
        ));
    }

    #[test]
    fn absolute_and_escaping_paths_are_refused_as_written() {
        assert_eq!(
            TestTarget::parse("/etc/passwd").unwrap_err(),
            TargetError::Absolute {
                target: "/etc/passwd".into()
            }
        );
        assert_eq!(
            TestTarget::parse("../../../etc/passwd").unwrap_err(),
            TargetError::Outside {
                target: "../../../etc/passwd".into()
            }
        );
        assert_eq!(
            TestTarget::parse("tests/../../x.py::t").unwrap_err(),
            TargetError::Outside {
                target: "tests/../../x.py::t".into()
            }
        );
    }
}
