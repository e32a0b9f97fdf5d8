//! "▶ Fix with Rein" above each test of a document that failed in the
//! last run Rein knows of (issue 35: nothing marked a failing test as one
//! Rein can fix; the light bulb showed only inside the test's body).
//!
//! The tasks' runs say which tests failed and which passed
//! ([`TaskEvent::TestOutcomes`]: the model's `run_tests`, the verifier's
//! checks, the baseline); [`KnownOutcomes`] keeps the failed names, a later
//! pass takes a name back. A lens is offered on a test of the buffer whose
//! file and qualified name a failed name denotes (by the rules the verifier
//! uses to find a target among a run's passes), with the same command and
//! argument as the code action. The names are the runner's words: only
//! matched, never shown.
//!
//! [`TaskEvent::TestOutcomes`]: rein_core::ports::TaskEvent::TestOutcomes

use rein_core::testfind;
use rein_core::testing::passes::Passes;
use serde_json::json;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{CodeLens, Command, Position, Range, Uri};

use crate::ext::commands;
use crate::session::Session;

/// The lens's title.
pub const TITLE: &str = "▶ Fix with Rein";

/// A run's outcomes arrived: remember them and, if the failed set changed
/// and the client can be asked, have it ask for the lenses again. The
/// request is not awaited here: the task's progress must not wait on it.
pub fn outcomes(client: &Client, session: &Session, failed: &[String], passed: &[String]) {
    if session.test_outcomes.record(failed, passed) && session.caps().code_lens_refresh {
        let client = client.clone();
        // Bounded like every request to the client; a client that never
        // answers only costs the lenses their refresh.
        drop(crate::client_requests::spawn(
            "workspace/codeLens/refresh",
            session.options.client_request_timeout,
            async move { client.code_lens_refresh().await },
        ));
    }
}

/// The lenses of the document `uri`: one above each test that failed.
pub fn lenses(session: &Session, uri: &Uri) -> Vec<CodeLens> {
    let Some(path) = session.relative_path(uri) else {
        return Vec::new();
    };
    let failed = session.test_outcomes.failed();
    if failed.is_empty() {
        return Vec::new();
    }
    let (Some(lang), Some(snapshot)) = (
        testfind::lang_for_path(&path),
        session.docs.snapshot(uri.as_str()),
    ) else {
        return Vec::new();
    };
    testfind::tests_in(&snapshot.text(), lang)
        .into_iter()
        .filter(|test| {
            failed
                .iter()
                .any(|f| Passes::names_test(f, &path, &test.qualified))
        })
        .map(|test| {
            let at = Position {
                line: u32::try_from(test.name_line).unwrap_or(u32::MAX),
                character: 0,
            };
            let argument = json!({"uri": uri.as_str(), "position": at, "testName": test.qualified});
            CodeLens {
                range: Range { start: at, end: at },
                command: Some(Command {
                    title: TITLE.to_owned(),
                    command: commands::FIX_TEST.to_owned(),
                    arguments: Some(vec![argument]),
                }),
                data: None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::path::Path;

    use super::*;

    const TEST_FILE: &str = include_str!("../../../app/demo/project/tests/test_cart.py");

    fn session() -> (Session, Uri) {
        let session = Session::new(crate::ServerOptions::default());
        let root = Path::new("/work/project");
        session.root.set(root.to_path_buf()).unwrap();
        let uri = Uri::from_file_path(root.join("tests/test_cart.py")).unwrap();
        session.docs.open(uri.as_str(), "python", 1, TEST_FILE);
        (session, uri)
    }

    fn shown(session: &Session, uri: &Uri) -> Vec<String> {
        lenses(session, uri)
            .iter()
            .map(|l| {
                let c = l.command.as_ref().unwrap();
                let arg = &c.arguments.as_ref().unwrap()[0];
                format!(
                    "{} {} {} {}",
                    l.range.start.line, c.title, c.command, arg["testName"]
                )
            })
            .collect()
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_lens_on_each_failed_test_only_until_it_passes() {
        let (session, uri) = session();
        assert_eq!(shown(&session, &uri), Vec::<String>::new());
        // unittest's name for it (the baseline), then pytest's (the fix).
        assert!(session.test_outcomes.record(
            &names(&["tests.test_cart.TestCart.test_total"]),
            &names(&["tests.test_cart.TestCart.test_count"])
        ));
        expect_test::expect![[r#"
            [
                "6 ▶ Fix with Rein rein.fixTest \"TestCart.test_total\"",
            ]
        "#]]
        .assert_debug_eq(&shown(&session, &uri));
        // The same again changes nothing.
        assert!(
            !session
                .test_outcomes
                .record(&names(&["tests.test_cart.TestCart.test_total"]), &[])
        );
        assert!(
            session
                .test_outcomes
                .record(&[], &names(&["tests/test_cart.py::TestCart::test_total"]))
        );
        assert_eq!(shown(&session, &uri), Vec::<String>::new());
    }

    /// A failure of another file's test of the same name is not this one.
    #[test]
    fn another_files_test_of_the_same_name_gets_no_lens() {
        let (session, uri) = session();
        session.test_outcomes.record(
            &names(&[
                "tests/test_other.py::TestCart::test_total",
                "other.test_cart.TestCart.test_total",
            ]),
            &[],
        );
        assert_eq!(shown(&session, &uri), Vec::<String>::new());
    }

    /// A document outside the workspace gets none, whatever failed.
    #[test]
    fn a_document_outside_the_workspace_gets_no_lens() {
        let (session, _) = session();
        let outside = Uri::from_file_path("/elsewhere/tests/test_cart.py").unwrap();
        session.docs.open(outside.as_str(), "python", 1, TEST_FILE);
        session
            .test_outcomes
            .record(&names(&["tests/test_cart.py::TestCart::test_total"]), &[]);
        assert_eq!(shown(&session, &outside), Vec::<String>::new());
    }

    /// Bounded however many runs report however many failures.
    #[test]
    fn the_known_failures_are_bounded() {
        let (session, _) = session();
        for run in 0..20 {
            let failed: Vec<String> = (0..200).map(|i| format!("t{run}::test_{i}")).collect();
            session.test_outcomes.record(&failed, &[]);
        }
        assert_eq!(
            session.test_outcomes.failed().len(),
            crate::known_outcomes::MAX_KNOWN
        );
    }
}
