//! One turn of the loop: the model called, its reply read (calls written
//! as text, files written whole), then its calls run or its claim checked;
//! and the task's first message, told again when it starts afresh.

use super::replies::calls_of;
use super::*;

impl Agent {
    /// One turn. `Err` ends the task.
    pub(super) async fn turn(&mut self) -> Result<(), Stop> {
        if self.cancel.is_cancelled() {
            return Err(Stop::new(
                StopCause::Cancelled,
                self.config.cancel_reason.text(),
            ));
        }
        if let Some(exhausted) = self.tracker.check() {
            return Err(Stop::new(StopCause::Budget, exhausted.reason));
        }
        let turn = self.tracker.spent.turns + 1;
        self.update_tools().await;
        let (request, estimated) = self.prepare_request(turn).await?;
        // A search gives the reply to go on with (a candidate that passed
        // its check, or one that is no candidate), or none.
        let (turn, mut reply, checked, smaller) = if self.search_now() {
            match self.search(turn, request, estimated).await? {
                search::Searched::Reply { turn, reply } => (turn, reply, false, None),
                search::Searched::Passed {
                    turn,
                    reply,
                    smaller,
                } => (turn, reply, true, smaller),
                search::Searched::Again => return Ok(()),
            }
        } else {
            let Some(reply) = self.call_model(turn, request, estimated).await? else {
                // The history was compacted to fit: try the turn again.
                return Ok(());
            };
            (turn, reply, false, None)
        };
        let unusable_text_calls = self.take_text_calls(turn, &mut reply);
        // In the whole format the file is the answer asked for, even beside
        // a call written wrong (then the file is written and checked, and
        // the broken call is not held against the reply). Seen with a 1.5B
        // model: the fix in a code block, then the same file again as a
        // `write_file` JSON call that its own nested fence cut short.
        let wrote = self.take_whole_files(turn, &mut reply).await;
        // A search checked its candidate; the ordinary path checks a
        // write of several regions before proposing it (see
        // `written_made_smaller`).
        let smaller = match smaller {
            None if wrote == WholeFiles::Written && !checked => {
                self.written_made_smaller(&reply).await?
            }
            smaller => smaller,
        };
        if let Some(smaller) = smaller {
            self.write_smaller(turn, &mut reply, smaller);
        }

        let text = reply.text();
        self.turn_text = text.trim().to_owned();
        if !text.trim().is_empty() {
            self.event(TaskEvent::Text {
                turn,
                text: text.clone(),
            });
            self.last_words = Some(text.trim().to_owned());
        }
        if !reply.parts.is_empty() {
            self.history.push(Item::assistant(reply.parts.clone()));
        }
        // What the model said is now safe: a crash from here on resumes
        // with this reply, and recovery answers each of its calls.
        self.checkpoint(turn, CheckpointPhase::AfterModel)?;
        let calls = calls_of(&reply);
        if !calls.is_empty() {
            self.run_calls(turn, calls).await?;
            // A reply that rewrote files says it is done: check it now,
            // as Aider runs the tests after each edit, instead of a turn
            // spent asking the model to say so. So does a candidate that
            // passed its check: the real verifier now runs on the live text.
            if (wrote == WholeFiles::Written || checked) && self.last_results_succeeded() {
                return self.claim(turn, text).await;
            }
            return Ok(());
        }
        // Nothing written: in this format a fix is a write, and the test
        // already ran after the last one, so this is not a claim to check;
        // a block not written is a failed attempt, as a file written back
        // unchanged is.
        let failed_write = matches!(
            wrote,
            WholeFiles::Unchanged(_) | WholeFiles::Fragments(_) | WholeFiles::TargetTest(_)
        );
        let under_test = match &wrote {
            WholeFiles::TargetTest(_) => self.likely_under_test().await,
            _ => None,
        };
        let nudge = match wrote {
            WholeFiles::Unchanged(paths) => Some((
                "whole_file_unchanged",
                format!(
                    "The file you wrote ({}) is the same as it is now: nothing changed. Find the bug, then write the fixed function whole.",
                    paths.join(", ")
                ),
            )),
            // Once files changed, a snippet may illustrate a finished fix:
            // that claim is the verifier's.
            WholeFiles::Unplaced if self.progress.changed.is_empty() => Some((
                "whole_file_unplaced",
                "Your code block names no file, so nothing was written and the test did not run. Write the fixed function whole: the file's path alone on a line, then the complete function in a fenced code block.".to_owned(),
            )),
            WholeFiles::Fragments(paths) => Some((
                "whole_file_fragment",
                fragment_nudge(&paths),
            )),
            WholeFiles::TargetTest(test) => Some((
                "whole_file_test",
                test_file_nudge(&test, under_test.as_deref()),
            )),
            _ => None,
        };
        if let Some((guard, nudge)) = nudge {
            // A write that changed nothing is a failed attempt: the next
            // turn searches, starting hotter.
            if failed_write {
                self.arm_search_hot();
            }
            return self.answer_instead(guard, nudge, &text).await;
        }
        // It tried to call and could not: not a claim of being done.
        if let Some(problems) = unusable_text_calls {
            // The next reply is a call the provider holds to the schemas,
            // where it is known to (`ModelClient::constrains_calls`: the
            // hosted APIs; llama.cpp answered with text and blank lines up
            // to the token limit). Not in the whole format, whose replies
            // are text.
            if self.force_call == ForceCall::No
                && !self.config.whole_files()
                && self.ports.model.constrains_calls()
            {
                self.force_call = ForceCall::Next;
            }
            // Compared by the calls it tried, not its prose: the same broken
            // call in other words is the same answer.
            let attempted = text_calls::attempted_calls(&text);
            let same_as = if attempted.is_empty() {
                &text
            } else {
                &attempted
            };
            return self
                .answer_instead(
                    "text_tool_call",
                    text_calls::how_to_call(&problems),
                    same_as,
                )
                .await;
        }
        match reply.stop {
            StopReason::MaxTokens => {
                self.history.push(Item::user(
                    "Your reply was cut off by the output token limit. Continue from where you stopped, more briefly.",
                ));
                Ok(())
            }
            // The provider paused a long turn: sending the history back
            // lets it continue.
            StopReason::PauseTurn => Ok(()),
            StopReason::Refusal => Err(Stop::new(
                StopCause::Refused,
                format!("the model refused: {}", text.trim()),
            )),
            StopReason::ContextWindowExceeded => {
                if self.compact(turn).await? {
                    Ok(())
                } else {
                    Err(Stop::new(
                        StopCause::ContextFull,
                        "the context no longer fits the model's window and cannot be compacted further",
                    ))
                }
            }
            _ => self.claim(turn, text).await,
        }
    }

