//! JUnit XML reports a test command writes (the `test_report` setting):
//! which tests passed, for runners whose output does not name them — a
//! wrapper script, `make test`, tox, gradle, maven, rspec with a JUnit
//! formatter. Read after the command ends; only files the run wrote count
//! (new, or changed since a [`snapshot`] taken before it), so a report left
//! by an earlier run (or committed with the repository) proves nothing.

use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::path::{Component, Path};
use std::time::SystemTime;

use globset::{Glob, GlobMatcher};
use quick_xml::Reader;
use quick_xml::events::Event;
use rein_fsroot::{Links, Root};

/// How a `<testcase>` ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseOutcome {
    Passed,
    Failed,
    Skipped,
}

/// One `<testcase classname=… name=…>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    pub class: String,
    pub name: String,
    pub outcome: CaseOutcome,
}

/// What the reports of one run said.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reports {
    pub cases: Vec<Case>,
    /// The report files read, workspace-relative.
    pub files: Vec<String>,
    /// Files that matched but could not be read as JUnit XML, with why.
    pub unreadable: Vec<String>,
}

/// Bounds, so a huge tree or report costs little.
const MAX_ENTRIES: usize = 20_000;
const MAX_DEPTH: usize = 16;
const MAX_FILES: usize = 200;
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
const MAX_CASES: usize = 200_000;

/// Directories never searched for reports.
const SKIPPED_DIRS: &[&str] = &[".git", "node_modules", ".rein"];

/// Whether `pattern` names files inside the workspace: relative, no `..`.
pub fn valid_pattern(pattern: &str) -> bool {
    let path = Path::new(pattern);
    !pattern.trim().is_empty()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        && Glob::new(pattern).is_ok()
}

/// The matching files as they were before a run: modification time and
/// size by workspace-relative path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot(HashMap<String, (Option<SystemTime>, u64)>);

/// The files matching `pattern` now, to tell afterwards which the run wrote.
pub fn snapshot(root: &Path, pattern: &str) -> Snapshot {
    let mut found = Snapshot::default();
    matching(root, pattern, &mut |rel, meta| {
        found
            .0
            .insert(rel.to_owned(), (meta.modified().ok(), meta.len()));
        true
    });
    found
}

/// The reports under `root` matching `pattern` (a relative path or glob)
/// that are new or changed since `before`. Symbolic links are not followed.
pub fn collect(root: &Path, pattern: &str, before: &Snapshot) -> Reports {
    let mut reports = Reports::default();
    if !valid_pattern(pattern) {
        reports
            .unreadable
            .push(format!("{pattern}: not a path inside the workspace"));
        return reports;
    }
    matching(root, pattern, &mut |rel, meta| {
        let now = (meta.modified().ok(), meta.len());
        if before.0.get(rel) != Some(&now) {
            read(root, rel, meta.len(), &mut reports);
        }
        reports.files.len() < MAX_FILES
    });
    reports
}

/// Calls `found` with each regular file matching `pattern`, until it
/// returns false.
fn matching(root: &Path, pattern: &str, found: &mut dyn FnMut(&str, &fs::Metadata) -> bool) {
    if !valid_pattern(pattern) {
        return;
    }
    let pattern = pattern.trim_start_matches("./");
    let Ok(glob) = Glob::new(pattern) else {
        return;
    };
    // Walk only below the part of the pattern that has no wildcard.
    let parts: Vec<&str> = pattern.split('/').collect();
    let fixed: Vec<&str> = parts
        .iter()
        .copied()
        .take_while(|part| !part.contains(['*', '?', '[', '{']))
        .collect();
    if fixed.len() == parts.len() {
        // No wildcard: one file.
        if no_links(root, pattern)
            && let Ok(meta) = fs::symlink_metadata(root.join(pattern))
            && meta.is_file()
        {
            found(pattern, &meta);
        }
        return;
    }
    let start = fixed.join("/");
    if !no_links(root, &start) {
        return;
    }
    let mut walk = Walk {
        root,
        matcher: glob.compile_matcher(),
        visited: 0,
        found,
    };
    walk.dir(&start, 0);
}

/// Whether no part of `rel` below `root` is a symbolic link (a report is
/// read from the workspace, never through a link out of it).
fn no_links(root: &Path, rel: &str) -> bool {
    let mut path = root.to_path_buf();
    rel.split('/').filter(|p| !p.is_empty()).all(|part| {
        path.push(part);
        fs::symlink_metadata(&path).is_ok_and(|m| !m.file_type().is_symlink())
    })
}

