//! Running a reply's calls: read-only calls side by side, the rest in
//! order, each journaled, one result per call in the calls' order.

use super::claims::quote;
use super::replies::raw_shown;
use super::*;

impl Agent {
    /// Runs the calls of one reply and records one result per call, in
    /// order. Consecutive read-only calls run in parallel.
    pub(super) async fn run_calls(
        &mut self,
        turn: u32,
        calls: Vec<Result<ToolCall, BadToolCall>>,
    ) -> Result<(), Stop> {
        for call in &calls {
            // A call whose arguments did not parse is still a call: the
            // trace shows what the model sent, so its error result has a
            // call to belong to.
            let (call_id, tool, arguments) = match call {
                Ok(call) => (&call.id, &call.name, call.arguments.clone()),
                Err(bad) => (
                    &bad.id,
                    &bad.name,
                    serde_json::Value::String(raw_shown(&bad.raw_arguments)),
                ),
            };
            let described = self.config.tools.describe(tool, &arguments);
            let kind = self.config.tools.kind(tool);
            self.event(TaskEvent::ToolCall {
                turn,
                call_id: call_id.clone(),
                tool: tool.clone(),
                arguments,
                title: described.title,
                detail: described.detail,
                kind,
            });
        }
        let Batch {
            results,
            notes,
            cancelled,
            learned,
            waiting,
            out_of_time,
            rejected,
        } = self.dispatch_all(turn, &calls).await?;
        if rejected {
            self.user_rejected = true;
        }
        for r in &results {
            if let crate::context::history::ResultMeta::Edited { path, version } = &r.meta {
                self.progress.record_edit(path, version.label());
                // A change the user took after one they turned down: the
                // model found another way.
                self.user_rejected = rejected;
            }
            if let crate::context::history::ResultMeta::Command {
                kind: crate::exec::CommandKind::Test,
                summary,
                ..
            } = &r.meta
            {
                self.progress.last_test = Some(summary.clone());
            }
        }
        self.history.push(Item::Results { results, notes });
        self.checkpoint(turn, CheckpointPhase::AfterTools)?;
        if cancelled {
            return Err(Stop::new(
                StopCause::Cancelled,
                self.config.cancel_reason.text(),
            ));
        }
        if let Some(reason) = out_of_time {
            return Err(Stop::new(StopCause::Budget, reason));
        }
        if let Some(waiting) = waiting {
            // Nobody could answer now: the task waits, its history intact.
            return Err(Stop::new(waiting.cause, waiting.reason));
        }
        let stuck = self.guard.lock().ok().and_then(|g| g.stuck());
        if let Some(why) = stuck {
            let words = self.last_words.as_deref().map(quote);
            let reason = match words {
                Some(words) => format!("stopped: {why}. Its last words: {words}"),
                None => format!("stopped: {why}"),
            };
            return Err(self.guard_stop("stuck", StopCause::Stuck, reason, Vec::new()));
        }
        let nudge = self.guard.lock().ok().and_then(|mut g| g.end_turn(learned));
        if let Some(nudge) = nudge {
            self.event(TaskEvent::Guard {
                call_id: None,
                guard: "no_progress".into(),
                message: nudge.clone(),
            });
            self.history.push(Item::user(nudge));
        }
        Ok(())
    }

