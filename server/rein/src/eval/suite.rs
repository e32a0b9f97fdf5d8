//! A suite of fix-the-failing-test tasks, as `rein eval` reads it from disk:
//!
//! ```text
//! <suite>/suite.toml            name, description, source, license, attribution
//! <suite>/tasks/<id>/task.toml  fix_test or [fix_error], check, split (and program, for people)
//! <suite>/tasks/<id>/project/   what the agent works on (copied for every run)
//! <suite>/tasks/<id>/heldout/   tests the agent never sees, copied in afterwards
//! <suite>/tasks/<id>/scenario.json   the scripted model's replies (optional)
//! ```
//!
//! A task names the failing test it is about (`fix_test = "PATH::NAME"`),
//! or a diagnostic a checker reports (`[fix_error]`: `file`, `line`, and
//! optionally `message`), as `rein run --fix-error FILE:LINE[:MESSAGE]`
//! takes it.
//!
//! `check` is the command that judges the result: it runs on the agent's
//! copy after the project's own files under `tests/` are put back as they
//! were and the held-out files are added.

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

#[derive(Debug)]
pub struct Suite {
    pub name: String,
    pub root: PathBuf,
    pub attribution: Option<String>,
    pub tasks: Vec<Task>,
}

#[derive(Clone, Debug)]
pub struct Task {
    pub id: String,
    pub split: String,
    /// `PATH::NAME`, as `rein run --fix-test` takes it; empty when the
    /// task names a diagnostic instead (`fix_error`).
    pub fix_test: String,
    /// The diagnostic to fix, when the task names one instead of a test.
    pub fix_error: Option<FixError>,
    /// A shell command, run in the project copy.
    pub check: String,
    pub project: PathBuf,
    pub heldout: Option<PathBuf>,
    pub scenario: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    name: String,
    #[serde(default)]
    #[allow(dead_code)] // for people reading the file
    description: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    source: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    license: Option<String>,
    #[serde(default)]
    attribution: Option<String>,
}

/// A diagnostic a suite task names: where, and what it says.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixError {
    /// Inside the project.
    pub file: String,
    /// 1-based.
    pub line: u32,
    /// Its message (or the start of it), when the line has several.
    #[serde(default)]
    pub message: Option<String>,
}

