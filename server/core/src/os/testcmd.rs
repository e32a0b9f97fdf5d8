//! Which test runner a project uses, from its files only (nothing is run):
//! [`detect`]. The command it gives is built by
//! [`crate::testing::command`].

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::testing::command::{Runner, TestCommand};

/// Finds how the project at `root` runs its tests, looking at its files
/// only (nothing is run). When several ecosystems are present the first of
/// cargo, go, python, node wins.
pub fn detect(root: &Path) -> Option<TestCommand> {
    let runner = if root.join("Cargo.toml").is_file() {
        Runner::Cargo
    } else if root.join("go.mod").is_file() {
        Runner::Go
    } else if has_pytest_config(root) {
        Runner::Pytest
    } else if has_python_tests(root) {
        Runner::Unittest
    } else {
        node_runner(root)?
    };
    Some(TestCommand::new(runner))
}

/// Configuration files are read up to this size: a larger one is not a
/// configuration file we need to understand.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// How deep and how wide the search for Python test files goes, so
/// detection stays quick in a huge tree.
const MAX_SCAN_DEPTH: usize = 4;
const MAX_SCAN_ENTRIES: usize = 5_000;

/// Directories that never hold the project's own tests.
const SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "venv",
    "env",
    "__pycache__",
    "site-packages",
    "target",
    "build",
    "dist",
];

fn has_pytest_config(root: &Path) -> bool {
    let file = |name: &str| root.join(name).is_file();
    file("pytest.ini")
        || file(".pytest.ini")
        || file("conftest.py")
        || file("tests/conftest.py")
        || has_section(&root.join("pyproject.toml"), |l| {
            l.starts_with("[tool.pytest")
        })
        || has_section(&root.join("setup.cfg"), |l| l == "[tool:pytest]")
        || has_section(&root.join("tox.ini"), |l| l == "[pytest]")
}

/// Whether a text file has a line (trimmed) for which `header` holds.
fn has_section(path: &Path, header: impl Fn(&str) -> bool) -> bool {
    read_capped(path).is_some_and(|text| text.lines().any(|l| header(l.trim())))
}

fn read_capped(path: &Path) -> Option<String> {
    let file = fs::File::open(path).ok()?;
    let mut text = String::new();
    file.take(MAX_CONFIG_BYTES).read_to_string(&mut text).ok()?;
    Some(text)
}

/// Whether a `test_*.py` file is near the root (unittest's discovery
/// finds those).
fn has_python_tests(root: &Path) -> bool {
    let mut pending: Vec<(PathBuf, usize)> = vec![(root.to_path_buf(), 0)];
    let mut seen = 0;
    while let Some((dir, depth)) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_SCAN_ENTRIES {
                return false;
            }
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_file() && name.starts_with("test_") && name.ends_with(".py") {
                return true;
            }
            let skipped = name.starts_with('.') || SKIPPED_DIRS.contains(&name.as_ref());
            if kind.is_dir() && !skipped && depth < MAX_SCAN_DEPTH {
                pending.push((entry.path(), depth + 1));
            }
        }
    }
    false
}

/// npm's placeholder `test` script, which only fails.
const NPM_PLACEHOLDER: &str = "Error: no test specified";

/// vitest or jest when the `test` script or the dependencies name one,
/// else the `test` script itself.
fn node_runner(root: &Path) -> Option<Runner> {
    let text = read_capped(&root.join("package.json"))?;
    let package: serde_json::Value = serde_json::from_str(&text).ok()?;
    let script = package
        .get("scripts")
        .and_then(|s| s.get("test"))
        .and_then(|t| t.as_str())
        .filter(|s| !s.contains(NPM_PLACEHOLDER));
    let script_uses = |tool: &str| script.is_some_and(|s| s.contains(tool));
    let depends_on = |tool: &str| {
        ["dependencies", "devDependencies"]
            .iter()
            .any(|k| package.get(k).and_then(|d| d.get(tool)).is_some())
    };
    [Runner::Vitest, Runner::Jest]
        .into_iter()
        .find(|r| script_uses(js_tool(*r)))
        .or_else(|| {
            [Runner::Vitest, Runner::Jest]
                .into_iter()
                .find(|r| depends_on(js_tool(*r)))
        })
        .or(script.map(|_| Runner::Npm))
}