    /// Runs the calls; one result per call, in order. Each call is in the
    /// op log as requested and started before it runs, finished after.
    pub(super) async fn dispatch_all(
        &self,
        turn: u32,
        calls: &[Result<ToolCall, BadToolCall>],
    ) -> Result<Batch, Stop> {
        let dispatcher = Dispatcher {
            tools: &self.config.tools,
            cx: ToolCx {
                task: &self.task,
                workspace: self.ports.workspace.as_ref(),
                exec: self.ports.exec.as_ref(),
                approver: self.ports.approver.as_ref(),
                policy: &self.config.policy,
                reads: &self.reads,
                artifacts: &self.artifacts,
                artifact_store: self.ports.artifacts.as_ref(),
                runs: &self.runs,
                budgets: &self.tracker.budgets,
                time: self.tracker.time_budget(),
                test_command: self.config.test_command.as_ref(),
                cancel: &self.cancel,
                reason: &self.turn_text,
            },
            progress: self.ports.progress.as_ref(),
            redactor: &self.config.redactor,
            approvals: &self.approvals,
            guard: &self.guard,
            allow_test_edits: self.config.allow_test_edits,
            status: &|state, reason| self.status(state, reason),
        };
        let mut outputs: Vec<Option<CallDone>> = vec![None; calls.len()];
        let mut ops: Vec<Option<i64>> = vec![None; calls.len()];
        let mut cancelled = false;
        // Set when a call ran out the task's time: nothing after it runs.
        let mut out_of_time: Option<String> = None;
        let mut i = 0;
        while i < calls.len() && out_of_time.is_none() {
            if self.cancel.is_cancelled() {
                cancelled = true;
                break;
            }
            // A batch: this call, plus the read-only calls right after it
            // if it is read-only too.
            let read_only = |c: &Result<ToolCall, BadToolCall>| {
                c.as_ref()
                    .is_ok_and(|c| self.config.tools.is_read_only(&c.name))
            };
            let end = if read_only(&calls[i]) {
                calls[i..]
                    .iter()
                    .position(|c| !read_only(c))
                    .map_or(calls.len(), |n| i + n)
            } else {
                i + 1
            };
            for (offset, call) in calls[i..end].iter().enumerate() {
                ops[i + offset] = self.op_begin(turn, call).await?;
            }
            let batch = futures::future::join_all(calls[i..end].iter().map(|call| async {
                let started = Instant::now();
                let dispatched = tokio::select! {
                    () = self.cancel.cancelled() => None,
                    d = dispatcher.dispatch(call) => Some(d),
                };
                let duration_ms = started.elapsed().as_millis() as u64;
                match dispatched {
                    Some(d) => Ok(CallDone {
                        output: d.output,
                        notice: d.notice,
                        new_information: d.new_information,
                        waiting_for: d.waiting_for,
                        duration_ms,
                    }),
                    // Stopped on its way: not "never ran".
                    None => Err(CallDone {
                        output: ToolOutput::error(interrupted(duration_ms)),
                        notice: None,
                        new_information: false,
                        waiting_for: None,
                        duration_ms,
                    }),
                }
            }))
            .await;
            for (offset, outcome) in batch.into_iter().enumerate() {
                match outcome {
                    Ok(done) => {
                        out_of_time = out_of_time.or(done.output.out_of_time.clone());
                        outputs[i + offset] = Some(done);
                    }
                    Err(stopped) => {
                        cancelled = true;
                        outputs[i + offset] = Some(stopped);
                    }
                }
            }
            i = end;
        }

        let mut results = Vec::with_capacity(calls.len());
        let mut notes = Vec::new();
        let mut learned = false;
        let mut waiting = None;
        let mut rejected = false;
        for ((call, output), op) in calls.iter().zip(outputs).zip(ops) {
            let (id, name) = match call {
                Ok(c) => (c.id.clone(), c.name.clone()),
                Err(b) => (b.id.clone(), b.name.clone()),
            };
            let CallDone {
                output,
                notice,
                new_information,
                waiting_for,
                duration_ms,
            } = output.unwrap_or_else(|| CallDone {
                output: ToolOutput::error(match &out_of_time {
                    Some(reason) => format!("not run: {reason}."),
                    None => CANCELLED.to_owned(),
                }),
                notice: None,
                new_information: false,
                waiting_for: None,
                duration_ms: 0,
            });
            learned |= new_information;
            rejected |= output.rejected;
            if waiting_for.is_some() {
                waiting = waiting_for;
            }
            if let Some(notice) = notice {
                notes.push(format!("[{id}] {notice}"));
            }
            let output_bytes = u64::try_from(output.content.len()).unwrap_or(u64::MAX);
            let output = self.spill_if_large(&id, output).await;
            self.event(TaskEvent::ToolResult {
                call_id: id.clone(),
                tool: name.clone(),
                is_error: output.is_error,
                summary: summary_of(&output),
                duration_ms,
                output_bytes,
            });
            let post = match &output.meta {
                ResultMeta::Edited { path, version } => vec![file_hash(path, Some(version.hash))],
                _ => Vec::new(),
            };
            let result = RecordedResult::new(
                id,
                name.clone(),
                output.content,
                output.is_error,
                output.meta,
            );
            if let Some(op) = op {
                self.journal(|j| j.op_finished(op, &name, &result, post))?;
            }
            self.record_file_change(&result).await?;
            results.push(result);
        }
        Ok(Batch {
            results,
            notes,
            cancelled,
            learned,
            waiting,
            out_of_time,
            rejected,
        })
    }