impl FixError {
    /// `FILE:LINE[:MESSAGE]`, as `rein run --fix-error` takes it.
    pub fn argument(&self) -> String {
        match &self.message {
            Some(message) => format!("{}:{}:{message}", self.file, self.line),
            None => format!("{}:{}", self.file, self.line),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskFile {
    #[serde(default)]
    fix_test: Option<String>,
    #[serde(default)]
    fix_error: Option<FixError>,
    check: String,
    #[serde(default = "default_split")]
    split: String,
    #[serde(default)]
    #[allow(dead_code)] // for people reading the file
    program: Option<String>,
}

fn default_split() -> String {
    "dev".to_owned()
}

/// Which tasks to run.
#[derive(Debug, Default)]
pub struct Selection {
    /// Only these ids (all when empty).
    pub ids: Vec<String>,
    /// Only this split (all when `None`).
    pub split: Option<String>,
}

impl Suite {
    pub fn load(root: &Path) -> Result<Self, String> {
        let root = root
            .canonicalize()
            .map_err(|e| format!("the suite {}: {e}", root.display()))?;
        let suite_file = root.join("suite.toml");
        let text = std::fs::read_to_string(&suite_file)
            .map_err(|e| format!("{}: {e}", suite_file.display()))?;
        let meta: SuiteFile =
            toml::from_str(&text).map_err(|e| format!("{}: {e}", suite_file.display()))?;
        let tasks_dir = root.join("tasks");
        let entries =
            std::fs::read_dir(&tasks_dir).map_err(|e| format!("{}: {e}", tasks_dir.display()))?;
        let mut tasks = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", tasks_dir.display()))?;
            if !entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                continue;
            }
            let id = entry.file_name().to_string_lossy().into_owned();
            tasks.push(Task::load(&id, &entry.path())?);
        }
        if tasks.is_empty() {
            return Err(format!("{}: no tasks", tasks_dir.display()));
        }
        tasks.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(Self {
            name: meta.name,
            root,
            attribution: meta.attribution,
            tasks,
        })
    }

    /// The tasks `selection` names, in order; an id the suite lacks is an
    /// error (a typo must not shrink the run silently).
    pub fn select(&self, selection: &Selection) -> Result<Vec<&Task>, String> {
        for id in &selection.ids {
            if !self.tasks.iter().any(|t| &t.id == id) {
                return Err(format!("the suite {} has no task {id:?}", self.name));
            }
        }
        let chosen: Vec<&Task> = self
            .tasks
            .iter()
            .filter(|t| selection.ids.is_empty() || selection.ids.contains(&t.id))
            .filter(|t| selection.split.as_ref().is_none_or(|s| &t.split == s))
            .collect();
        if chosen.is_empty() {
            return Err("no task of the suite matches the selection".to_owned());
        }
        Ok(chosen)
    }
}

impl Task {
    fn load(id: &str, dir: &Path) -> Result<Self, String> {
        if id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
            || id.starts_with('.')
        {
            return Err(format!(
                "{}: a task's folder name is its id: letters, digits, `_`, `-`, `.`",
                dir.display()
            ));
        }
        let task_file = dir.join("task.toml");
        let text = std::fs::read_to_string(&task_file)
            .map_err(|e| format!("{}: {e}", task_file.display()))?;
        let file: TaskFile =
            toml::from_str(&text).map_err(|e| format!("{}: {e}", task_file.display()))?;
        let bad = |what: &str| format!("{}: {what}", task_file.display());
        let project = dir.join("project");
        let fix_test = match (file.fix_test, &file.fix_error) {
            (Some(fix_test), None) => {
                let Some((path, name)) = fix_test.split_once("::") else {
                    return Err(bad("fix_test is PATH::NAME"));
                };
                if name.trim().is_empty() || !is_plain_relative(path) {
                    return Err(bad("fix_test is PATH::NAME with a path inside the project"));
                }
                if !project.join(path).is_file() {
                    return Err(bad(&format!("the project has no test file {path}")));
                }
                fix_test
            }
            (None, Some(error)) => {
                if !is_plain_relative(&error.file) || error.line == 0 {
                    return Err(bad(
                        "fix_error names a file inside the project and a line (from 1)",
                    ));
                }
                if !project.join(&error.file).is_file() {
                    return Err(bad(&format!("the project has no file {}", error.file)));
                }
                String::new()
            }
            _ => {
                return Err(bad(
                    "a task names either a failing test (fix_test) or a diagnostic ([fix_error]), one of them",
                ));
            }
        };
        if file.check.trim().is_empty() {
            return Err(bad("check is the command that judges the result"));
        }
        let optional = |p: PathBuf| p.exists().then_some(p);
        Ok(Self {
            id: id.to_owned(),
            split: file.split,
            fix_test,
            fix_error: file.fix_error,
            check: file.check,
            project,
            heldout: optional(dir.join("heldout")),
            scenario: optional(dir.join("scenario.json")),
        })
    }
}

/// A relative path of plain names (no `..`, no root).
fn is_plain_relative(path: &str) -> bool {
    let path = Path::new(path);
    !path.as_os_str().is_empty() && path.components().all(|c| matches!(c, Component::Normal(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(dir: &Path, id: &str, toml: &str) {
        let task = dir.join("tasks").join(id);
        std::fs::create_dir_all(task.join("project/tests")).unwrap();
        std::fs::write(task.join("project/tests/test_a.py"), "").unwrap();
        std::fs::write(task.join("task.toml"), toml).unwrap();
    }

    fn suite(tasks: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("suite.toml"), "name = \"s\"\n").unwrap();
        for (id, toml) in tasks {
            task(dir.path(), id, toml);
        }
        dir
    }

    const GOOD: &str = "fix_test = \"tests/test_a.py::T::t\"\ncheck = \"true\"\n";

    #[test]
    fn tasks_load_in_order_with_their_split() {
        let dir = suite(&[("b", GOOD), ("a", &format!("{GOOD}split = \"holdout\"\n"))]);
        let suite = Suite::load(dir.path()).unwrap();
        let ids: Vec<_> = suite.tasks.iter().map(|t| (&*t.id, &*t.split)).collect();
        assert_eq!(ids, [("a", "holdout"), ("b", "dev")]);
        let dev = suite
            .select(&Selection {
                ids: vec![],
                split: Some("dev".into()),
            })
            .unwrap();
        assert_eq!(dev.len(), 1);
    }

    #[test]
    fn a_typo_in_a_task_id_is_an_error_not_a_smaller_run() {
        let dir = suite(&[("a", GOOD)]);
        let suite = Suite::load(dir.path()).unwrap();
        let error = suite
            .select(&Selection {
                ids: vec!["A".into()],
                split: None,
            })
            .unwrap_err();
        assert!(error.contains("no task \"A\""), "{error}");
    }

    #[test]
    fn a_fix_test_outside_the_project_is_refused() {
        for fix_test in [
            "../x.py::t",
            "/etc/passwd::t",
            "tests/test_a.py",
            "tests/nope.py::t",
        ] {
            let dir = suite(&[(
                "a",
                &format!("fix_test = \"{fix_test}\"\ncheck = \"true\"\n"),
            )]);
            let error = Suite::load(dir.path()).unwrap_err();
            assert!(
                error.contains("fix_test") || error.contains("no test file"),
                "{error}"
            );
        }
    }

    #[test]
    fn an_unknown_key_is_an_error() {
        let dir = suite(&[("a", &format!("{GOOD}shell = \"rm -rf /\"\n"))]);
        assert!(
            Suite::load(dir.path())
                .unwrap_err()
                .contains("unknown field")
        );
    }

    #[test]
    fn a_task_may_name_a_diagnostic_instead_of_a_test() {
        let dir = suite(&[
            (
                "err",
                "check = \"true\"\n[fix_error]\nfile = \"tests/test_a.py\"\nline = 7\nmessage = \"Argument 1\"\n",
            ),
            (
                "bare",
                "check = \"true\"\n[fix_error]\nfile = \"tests/test_a.py\"\nline = 1\n",
            ),
        ]);
        let loaded = Suite::load(dir.path()).unwrap();
        let errors: Vec<String> = loaded
            .tasks
            .iter()
            .map(|t| t.fix_error.as_ref().unwrap().argument())
            .collect();
        assert_eq!(
            errors,
            ["tests/test_a.py:1", "tests/test_a.py:7:Argument 1"]
        );
        assert!(loaded.tasks.iter().all(|t| t.fix_test.is_empty()));
        for (toml, why) in [
            (
                "check = \"true\"\nfix_test = \"tests/test_a.py::t\"\n[fix_error]\nfile = \"tests/test_a.py\"\nline = 1\n",
                "either a failing test",
            ),
            ("check = \"true\"\n", "either a failing test"),
            (
                "check = \"true\"\n[fix_error]\nfile = \"../x.py\"\nline = 1\n",
                "inside the project",
            ),
            (
                "check = \"true\"\n[fix_error]\nfile = \"tests/test_a.py\"\nline = 0\n",
                "a line (from 1)",
            ),
            (
                "check = \"true\"\n[fix_error]\nfile = \"nope.py\"\nline = 3\n",
                "no file nope.py",
            ),
        ] {
            let dir = suite(&[("a", toml)]);
            let error = Suite::load(dir.path()).unwrap_err();
            assert!(error.contains(why), "{toml}: {error}");
        }
    }
}