fn js_tool(runner: Runner) -> &'static str {
    match runner {
        Runner::Vitest => "vitest",
        _ => "jest",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    struct Project(tempfile::TempDir);

    impl Project {
        fn new(files: &[(&str, &str)]) -> Self {
            let dir = tempfile::tempdir().unwrap();
            for (path, text) in files {
                let path = dir.path().join(path);
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                fs::write(path, text).unwrap();
            }
            Self(dir)
        }

        fn runner(&self) -> Option<Runner> {
            detect(self.0.path()).map(|c| c.runner)
        }
    }

    /// A project's files: path and content.
    type Files = &'static [(&'static str, &'static str)];

    #[test]
    fn detects_each_ecosystem() {
        use Runner::*;
        let cases: &[(Files, Option<Runner>)] = &[
            (
                &[("Cargo.toml", "[package]\nname = \"cart\"\n")],
                Some(Cargo),
            ),
            (&[("go.mod", "module example.com/cart\n")], Some(Go)),
            (&[("pytest.ini", "[pytest]\n")], Some(Pytest)),
            (&[("conftest.py", "")], Some(Pytest)),
            (&[("tests/conftest.py", "")], Some(Pytest)),
            (
                &[(
                    "pyproject.toml",
                    "[project]\nname='c'\n\n[tool.pytest.ini_options]\n",
                )],
                Some(Pytest),
            ),
            (
                &[("setup.cfg", "[metadata]\n[tool:pytest]\naddopts = -q\n")],
                Some(Pytest),
            ),
            (&[("tox.ini", "[tox]\n[pytest]\n")], Some(Pytest)),
            (
                &[("tests/test_cart.py", "import unittest\n")],
                Some(Unittest),
            ),
            (
                &[("pyproject.toml", "[project]\n"), ("test_cart.py", "")],
                Some(Unittest),
            ),
            (&[("pyproject.toml", "[project]\nname='c'\n")], None),
            (
                &[("package.json", r#"{"devDependencies": {"vitest": "^3"}}"#)],
                Some(Vitest),
            ),
            (
                &[("package.json", r#"{"devDependencies": {"jest": "^30"}}"#)],
                Some(Jest),
            ),
            (
                &[(
                    "package.json",
                    r#"{"scripts": {"test": "vitest"}, "devDependencies": {"jest": "1"}}"#,
                )],
                Some(Vitest),
            ),
            (
                &[("package.json", r#"{"scripts": {"test": "mocha"}}"#)],
                Some(Npm),
            ),
            (
                &[(
                    "package.json",
                    r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#,
                )],
                None,
            ),
            (&[("package.json", "{ not json")], None),
            (&[("README.md", "hello")], None),
            (&[], None),
            // Several at once: cargo, go, python, node.
            (
                &[("Cargo.toml", ""), ("go.mod", ""), ("pytest.ini", "")],
                Some(Cargo),
            ),
            (
                &[("go.mod", ""), ("pytest.ini", ""), ("package.json", "{}")],
                Some(Go),
            ),
            (
                &[
                    ("pytest.ini", ""),
                    ("package.json", r#"{"devDependencies": {"jest": "1"}}"#),
                ],
                Some(Pytest),
            ),
        ];
        for (files, expected) in cases {
            assert_eq!(Project::new(files).runner(), *expected, "{files:?}");
        }
    }

    #[test]
    fn python_tests_are_looked_for_only_where_they_live() {
        let hidden = Project::new(&[
            (".venv/lib/test_x.py", ""),
            ("node_modules/p/test_y.py", ""),
        ]);
        assert_eq!(hidden.runner(), None);
        let deep = Project::new(&[("a/b/c/d/e/f/test_deep.py", "")]);
        assert_eq!(deep.runner(), None);
    }

    #[test]
    fn detection_gives_the_usual_command() {
        let project = Project::new(&[("go.mod", "module x\n")]);
        assert_eq!(
            detect(project.0.path()),
            Some(TestCommand {
                runner: Runner::Go,
                base: "go test ./...".into(),
                report: None,
            })
        );
        assert_eq!(detect(Path::new("/nonexistent/rein/project")), None);
    }
}