    /// Records a call as requested, then started, with the hashes of the
    /// files it may change now and after (what recovery compares with).
    pub(super) async fn op_begin(
        &self,
        turn: u32,
        call: &Result<ToolCall, BadToolCall>,
    ) -> Result<Option<i64>, Stop> {
        let Some(journal) = &self.ports.journal else {
            return Ok(None);
        };
        let Ok(call) = call else { return Ok(None) };
        let (pre, expected, current) = self.expected_change(call).await;
        if let Some((path, text)) = current {
            journal.file_before(&call.id, &path, text);
        }
        let op = journal
            .op_requested(
                turn,
                &call.id,
                &call.name,
                &call.arguments,
                pre,
                expected,
                self.config.tools.on_crash(&call.name),
            )
            .map_err(|e| Stop::new(StopCause::Internal, e.to_string()))?;
        journal
            .op_started(op, &call.name)
            .map_err(|e| Stop::new(StopCause::Internal, e.to_string()))?;
        Ok(Some(op))
    }

    /// For an edit or a new file: the file's hash now, the hash it will
    /// have if the call applies as asked, and the file and its text now
    /// (`None`: no such file), which undo goes back to.
    pub(super) async fn expected_change(&self, call: &ToolCall) -> ExpectedChange {
        let nothing = || (Vec::new(), Vec::new(), None);
        let Some(tool) = self.config.tools.get(&call.name) else {
            return nothing();
        };
        // The file first (which the tool names), then what it will hold.
        let Some(named) = tool.predicted_edit(&call.arguments, None) else {
            return nothing();
        };
        let Ok(path) = crate::paths::resolve(self.ports.workspace.root(), &named.path) else {
            return nothing();
        };
        let current = self.ports.workspace.read_file(&path).await.ok();
        let after = tool
            .predicted_edit(&call.arguments, current.as_ref().map(|f| f.text.as_str()))
            .and_then(|p| p.after)
            .map(|text| rein_text::ContentHash::of_str(&text));
        let pre = vec![file_hash(&path, current.as_ref().map(|f| f.version.hash))];
        let expected = after
            .map(|h| vec![file_hash(&path, Some(h))])
            .unwrap_or_default();
        (pre, expected, Some((path, current.map(|f| f.text))))
    }

    /// After a call that changed a file: the file's text before the call
    /// (read in [`Self::op_begin`]) and now, for undo.
    async fn record_file_change(&self, result: &RecordedResult) -> Result<(), Stop> {
        let Some(journal) = &self.ports.journal else {
            return Ok(());
        };
        let ResultMeta::Edited { path, .. } = &result.meta else {
            journal.forget_before(&result.call_id);
            return Ok(());
        };
        let after = self
            .ports
            .workspace
            .read_file(path)
            .await
            .ok()
            .map(|f| f.text);
        journal
            .file_edited(&result.call_id, path, after)
            .map_err(|e| Stop::new(StopCause::Internal, e.to_string()))
    }

