//! What in the workspace would make a test run lie, looked for through
//! the [`Workspace`] port: files that stand in for the runner or the test
//! module ([`shadow`]), and statements and settings that change the test
//! machinery ([`machinery`]) which were not there when the task began.
//! Either ends a claim `unverified`, naming the file and the line.

use std::collections::{BTreeMap, BTreeSet};

use crate::testing::command::TestCommand;
use crate::testing::machinery::{self, Finding, FindingKey, Role};
use crate::testing::reporter::RunnerReport;
use crate::testing::shadow;
use crate::workspace::Workspace;

/// How many files the listing may return, and how many are read: a huge
/// tree is scanned in part (touched and loaded files first).
const MAX_LISTED: usize = 20_000;
const MAX_SCANNED: usize = 3_000;
/// A larger file is generated or minified, not where a trick is written.
const MAX_SCANNED_BYTES: usize = 512 * 1024;
/// All the files scanned together (the scan reads ~40 MB/s).
const MAX_SCANNED_TOTAL: usize = 64 * 1024 * 1024;
/// Files the listing skips (hidden) that the scan must see.
const HIDDEN: &[&str] = &[".cargo/config.toml", ".cargo/config", ".pytest.ini"];
/// How many findings a verdict lists.
const SHOWN: usize = 8;

/// The files a run loaded from the workspace, as its report names them.
pub(super) fn loaded(report: &RunnerReport) -> Vec<(String, Role)> {
    let imported = report.imported.iter().map(|p| (p.clone(), Role::Project));
    let plugins = report
        .plugins
        .iter()
        .map(|p| (p.clone(), Role::PytestPlugin));
    imported.chain(plugins).collect()
}

/// The machinery findings of the workspace as it is: `first` (the files
/// the task touched, those a run loaded) before the others.
pub(super) async fn scan(workspace: &dyn Workspace, first: &[(String, Role)]) -> Vec<Finding> {
    let mut order: Vec<String> = Vec::new();
    let mut roles: BTreeMap<String, Role> = BTreeMap::new();
    let mut add = |path: &str, role: Role| {
        let path = path.trim_start_matches("./");
        if !machinery::is_scanned(path) {
            return;
        }
        match roles.get(path) {
            None => {
                order.push(path.to_owned());
                roles.insert(path.to_owned(), role);
            }
            Some(Role::Project) if role == Role::PytestPlugin => {
                roles.insert(path.to_owned(), role);
            }
            Some(_) => {}
        }
    };
    for (path, role) in first {
        add(path, *role);
    }
    for path in HIDDEN {
        if workspace.exists(path).await {
            add(path, Role::Project);
        }
    }
    if let Ok(listing) = workspace.list_files("", None, MAX_LISTED).await {
        for path in &listing.paths {
            add(path, Role::Project);
        }
    }
    let mut found = Vec::new();
    let mut total = 0;
    for path in order.iter().take(MAX_SCANNED) {
        let Ok(file) = workspace.read_file(path).await else {
            continue;
        };
        if file.text.len() > MAX_SCANNED_BYTES {
            continue;
        }
        total += file.text.len();
        if total > MAX_SCANNED_TOTAL {
            break;
        }
        let role = roles.get(path).copied().unwrap_or(Role::Project);
        found.extend(machinery::scan(path, &file.text, role));
    }
    found
}

/// The findings that were not there before the task: not among
/// `baseline`'s, or — with no baseline recorded — in a file it touched.
pub(super) fn new_findings(
    now: Vec<Finding>,
    baseline: Option<&[FindingKey]>,
    touched: &[String],
) -> Vec<Finding> {
    let before: Option<BTreeSet<&FindingKey>> = baseline.map(|b| b.iter().collect());
    let mut seen = BTreeSet::new();
    let mut new: Vec<Finding> = now
        .into_iter()
        .filter(|f| match &before {
            Some(before) => !before.contains(&f.key),
            None => touched.iter().any(|t| t.trim_start_matches("./") == f.path),
        })
        .filter(|f| seen.insert((f.path.clone(), f.line, f.what.clone())))
        .collect();
    new.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    new
}

/// The baseline's keys of `findings`, sorted and without repeats.
pub(super) fn keys(findings: &[Finding]) -> Vec<FindingKey> {
    let set: BTreeSet<FindingKey> = findings.iter().map(|f| f.key.clone()).collect();
    set.into_iter().collect()
}

/// What stands in for the runner or the test module, for a run of the
/// test file `target` with `command`.
pub(super) async fn shadows(
    workspace: &dyn Workspace,
    command: Option<&TestCommand>,
    target: &str,
) -> Vec<String> {
    let command = command.cloned().unwrap_or_else(|| TestCommand::custom(""));
    let mut found = Vec::new();
    for probe in shadow::probes(&command, target) {
        if workspace.exists(&probe.path).await {
            found.push(probe.why);
        }
    }
    found
}

/// The reasons, for the verdict: each finding described, at most
/// [`SHOWN`] of them.
pub(super) fn describe(findings: &[Finding]) -> Vec<String> {
    let mut shown: Vec<String> = findings.iter().take(SHOWN).map(Finding::describe).collect();
    if findings.len() > SHOWN {
        shown.push(format!("and {} more", findings.len() - SHOWN));
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fakes::MemoryWorkspace;

    #[tokio::test]
    async fn only_what_is_new_counts() {
        let before = MemoryWorkspace::new("/w")
            .with_file("cart.py", "def total(items):\n    return 0\n")
            .with_file("tests/conftest.py", "import pytest\n")
            .with_file("helpers.py", "sys.modules['x'] = y\n");
        let baseline = keys(&scan(&before, &[]).await);
        let after = before
            .with_file(
                "cart.py",
                "import os\n\ndef total(items):\n    os._exit(0)\n",
            )
            .with_file("helpers.py", "import sys\n\nsys.modules['x'] = y\n")
            .with_file("conftest.py", "pytest_plugins = ['x']\n");
        let now = scan(&after, &[]).await;
        let new = new_findings(now.clone(), Some(&baseline), &[]);
        assert_eq!(
            describe(&new),
            [
                "cart.py:4 calls os._exit, which ends the test process at once, before any result is reported",
                "conftest.py is a conftest.py: pytest loads it into the run of every test in its folder and below",
                "conftest.py:1 sets `pytest_plugins`: pytest loads those plugins into the run",
            ]
        );
        // No baseline: the touched files' findings.
        let touched = vec!["cart.py".to_owned()];
        assert_eq!(new_findings(now, None, &touched).len(), 1);
    }

    #[tokio::test]
    async fn a_shadowing_package_is_named() {
        let ws = MemoryWorkspace::new("/w")
            .with_file("tests/test_cart.py", "")
            .with_file("tests/test_cart/__init__.py", "")
            .with_file("unittest/__main__.py", "");
        let unittest = TestCommand::new(crate::testing::command::Runner::Unittest);
        assert_eq!(
            shadows(&ws, Some(&unittest), "tests/test_cart.py").await,
            [
                "unittest/__main__.py in the workspace has the name of the test runner's own module `unittest`: `python3 -m unittest` would load it instead of the installed runner",
                "tests/test_cart/__init__.py makes a package with the name of the test module tests/test_cart.py: Python imports the package instead of the test file",
            ]
        );
    }
}
