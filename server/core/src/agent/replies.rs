//! The reply formats beyond real tool calls: calls a model wrote as text,
//! files it wrote whole.

use super::*;

impl Agent {
    /// A reply without a real call whose text holds calls (see
    /// [`text_calls`]): they become the reply's calls, recorded as read
    /// from text. `Some` with what is wrong when the text tried to call and
    /// cannot be run.
    pub(super) fn take_text_calls(&self, turn: u32, reply: &mut ModelReply) -> Option<Vec<String>> {
        let finished = is_finished(&reply.stop);
        if !finished || !calls_of(reply).is_empty() || self.config.harness.is_naive() {
            return None;
        }
        let (calls, prose) = match text_calls::find(&reply.text(), &self.config.tools) {
            text_calls::Found::Nothing => return None,
            text_calls::Found::Unusable(problems) => return Some(problems),
            text_calls::Found::Calls { calls, prose } => (calls, prose),
        };
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        self.event(TaskEvent::Context {
            transformation: "tool_calls_from_text".into(),
            detail: format!(
                "{} call(s) the model wrote as text: {}",
                calls.len(),
                names.join(", ")
            ),
        });
        with_calls_from_text(reply, prose, calls, &format!("text_{turn}_"));
        None
    }

    /// In the `whole` edit format, a reply without calls whose text holds
    /// whole files: they become `write_file` calls, recorded as read from
    /// text, like [`Agent::take_text_calls`]'s.
    pub(super) async fn take_whole_files(&self, turn: u32, reply: &mut ModelReply) -> WholeFiles {
        let finished = is_finished(&reply.stop);
        if !self.config.whole_files() || !finished {
            return WholeFiles::None;
        }
        // "Here is the file … now run the tests": the file is written
        // first, then its calls run.
        let beside_calls = !calls_of(reply).is_empty();
        let read: Vec<String> = self.reads.all().into_iter().map(|(p, _)| p).collect();
        let mut found =
            whole_files::writes(&reply.text(), self.ports.workspace.as_ref(), &read).await;
        let test_written = self.take_test_writes(&mut found.calls);
        if let Some(test) = &test_written {
            self.event(TaskEvent::Context {
                transformation: "whole_file_test_set_aside".into(),
                detail: format!(
                    "set aside the model's whole {test}: the target test's file stays as written"
                ),
            });
        }
        if beside_calls && found.calls.is_empty() {
            return WholeFiles::None;
        }
        if found.calls.is_empty() {
            if let Some(test) = test_written {
                return WholeFiles::TargetTest(test);
            }
            if !found.fragments.is_empty() {
                return WholeFiles::Fragments(found.fragments);
            }
            return match (found.unchanged.is_empty(), found.unplaced) {
                (false, _) => WholeFiles::Unchanged(found.unchanged),
                (true, 0) => WholeFiles::None,
                (true, _) => WholeFiles::Unplaced,
            };
        }
        let paths: Vec<String> = found
            .calls
            .iter()
            .filter_map(|c| c.arguments["path"].as_str().map(str::to_owned))
            .collect();
        self.event(TaskEvent::Context {
            transformation: "whole_files_from_text".into(),
            detail: format!(
                "{} file(s) the model wrote whole: {}",
                paths.len(),
                paths.join(", ")
            ),
        });
        let set_aside = without_writes_of(reply, &paths);
        if !set_aside.is_empty() {
            self.event(TaskEvent::Context {
                transformation: "whole_file_over_call".into(),
                detail: format!(
                    "set aside {}: the same reply wrote the file whole",
                    set_aside.join(", ")
                ),
            });
        }
        let beside_calls = !calls_of(reply).is_empty();
        with_calls_from_text(
            reply,
            found.prose,
            found.calls,
            &format!("{FILE_CALL_PREFIX}{turn}_"),
        );
        if beside_calls {
            WholeFiles::WrittenBesideCalls
        } else {
            WholeFiles::Written
        }
    }

