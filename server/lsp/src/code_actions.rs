//! Code actions: "Fix test <name> with Rein" on the test under the cursor,
//! and "Ask Rein…" anywhere in the workspace — but only to a client that
//! asks the user for the instruction (`experimental.rein.instructionPrompt`):
//! elsewhere it could only fail.

use rein_core::testfind;
use serde_json::json;
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Command, Range, Uri,
};

use crate::ext::commands;
use crate::session::Session;

pub fn actions(session: &Session, uri: &Uri, range: Range) -> Vec<CodeActionOrCommand> {
    let Some(path) = session.relative_path(uri) else {
        return Vec::new();
    };
    let mut actions = Vec::new();
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
    if !session.caps().instruction_prompt {
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