    /// The task as the model first reads it: for a fix-test task, the
    /// failure, the test and the code under test as they are now (see
    /// [`first_turn`]); the files shown whole count as read.
    pub(super) async fn task_message(&self) -> String {
        let baseline = self.ports.verifier.baseline_output();
        let first =
            first_turn::first_message(&self.task, &self.first_turn_sources(baseline.as_ref()))
                .await;
        for (path, version) in first.reads {
            self.reads.set(&path, version);
        }
        first.text
    }

    /// The file the first message named as the likely home of the bug.
    pub(super) async fn likely_under_test(&self) -> Option<String> {
        let baseline = self.ports.verifier.baseline_output();
        first_turn::likely_under_test(&self.task, &self.first_turn_sources(baseline.as_ref())).await
    }

    fn first_turn_sources<'a>(
        &'a self,
        baseline: Option<&'a crate::ports::BaselineOutput>,
    ) -> first_turn::Sources<'a> {
        let window = self.context.config.window_tokens;
        first_turn::Sources {
            workspace: self.ports.workspace.as_ref(),
            policy: &self.config.policy,
            redactor: &self.config.redactor,
            baseline,
            // What the task needs up front, not the whole window.
            budget_tokens: (window / 4).min(FIRST_TURN_TOKENS),
            whole_files: self.config.whole_files(),
        }
    }

    /// The one more try after a model repeated itself, in the whole-file
    /// format: the conversation so far is set aside (archived) and the
    /// task is told again with the code as it is now, and what did not
    /// work. Measured with a 1.5B model: at the repeat, its own replies
    /// in the history were degenerate (an empty fence, the user's words
    /// echoed back), and sampled hotter it repeated them again. Not in
    /// the tools format, where the history holds what the model read and
    /// ran. Returns whether the history was replaced.
    pub(super) async fn start_afresh(&mut self, did_not_work: &str) -> bool {
        if !self.config.whole_files()
            || !matches!(
                self.task.kind,
                TaskKind::FixTest { .. } | TaskKind::FixDiagnostic { .. }
            )
        {
            return false;
        }
        let set_aside = std::mem::take(&mut self.history.items);
        let Some(archive) = self.archive_history(&set_aside, "starting afresh").await else {
            // Without the archive the trace would lose the turns: keep them.
            self.history.items = set_aside;
            return false;
        };
        let task = self.task_message().await;
        let did_not_work = self.config.redactor.redact(did_not_work).into_owned();
        self.history.push(Item::user(format!(
            "{task}\n\n{}\n{did_not_work}",
            prompt::AN_EARLIER_TRY
        )));
        self.shedding = Shedding::default();
        self.event(TaskEvent::Context {
            transformation: "fresh_start".into(),
            detail: format!(
                "{} earlier items set aside ({archive}); the task told again with the code as it is now",
                set_aside.len()
            ),
        });
        true
    }
}

/// The most the first message spends on what the task needs up front (the
/// failure, the test, the code under test).
pub(super) const FIRST_TURN_TOKENS: u64 = 6_000;

/// What the model is told of blocks that were a small part of their files.
pub(super) fn fragment_nudge(paths: &[String]) -> String {
    format!(
        "Your code block for {} is a few lines of it, not a whole function or the whole file, so nothing was written (written as the file, it would delete the rest). Write each function you change whole, from its first line to its last, or the whole file.",
        paths.join(", ")
    )
}

/// What a model that wrote the target test's file whole is told: not
/// "read it first" (true of the tool, no help to the model), but where
/// the fix goes.
pub(super) fn test_file_nudge(test: &str, under_test: Option<&str>) -> String {
    let there = match under_test {
        Some(file) => format!(
            "The bug is in the code it tests, most likely {file}: reply with `{file}` alone on a line, then the fixed function whole in a fenced code block."
        ),
        None => "The bug is in the code it tests: read that code with read_file, then write the fixed function there, whole.".to_owned(),
    };
    format!(
        "{test} holds the failing test, and the test stays as written, so nothing was written. {there}"
    )
}