    /// Takes out of `calls` (files written whole) those that write the
    /// target test's file in a fix-test task where the test stays as
    /// written (no `allow_test_edits`), and says which file that was. A
    /// small model rewrites the file it was shown: seen on QuixBugs'
    /// get_factors with a 1.5B model, the test file written whole five
    /// times (imports added, the class's base renamed), answered each time
    /// "read it before editing it", until the loop guard ended the task.
    /// The fix is never there, and a whole file is no way to change a
    /// helper beside the test (`edit_file` is, in the tools format).
    pub(super) fn take_test_writes(&self, calls: &mut Vec<text_calls::TextCall>) -> Option<String> {
        let TaskKind::FixTest { path: test, .. } = &self.task.kind else {
            return None;
        };
        if self.config.allow_test_edits {
            return None;
        }
        let root = self.ports.workspace.root();
        let before = calls.len();
        calls.retain(|call| {
            call.arguments["path"]
                .as_str()
                .and_then(|p| crate::paths::resolve(root, p).ok())
                .is_none_or(|p| p != *test)
        });
        (calls.len() < before).then(|| test.clone())
    }

    /// Whether every call of the last batch succeeded.
    pub(super) fn last_results_succeeded(&self) -> bool {
        matches!(
            self.history.items.last(),
            Some(Item::Results { results, .. }) if results.iter().all(|r| !r.is_error)
        )
    }
}

/// The reply's calls in order: runnable ones and unusable ones alike, so
/// each gets its result.
/// A reply that ended as the model meant it to (not cut off, refused or
/// paused): its text may hold calls or files.
pub(super) fn is_finished(stop: &StopReason) -> bool {
    matches!(
        stop,
        StopReason::EndTurn | StopReason::StopSequence | StopReason::ToolUse | StopReason::Other(_)
    )
}

/// `reply` with its text replaced by `prose` and the calls read from it,
/// numbered after `id_prefix`, before the reply's own calls. Thinking stays
/// where it was.
pub(super) fn with_calls_from_text(
    reply: &mut ModelReply,
    prose: String,
    calls: Vec<text_calls::TextCall>,
    id_prefix: &str,
) {
    let (own_calls, mut parts): (Vec<Part>, Vec<Part>) = std::mem::take(&mut reply.parts)
        .into_iter()
        .filter(|p| !matches!(p, Part::Text { .. }))
        .partition(|p| matches!(p, Part::ToolCall(_)));
    if !prose.is_empty() {
        parts.push(Part::text(prose));
    }
    for (n, call) in calls.into_iter().enumerate() {
        parts.push(Part::ToolCall(ToolCall {
            id: format!("{id_prefix}{}", n + 1),
            name: call.name,
            arguments: call.arguments,
        }));
    }
    parts.extend(own_calls);
    reply.parts = parts;
}

/// Takes out of `reply` its calls that write or edit one of `paths`, and
/// says which: a file the reply also wrote whole is written once, from its
/// block. The block is the format asked for and verbatim; a JSON string is
/// where a small model drops what it cannot escape (seen on bitcount: the
/// fix in a block, then a `write_file` call of the same file without its
/// docstring's quotes, which ran second and left a syntax error).
pub(super) fn without_writes_of(reply: &mut ModelReply, paths: &[String]) -> Vec<String> {
    use crate::tools::TypedTool as _;
    let plain = |p: &str| p.trim().trim_start_matches("./").to_owned();
    let written: HashSet<String> = paths.iter().map(|p| plain(p)).collect();
    let mut set_aside = Vec::new();
    reply.parts.retain(|part| {
        let Part::ToolCall(call) = part else {
            return true;
        };
        if call.name != crate::tools::write_file::WriteFile::NAME
            && call.name != crate::tools::edit_file::EditFile::NAME
        {
            return true;
        }
        let path = call.arguments.get("path").and_then(|p| p.as_str());
        match path {
            Some(path) if written.contains(&plain(path)) => {
                set_aside.push(format!("{} {path}", call.name));
                false
            }
            _ => true,
        }
    });
    set_aside
}

pub(super) fn calls_of(reply: &ModelReply) -> Vec<Result<ToolCall, BadToolCall>> {
    reply
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolCall(call) => Some(match reply.bad_calls.iter().find(|b| b.id == call.id) {
                Some(bad) => Err(bad.clone()),
                None => Ok(call.clone()),
            }),
            _ => None,
        })
        .collect()
}

/// How much of unparseable arguments the trace keeps: enough to see what
/// went wrong, not a whole truncated file.
pub(super) const RAW_ARGUMENTS_SHOWN: usize = 2_000;

pub(super) fn raw_shown(raw: &str) -> String {
    if raw.len() <= RAW_ARGUMENTS_SHOWN {
        return raw.to_owned();
    }
    let mut cut = RAW_ARGUMENTS_SHOWN;
    while !raw.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} bytes)", &raw[..cut], raw.len())
}
