//! "Fix this error with Rein": the diagnostics another language server
//! showed (the editor hands them to every server in `textDocument/
//! codeAction`'s context), offered as tasks when Rein can check them with
//! the checker that reports them — else "Ask Rein about this error…"
//! with the diagnostic quoted, and the reason Rein cannot check it.
//!
//! The diagnostic comes from another server, through the editor: it is
//! converted into the core's plain [`Diagnostic`] and cleaned (path inside
//! the workspace, texts bounded and stripped) before anything uses it.

use rein_core::diagnostics::{Diagnostic, Position, Range, Severity};
use serde_json::json;
use tower_lsp_server::ls_types::{
    self as lsp, CodeAction, CodeActionDisabled, CodeActionKind, CodeActionOrCommand, Command,
    NumberOrString, Uri,
};

use crate::ext::commands;
use crate::session::Session;

/// How many diagnostics at one place get an action each (a file full of
/// errors would otherwise fill the menu).
const MAX_OFFERED: usize = 3;
/// How much of a message an action's title quotes.
const TITLE_CHARS: usize = 60;

/// The editor's diagnostic in the core's terms; `None` for one Rein does
/// not take (a hint or information, a path outside the workspace, no
/// message).
pub fn diagnostic(path: &str, d: &lsp::Diagnostic) -> Option<Diagnostic> {
    // No severity: the editor decides; it shows it as an error.
    let severity = match d.severity {
        None | Some(lsp::DiagnosticSeverity::ERROR) => Severity::Error,
        Some(lsp::DiagnosticSeverity::WARNING) => Severity::Warning,
        Some(_) => return None,
    };
    let at = |p: lsp::Position| Position {
        line: p.line,
        character: p.character,
    };
    Diagnostic {
        path: path.to_owned(),
        range: Range {
            start: at(d.range.start),
            end: at(d.range.end),
        },
        severity,
        source: d.source.clone(),
        code: d.code.as_ref().map(|c| match c {
            NumberOrString::Number(n) => n.to_string(),
            NumberOrString::String(s) => s.clone(),
        }),
        message: d.message.clone(),
    }
    .cleaned()
    .ok()
}

/// The actions for the errors and warnings the editor sent with the
/// request (other servers' diagnostics at the cursor).
pub fn actions(
    session: &Session,
    uri: &Uri,
    path: &str,
    sent: &[lsp::Diagnostic],
) -> Vec<CodeActionOrCommand> {
    let taken: Vec<(&lsp::Diagnostic, Diagnostic)> = sent
        .iter()
        .filter(|d| d.source.as_deref() != Some("rein"))
        .filter_map(|d| Some((d, diagnostic(path, d)?)))
        .take(MAX_OFFERED)
        .collect();
    if taken.is_empty() {
        return Vec::new();
    }
    let (config, root) = match (crate::provider::config_now(session), session.root.get()) {
        (Ok(config), Some(root)) => (config, root),
        (Err(e), _) => {
            tracing::debug!("no fix-error actions: {e}");
            return Vec::new();
        }
        (_, None) => return Vec::new(),
    };
    let caps = session.caps();
    let several = taken.len() > 1;
    let mut actions = Vec::new();
    for (sent, diagnostic) in taken {
        let what = diagnostic.severity.word();
        let about = if several {
            format!(": {}", short(diagnostic.headline()))
        } else {
            String::new()
        };
        match rein_app::fix_error::checker(root, &config, &diagnostic) {
            Ok(checker) => {
                let title = format!("Fix this {what} with Rein{about}");
                let argument = json!({"uri": uri.as_str(), "diagnostic": sent});
                actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: title.clone(),
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![sent.clone()]),
                    command: Some(Command {
                        title: format!("{title} (checked by {})", checker.shown),
                        command: commands::FIX_ERROR.to_owned(),
                        arguments: Some(vec![argument]),
                    }),
                    ..CodeAction::default()
                }));
            }
            Err(why) => {
                if caps.disabled_actions {
                    actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                        title: format!("Fix this {what} with Rein{about}"),
                        kind: Some(CodeActionKind::QUICKFIX),
                        diagnostics: Some(vec![sent.clone()]),
                        disabled: Some(CodeActionDisabled {
                            reason: why.to_string(),
                        }),
                        ..CodeAction::default()
                    }));
                }
                if caps.instruction_prompt {
                    let title = format!("Ask Rein about this {what}…{about}");
                    let argument = json!({
                        "uri": uri.as_str(),
                        "range": sent.range,
                        "about": diagnostic.to_string(),
                    });
                    actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                        title: title.clone(),
                        kind: Some(CodeActionKind::QUICKFIX),
                        diagnostics: Some(vec![sent.clone()]),
                        command: Some(Command {
                            title,
                            command: commands::RUN_TASK.to_owned(),
                            arguments: Some(vec![argument]),
                        }),
                        ..CodeAction::default()
                    }));
                }
            }
        }
    }
    actions
}

/// The start of a message, for a title.
fn short(text: &str) -> String {
    let mut out: String = text.chars().take(TITLE_CHARS).collect();
    if text.chars().count() > TITLE_CHARS {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn lsp_diagnostic(severity: Option<lsp::DiagnosticSeverity>, message: &str) -> lsp::Diagnostic {
        lsp::Diagnostic {
            range: lsp::Range {
                start: lsp::Position {
                    line: 6,
                    character: 16,
                },
                end: lsp::Position {
                    line: 6,
                    character: 17,
                },
            },
            severity,
            code: Some(NumberOrString::Number(2322)),
            source: Some("ts".into()),
            message: message.into(),
            ..lsp::Diagnostic::default()
        }
    }

    #[test]
    fn errors_and_warnings_are_taken_hints_and_information_are_not() {
        let cases = [
            (None, Some(Severity::Error)),
            (Some(lsp::DiagnosticSeverity::ERROR), Some(Severity::Error)),
            (
                Some(lsp::DiagnosticSeverity::WARNING),
                Some(Severity::Warning),
            ),
            (Some(lsp::DiagnosticSeverity::INFORMATION), None),
            (Some(lsp::DiagnosticSeverity::HINT), None),
        ];
        for (severity, expected) in cases {
            let taken = diagnostic(
                "src/app.ts",
                &lsp_diagnostic(
                    severity,
                    "Type 'number' is not assignable to type 'string'.",
                ),
            );
            assert_eq!(taken.map(|d| d.severity), expected, "{severity:?}");
        }
        let d = diagnostic("src/app.ts", &lsp_diagnostic(None, "bad")).unwrap();
        assert_eq!(d.code.as_deref(), Some("2322"));
        assert_eq!(d.line(), 7);
    }

    /// Another server's diagnostic is untrusted: a path that leaves the
    /// workspace, an empty message or terminal escapes do not get through.
    #[test]
    fn a_hostile_diagnostic_is_cleaned_or_refused() {
        assert!(diagnostic("../x.py", &lsp_diagnostic(None, "m")).is_none());
        assert!(diagnostic("a.py", &lsp_diagnostic(None, "  ")).is_none());
        let d = diagnostic("a.py", &lsp_diagnostic(None, "bad\u{1b}[31m red\u{202e}")).unwrap();
        assert!(
            !d.message.contains('\u{1b}') && !d.message.contains('\u{202e}'),
            "{:?}",
            d.message
        );
    }
}