    /// An output over the cap goes to a file; the model gets its head, its
    /// tail and where the rest is.
    pub(super) async fn spill_if_large(&self, call_id: &str, mut output: ToolOutput) -> ToolOutput {
        let tokens = rein_models::tokens::count_text(&output.content);
        if tokens <= self.context.config.tool_output_cap {
            return output;
        }
        let rel = format!(
            "{}/output-{}.txt",
            self.artifacts.rel,
            crate::tools::file_safe(call_id)
        );
        let lines: Vec<&str> = output.content.lines().collect();
        let keep = 80.min(lines.len() / 2);
        let where_ = match self.ports.artifacts.write(&rel, &output.content).await {
            Ok(()) => format!(
                "the whole output is in {rel}; read it with read_file and start_line/end_line"
            ),
            Err(e) => format!("the whole output could not be saved ({e})"),
        };
        let head: Vec<&str> = lines.iter().take(keep).copied().collect();
        let tail: Vec<&str> = lines.iter().skip(lines.len() - keep).copied().collect();
        let head =
            crate::context::fit_tokens(&head.join("\n"), self.context.config.tool_output_cap / 3);
        let tail =
            crate::context::fit_tokens(&tail.join("\n"), self.context.config.tool_output_cap / 3);
        output.content = format!(
            "{head}\n[… {} lines ({tokens} tokens) omitted; {where_}]\n{tail}",
            lines.len().saturating_sub(2 * keep)
        );
        self.event(TaskEvent::Context {
            transformation: "spill_large_output".into(),
            detail: format!("{call_id}: {tokens} tokens → {rel}"),
        });
        output
    }

    /// Takes in tools that came or went since the last turn (an MCP
    /// server's list changed): the model sees the new list from this turn.
    pub(super) async fn update_tools(&mut self) {
        let Some(updates) = self.config.tool_updates.clone() else {
            return;
        };
        let Some((gone, added)) = updates.changed().await else {
            return;
        };
        let mut tools = self.config.tools.without_all(&gone);
        let mut names = Vec::new();
        for tool in added {
            let name = tool.name().to_owned();
            match tools.add(tool) {
                Ok(()) => names.push(name),
                Err(error) => tracing::warn!("tool not added: {error}"),
            }
        }
        let removed: Vec<&String> = gone.iter().filter(|n| !names.contains(n)).collect();
        let added: Vec<&String> = names.iter().filter(|n| !gone.contains(n)).collect();
        self.config.tools = tools;
        self.context.set_tools(self.config.tools.specs());
        if removed.is_empty() && added.is_empty() {
            return;
        }
        let list = |names: &[&String]| {
            names
                .iter()
                .map(|n| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        self.event(TaskEvent::Context {
            transformation: "tools_changed".into(),
            detail: format!("added: {}; removed: {}", list(&added), list(&removed)),
        });
    }
}

/// The outcome of one reply's calls.
pub(super) struct Batch {
    results: Vec<RecordedResult>,
    notes: Vec<String>,
    /// The task was cancelled midway (unrun calls got "cancelled").
    cancelled: bool,
    /// Something new was learned (for the no-progress guard).
    learned: bool,
    /// A question the user could not be asked or did not answer.
    waiting: Option<crate::tools::Waiting>,
    /// The task's time budget ran out during a call: why the task ends.
    out_of_time: Option<String>,
    /// The user turned down a change in this batch.
    rejected: bool,
}

/// One call's outcome, before it is recorded.
#[derive(Clone)]
pub(super) struct CallDone {
    output: ToolOutput,
    notice: Option<&'static str>,
    new_information: bool,
    waiting_for: Option<crate::tools::Waiting>,
    duration_ms: u64,
}

/// A result in one line: a command's own summary (exit code, failures),
/// else the first line of the text.
pub(super) fn summary_of(output: &ToolOutput) -> String {
    match &output.meta {
        ResultMeta::Command { summary, .. } => summary.clone(),
        _ => first_line(&output.content),
    }
}

pub(super) fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() > 120 {
        format!("{}…", line.chars().take(120).collect::<String>())
    } else {
        line.to_owned()
    }
}

/// What [`Agent::expected_change`] finds: the hashes before and expected
/// after, and the file with its text before (`None`: no such file).
type ExpectedChange = (
    Vec<FileHash>,
    Vec<FileHash>,
    Option<(String, Option<String>)>,
);