/// A bounded walk below the fixed part of a pattern.
struct Walk<'a> {
    root: &'a Path,
    matcher: GlobMatcher,
    visited: usize,
    found: &'a mut dyn FnMut(&str, &fs::Metadata) -> bool,
}

impl Walk<'_> {
    /// Returns false once the walk should stop.
    fn dir(&mut self, rel: &str, depth: usize) -> bool {
        let Ok(entries) = fs::read_dir(self.root.join(rel)) else {
            return true;
        };
        for entry in entries.flatten() {
            self.visited += 1;
            if self.visited > MAX_ENTRIES {
                return false;
            }
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                continue;
            };
            let path = if rel.is_empty() {
                name.to_owned()
            } else {
                format!("{rel}/{name}")
            };
            // `file_type` does not follow links: a link is neither.
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && depth < MAX_DEPTH && !SKIPPED_DIRS.contains(&name) {
                if !self.dir(&path, depth + 1) {
                    return false;
                }
            } else if kind.is_file()
                && self.matcher.is_match(&path)
                && let Ok(meta) = entry.metadata()
                && !(self.found)(&path, &meta)
            {
                return false;
            }
        }
        true
    }
}

fn read(root: &Path, rel: &str, len: u64, reports: &mut Reports) {
    if len > MAX_FILE_BYTES {
        reports.unreadable.push(format!(
            "{rel}: larger than {} MiB",
            MAX_FILE_BYTES / 1024 / 1024
        ));
        return;
    }
    let mut bytes = Vec::new();
    // Opened beneath the workspace in one step, through no link at all
    // (the checks above only chose the name).
    let read = Root::open(root, Links::Refuse)
        .and_then(|fs| fs.open_file(rel))
        .and_then(|f| f.take(MAX_FILE_BYTES).read_to_end(&mut bytes));
    if let Err(e) = read {
        reports.unreadable.push(format!("{rel}: {e}"));
        return;
    }
    match parse(&bytes) {
        Ok(cases) => {
            let room = MAX_CASES.saturating_sub(reports.cases.len());
            reports.cases.extend(cases.into_iter().take(room));
            reports.files.push(rel.to_owned());
        }
        Err(why) => reports.unreadable.push(format!("{rel}: {why}")),
    }
}

