//! Files that would stand in for the test runner or the test module: a
//! module or package at the workspace root named like a module the runner
//! is made of (`unittest/__main__.py` for `python3 -m unittest`, `pytest.py`,
//! `_pytest/`, `pluggy/`), and a package next to the target test file with
//! its name (`tests/test_cart/__init__.py` beside `tests/test_cart.py`:
//! Python imports the package, not the file). Rein's own runner is not
//! fooled by the first kind, and its report names the module that ran, but
//! neither belongs in a project: the verifier refuses a run while one is
//! there, naming it. Pure: the verifier asks the workspace which exist.

use super::command::{Runner, TestCommand};

/// A file whose presence is refused, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    pub path: String,
    pub why: String,
}

const UNITTEST: &[&str] = &["unittest"];
const PYTEST: &[&str] = &["pytest", "_pytest", "pluggy", "py", "unittest"];

/// The modules a command's runner is made of, and how it is named: a
/// configured command by the words in it.
fn runner_modules(command: &TestCommand) -> (&'static [&'static str], &str) {
    let says = |word: &str| command.base.split_whitespace().any(|w| w == word);
    match command.runner {
        Runner::Unittest => (UNITTEST, "python3 -m unittest"),
        Runner::Pytest => (PYTEST, "python3 -m pytest"),
        Runner::Custom if says("pytest") => (PYTEST, command.base.as_str()),
        Runner::Custom if says("unittest") => (UNITTEST, command.base.as_str()),
        _ => (&[], ""),
    }
}

/// The files to look for when `command` runs the test file `target`.
pub fn probes(command: &TestCommand, target: &str) -> Vec<Probe> {
    let mut probes = Vec::new();
    let (modules, command) = runner_modules(command);
    for module in modules {
        for file in [
            format!("{module}.py"),
            format!("{module}/__init__.py"),
            format!("{module}/__main__.py"),
        ] {
            probes.push(Probe {
                why: format!(
                    "{file} in the workspace has the name of the test runner's own module `{module}`: `{command}` would load it instead of the installed runner"
                ),
                path: file,
            });
        }
    }
    let target = target.trim_start_matches("./");
    if let Some(module) = target.strip_suffix(".py") {
        for init in ["__init__.py", "__init__.pyc"] {
            let path = format!("{module}/{init}");
            probes.push(Probe {
                why: format!(
                    "{path} makes a package with the name of the test module {target}: Python imports the package instead of the test file"
                ),
                path,
            });
        }
    }
    probes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_looked_for() {
        let unittest = TestCommand::new(Runner::Unittest);
        let paths: Vec<String> = probes(&unittest, "tests/test_cart.py")
            .into_iter()
            .map(|p| p.path)
            .collect();
        assert_eq!(
            paths,
            [
                "unittest.py",
                "unittest/__init__.py",
                "unittest/__main__.py",
                "tests/test_cart/__init__.py",
                "tests/test_cart/__init__.pyc",
            ]
        );
        assert_eq!(
            probes(&unittest, "test_cart.py")[3].why,
            "test_cart/__init__.py makes a package with the name of the test module test_cart.py: Python imports the package instead of the test file"
        );
        let pytest = TestCommand::new(Runner::Pytest);
        assert!(
            probes(&pytest, "t.py")
                .iter()
                .any(|p| p.path == "_pytest/__init__.py")
        );
        assert!(probes(&TestCommand::new(Runner::Cargo), "tests/cart.rs").is_empty());
        // A configured command: by what it runs; the test's package always.
        let custom = TestCommand::custom("python3 -m pytest -x {target}");
        assert!(
            probes(&custom, "t.py")
                .iter()
                .any(|p| p.path == "pytest.py")
        );
        let make = probes(&TestCommand::custom("make test"), "tests/test_cart.py");
        assert_eq!(make[0].path, "tests/test_cart/__init__.py");
    }
}
