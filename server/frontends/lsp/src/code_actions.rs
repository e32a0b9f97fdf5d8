//! Code actions: "Fix this error with Rein" on another server's diagnostic
//! (`fix_error`), "Fix test <name> with Rein" on the test under the cursor,
//! and "Ask Rein…" on a selection — but only to a client that asks the
//! user for the instruction (`experimental.rein.instructionPrompt`):
//! elsewhere it could only fail.
//!
//! Editors ask for code actions wherever the cursor goes and show a light
//! bulb when any comes back, so an action offered everywhere is a light
//! bulb everywhere. "Ask Rein…" with a bare cursor is the editors' own
//! "Rein: Ask Rein…" command; here it comes only with a selection, where
//! the selection is what the user means to ask about.

use rein_core::testfind;
use serde_json::json;
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Command, Diagnostic, Range, Uri,
};

use crate::ext::commands;
use crate::session::Session;

pub fn actions(
    session: &Session,
    uri: &Uri,
    range: Range,
    diagnostics: &[Diagnostic],
) -> Vec<CodeActionOrCommand> {
    let Some(path) = session.relative_path(uri) else {
        return Vec::new();
    };
    let mut actions = crate::fix_error::actions(session, uri, &path, diagnostics);
    if let (Some(lang), Some(snapshot)) = (
        testfind::lang_for_path(&path),
        session.docs.snapshot(uri.as_str()),
    ) && let Some(test) = testfind::test_at(&snapshot.text(), lang, range.start.line as usize)
    {
        let title = format!("Fix test {} with Rein", test.name);
        let argument =
            json!({"uri": uri.as_str(), "position": range.start, "testName": test.qualified});
        actions.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: title.clone(),
            kind: Some(CodeActionKind::QUICKFIX),
            command: Some(Command {
                title,
                command: commands::FIX_TEST.to_owned(),
                arguments: Some(vec![argument]),
            }),
            ..CodeAction::default()
        }));
    }
    if !session.caps().instruction_prompt || range.start == range.end {
        return actions;
    }
    let title = "Ask Rein…".to_owned();
    let argument = json!({"uri": uri.as_str(), "range": range});
    actions.push(CodeActionOrCommand::CodeAction(CodeAction {
        title: title.clone(),
        kind: Some(CodeActionKind::EMPTY),
        command: Some(Command {
            title,
            command: commands::RUN_TASK.to_owned(),
            arguments: Some(vec![argument]),
        }),
        ..CodeAction::default()
    }));
    actions
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::path::Path;

    use tower_lsp_server::ls_types::Position;

    use super::*;
    use crate::session::ClientCaps;

    /// The demo project's test file, as the user sees it.
    const TEST_FILE: &str = include_str!("../../../app/demo/project/tests/test_cart.py");

    /// A session on `/work/project` with `tests/test_cart.py` open, for a
    /// client that asks for instructions (or not).
    fn session(instruction_prompt: bool) -> (Session, Uri) {
        let session = Session::new(crate::ServerOptions::default());
        let root = Path::new("/work/project");
        session.root.set(root.to_path_buf()).unwrap();
        session
            .caps
            .set(ClientCaps {
                instruction_prompt,
                ..ClientCaps::default()
            })
            .unwrap();
        let uri = Uri::from_file_path(root.join("tests/test_cart.py")).unwrap();
        session.docs.open(uri.as_str(), "python", 1, TEST_FILE);
        (session, uri)
    }

    fn titles(session: &Session, uri: &Uri, range: Range) -> Vec<String> {
        actions(session, uri, range, &[])
            .into_iter()
            .map(|a| match a {
                CodeActionOrCommand::CodeAction(a) => a.title,
                CodeActionOrCommand::Command(c) => c.title,
            })
            .collect()
    }

    fn cursor(line: u32, character: u32) -> Range {
        let at = Position { line, character };
        Range { start: at, end: at }
    }

    fn line_of(text: &str) -> u32 {
        TEST_FILE
            .lines()
            .position(|l| l.contains(text))
            .unwrap_or_else(|| panic!("no line with {text:?}")) as u32
    }

    /// Regression (issue 16, "the light bulb everywhere"): with only a
    /// cursor, "Ask Rein…" is not offered, so no light bulb shows where
    /// there is no test; with a selection it is, about that selection.
    #[test]
    fn ask_rein_is_offered_on_a_selection_only() {
        let (session, uri) = session(true);
        let import = line_of("import unittest");
        assert_eq!(
            titles(&session, &uri, cursor(import, 3)),
            Vec::<String>::new()
        );
        let selection = Range {
            start: Position {
                line: import,
                character: 0,
            },
            end: Position {
                line: import,
                character: 6,
            },
        };
        assert_eq!(titles(&session, &uri, selection), ["Ask Rein…"]);
        let action = actions(&session, &uri, selection, &[]).remove(0);
        let CodeActionOrCommand::CodeAction(action) = action else {
            panic!("not a code action: {action:?}");
        };
        let argument = &action.command.unwrap().arguments.unwrap()[0];
        assert_eq!(argument["range"], json!(selection));
        assert_eq!(argument["uri"], uri.as_str());
    }

    /// A selection inside a test offers both, the test's fix first.
    #[test]
    fn a_selection_inside_a_test_offers_the_fix_and_ask_rein() {
        let (session, uri) = session(true);
        let line = line_of("self.assertEqual(total(items), 30)");
        let selection = Range {
            start: Position { line, character: 8 },
            end: Position {
                line,
                character: 24,
            },
        };
        assert_eq!(
            titles(&session, &uri, selection),
            ["Fix test test_total with Rein", "Ask Rein…"]
        );
    }

    /// A client that cannot ask for the instruction is never offered
    /// "Ask Rein…", selection or not (the capability gate stands).
    #[test]
    fn ask_rein_needs_a_client_that_asks_for_the_instruction() {
        let (session, uri) = session(false);
        let import = line_of("import unittest");
        let selection = Range {
            start: Position {
                line: import,
                character: 0,
            },
            end: Position {
                line: import + 1,
                character: 0,
            },
        };
        assert_eq!(titles(&session, &uri, selection), Vec::<String>::new());
    }

    /// "Fix test" is offered inside a test only: on every line of each
    /// test, and on no line outside one (the import, the class line, the
    /// blank lines between tests, `unittest.main()`).
    #[test]
    fn fix_test_is_offered_only_inside_a_test() {
        let (session, uri) = session(true);
        let mut offered = Vec::new();
        for (n, _) in TEST_FILE.lines().enumerate() {
            let titles = titles(&session, &uri, cursor(n as u32, 4));
            offered.push(format!("{n}: {}", titles.join(", ")));
        }
        expect_test::expect![[r#"
            0: 
            1: 
            2: 
            3: 
            4: 
            5: 
            6: Fix test test_total with Rein
            7: Fix test test_total with Rein
            8: Fix test test_total with Rein
            9: 
            10: Fix test test_empty_cart_costs_nothing with Rein
            11: Fix test test_empty_cart_costs_nothing with Rein
            12: 
            13: Fix test test_count with Rein
            14: Fix test test_count with Rein
            15: Fix test test_count with Rein
            16: 
            17: 
            18: 
            19: "#]]
        .assert_eq(&offered.join("\n"));
    }

    /// The same in a pytest file of plain functions (the pytest_cart
    /// fixture of the end-to-end tests): the import and the blank lines
    /// between tests offer nothing.
    #[test]
    fn fix_test_is_offered_only_inside_a_pytest_function() {
        let text = include_str!("../../../../tests/fixtures/pytest_cart/tests/test_cart.py");
        let (session, uri) = session(true);
        session.docs.close(uri.as_str());
        session.docs.open(uri.as_str(), "python", 1, text);
        let offered: Vec<String> = (0..text.lines().count())
            .map(|n| {
                format!(
                    "{n}: {}",
                    titles(&session, &uri, cursor(n as u32, 2)).join(", ")
                )
            })
            .collect();
        expect_test::expect![[r#"
            0: 
            1: 
            2: 
            3: Fix test test_total with Rein
            4: Fix test test_total with Rein
            5: 
            6: 
            7: Fix test test_receipt with Rein
            8: Fix test test_receipt with Rein
            9: Fix test test_receipt with Rein
            10: Fix test test_receipt with Rein
            11: Fix test test_receipt with Rein
            12: Fix test test_receipt with Rein"#]]
        .assert_eq(&offered.join("\n"));
    }

    /// A docstring is not a test either, nor a module-level function
    /// whose name merely starts with "test" inside a class that is not a
    /// test case.
    #[test]
    fn no_fix_test_on_a_docstring_or_outside_a_test_class() {
        let text = "\"\"\"Tests of the cart.\n\nRun with unittest.\n\"\"\"\nimport unittest\n\n\nclass Helper:\n    def test_like(self):\n        pass\n\n\nclass TestCart(unittest.TestCase):\n    \"\"\"The cart's tests.\"\"\"\n\n    def test_total(self):\n        pass\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n";
        let (session, uri) = session(true);
        session.docs.close(uri.as_str());
        session.docs.open(uri.as_str(), "python", 1, text);
        let fixes: Vec<(usize, Vec<String>)> = text
            .lines()
            .enumerate()
            .map(|(n, _)| (n, titles(&session, &uri, cursor(n as u32, 2))))
            .filter(|(_, t)| !t.is_empty())
            .collect();
        let test_total = text
            .lines()
            .position(|l| l.contains("def test_total"))
            .unwrap();
        assert_eq!(
            fixes,
            [
                (test_total, vec!["Fix test test_total with Rein".to_owned()]),
                (
                    test_total + 1,
                    vec!["Fix test test_total with Rein".to_owned()]
                ),
            ]
        );
    }
}