/// The test cases of a JUnit XML document (`<testsuites>`, `<testsuite>`
/// or a bare `<testcase>` list): a case is passed unless it holds a
/// `<failure>`, `<error>` or `<skipped>`.
pub fn parse(xml: &[u8]) -> Result<Vec<Case>, String> {
    let mut reader = Reader::from_reader(xml);
    let mut buf = Vec::new();
    let mut cases = Vec::new();
    let mut open: Option<Case> = None;
    let mut saw_root = false;
    loop {
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| format!("not valid XML ({e})"))?;
        let empty = matches!(event, Event::Empty(_));
        match event {
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == b"testcase" => {
                let case = Case {
                    class: attribute(&e, b"classname"),
                    name: attribute(&e, b"name"),
                    outcome: CaseOutcome::Passed,
                };
                if empty {
                    cases.push(case);
                } else {
                    open = Some(case);
                }
            }
            Event::Start(e) | Event::Empty(e) => {
                let tag = e.local_name();
                saw_root |= matches!(tag.as_ref(), b"testsuites" | b"testsuite");
                if let Some(case) = &mut open {
                    match tag.as_ref() {
                        b"failure" | b"error" => case.outcome = CaseOutcome::Failed,
                        b"skipped" if case.outcome == CaseOutcome::Passed => {
                            case.outcome = CaseOutcome::Skipped
                        }
                        _ => {}
                    }
                }
            }
            Event::End(e) if e.local_name().as_ref() == b"testcase" => {
                if let Some(case) = open.take() {
                    cases.push(case);
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if !saw_root && cases.is_empty() {
        return Err("no <testsuite> or <testcase> in it".into());
    }
    Ok(cases)
}

fn attribute(e: &quick_xml::events::BytesStart<'_>, key: &[u8]) -> String {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == key)
        .and_then(|a| a.unescape_value().ok().map(|v| v.into_owned()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PYTEST: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="1" skipped="1" tests="4">
<testcase classname="tests.test_cart.TestCart" name="test_total" time="0.001" />
<testcase classname="tests.test_cart.TestCart" name="test_count" time="0.001"><failure message="assert 0 == 2">assert 0 == 2</failure></testcase>
<testcase classname="tests.test_cart.TestCart" name="test_later" time="0.000"><skipped type="pytest.skip" message="later" /></testcase>
<testcase classname="tests.test_cart" name="test_import"><error message="boom"/></testcase>
</testsuite></testsuites>"#;

    #[test]
    fn each_case_and_how_it_ended() {
        let cases = parse(PYTEST.as_bytes()).unwrap();
        let seen: Vec<(&str, &str, CaseOutcome)> = cases
            .iter()
            .map(|c| (c.class.as_str(), c.name.as_str(), c.outcome))
            .collect();
        assert_eq!(
            seen,
            vec![
                (
                    "tests.test_cart.TestCart",
                    "test_total",
                    CaseOutcome::Passed
                ),
                (
                    "tests.test_cart.TestCart",
                    "test_count",
                    CaseOutcome::Failed
                ),
                (
                    "tests.test_cart.TestCart",
                    "test_later",
                    CaseOutcome::Skipped
                ),
                ("tests.test_cart", "test_import", CaseOutcome::Failed),
            ]
        );
    }

    #[test]
    fn what_is_not_a_report_is_an_error() {
        for text in [
            "",
            "all tests passed",
            "<html><body>ok</body></html>",
            "<testsuite",
        ] {
            assert!(parse(text.as_bytes()).is_err(), "{text:?}");
        }
        // Escaped names are read as the runner wrote them.
        let cases =
            parse(br#"<testsuite><testcase classname="a" name="adds &amp; counts"/></testsuite>"#)
                .unwrap();
        assert_eq!(cases[0].name, "adds & counts");
    }

    #[test]
    fn patterns_stay_inside_the_workspace() {
        for ok in [
            "report.xml",
            "build/test-results/**/*.xml",
            "./out/junit.xml",
        ] {
            assert!(valid_pattern(ok), "{ok}");
        }
        for bad in [
            "/tmp/report.xml",
            "../report.xml",
            "out/../../x.xml",
            "",
            "a/[b.xml",
        ] {
            assert!(!valid_pattern(bad), "{bad}");
        }
    }

    /// A report there before the run (an earlier run's, or one committed
    /// with the repository) counts only if the run rewrote it.
    #[test]
    fn only_reports_the_run_wrote_count() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let unit = root.join("build/results/unit");
        fs::create_dir_all(&unit).unwrap();
        fs::write(unit.join("old.xml"), PYTEST).unwrap();
        fs::write(unit.join("rewritten.xml"), "<testsuite/>").unwrap();
        let pattern = "build/results/**/*.xml";
        let before = snapshot(root, pattern);
        let single = snapshot(root, "build/results/unit/old.xml");
        // The run writes these.
        fs::write(unit.join("new.xml"), PYTEST).unwrap();
        fs::write(unit.join("rewritten.xml"), PYTEST).unwrap();
        fs::write(unit.join("broken.xml"), "<testsuite").unwrap();
        let mut reports = collect(root, pattern, &before);
        reports.files.sort();
        assert_eq!(
            reports.files,
            vec![
                "build/results/unit/new.xml",
                "build/results/unit/rewritten.xml"
            ]
        );
        assert_eq!(reports.cases.len(), 8);
        assert_eq!(reports.unreadable.len(), 1, "{:?}", reports.unreadable);
        // A single path, without wildcards.
        let none = Snapshot::default();
        assert_eq!(
            collect(root, "build/results/unit/new.xml", &none)
                .cases
                .len(),
            4
        );
        assert!(
            collect(root, "build/results/unit/old.xml", &single)
                .cases
                .is_empty()
        );
    }

    #[test]
    fn links_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("report.xml"), PYTEST).unwrap();
        let since = Snapshot::default();
        std::os::unix::fs::symlink(
            outside.path().join("report.xml"),
            dir.path().join("report.xml"),
        )
        .unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        assert!(collect(dir.path(), "report.xml", &since).cases.is_empty());
        assert!(collect(dir.path(), "out/*.xml", &since).cases.is_empty());
        assert!(collect(dir.path(), "**/*.xml", &since).cases.is_empty());
        assert!(
            collect(dir.path(), "out/report.xml", &since)
                .cases
                .is_empty()
        );
    }
}
