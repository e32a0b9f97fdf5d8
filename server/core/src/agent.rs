//! The loop. One turn: check the budgets → assemble the context (compact
//! if needed) → call the model → branch: tool calls (permission → run,
//! independent reads in parallel, everything else in order → one result
//! per call, in the calls' order) · a claim of completion (→ verifier) ·
//! a budget or guard (→ stop with the reason). Cancellation is honoured
//! at every await and leaves a consistent history: calls that did not run
//! get a "cancelled" result.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Instant;

use futures::StreamExt;
use rein_models::pricing::PriceTable;
use rein_models::{
    BadToolCall, EventStream, ModelClient, ModelError, ModelEvent, ModelReply, ModelRequest, Part,
    Redactor, StopReason, ToolCall, ToolChoice,
};
use rein_store::{CheckpointPhase, FileHash};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::budget::{BudgetTracker, Budgets, Spent};
use crate::cancel::CancelReason;
use crate::context::history::{FILE_CALL_PREFIX, History, Item, RecordedResult, ResultMeta};
use crate::context::progress::Progress;
use crate::context::{ContextConfig, ContextManager, Shedding, first_turn, prompt, transcript};
use crate::dispatch::Dispatcher;
use crate::exec::Exec;
use crate::guard::{LoopGuard, RESAMPLE_TEMPERATURE, TurnedDown};
use crate::harness::{EditFormat, Harness};
use crate::journal::{AgentSnapshot, Journal, JournalError, LoopState, file_hash};
use crate::permissions::{Policy, TaskApprovals};
use crate::ports::{
    Approver, Artifacts, Evidence, ProgressSink, TaskEvent, TaskStatus, Verdict, Verifier,
    VerifyContext,
};
use crate::repetition;
use crate::task::{TaskKind, TaskSpec, TaskState};
use crate::testing::command::TestCommand;
use crate::text_calls;
use crate::tools::{ArtifactDir, ReadTracker, Registry, ToolCx, ToolOutput, ToolUpdates};
use crate::whole_files;
use crate::workspace::Workspace;

/// The text of a result for a call that never ran.
pub const CANCELLED: &str = "cancelled: the task was cancelled before this call ran.";

/// How the result of a call the cancel stopped on its way begins: it may
/// have been running (a command, an MCP call), so what it did is unknown.
pub const INTERRUPTED: &str = "interrupted: cancelled while under way";

/// The whole text of such a result (within a summary's 120 characters).
pub fn interrupted(duration_ms: u64) -> String {
    format!(
        "{INTERRUPTED} ({:.1} s in); it may have run in part: check its effects before running it again.",
        duration_ms as f64 / 1000.0
    )
}

/// How a task is run.
#[derive(Clone, Debug)]
pub struct AgentConfig {
    pub budgets: Budgets,
    pub context: ContextConfig,
    pub policy: Policy,
    pub test_command: Option<TestCommand>,
    /// Allow edits that change a fix-test task's assertions.
    pub allow_test_edits: bool,
    /// Turns without new information before the model is asked for its
    /// best answer.
    pub stale_turn_limit: u32,
    pub prices: PriceTable,
    /// `AGENTS.md` or `CLAUDE.md`: (file name, text).
    pub project_instructions: Option<(String, String)>,
    /// Why the cancellation token fired, if whoever fired it said.
    pub cancel_reason: CancelReason,
    /// What the model and the artifacts never see: the task's words, tool
    /// results and the project's instructions pass through it.
    pub redactor: Redactor,
    /// The tools the model may call.
    pub tools: Registry,
    /// Where tools that come and go during the task are asked about
    /// between turns (MCP servers).
    pub tool_updates: Option<Arc<dyn ToolUpdates>>,
    /// All of the harness, or the naive loop it is measured against.
    pub harness: Harness,
    /// How the model changes files (`auto` is decided by the front end
    /// once it knows the model's window; here it means `tools`).
    pub edit_format: EditFormat,
    /// The sampling temperature of an ordinary turn (the provider's
    /// setting; 0 by default: greedy first). The one more try after a
    /// repeated answer samples hotter (`RESAMPLE_TEMPERATURE`).
    pub temperature: Option<f64>,
}

impl AgentConfig {
    /// Whole files written in replies (the naive loop reads no calls from
    /// text, so it has none).
    fn whole_files(&self) -> bool {
        self.edit_format.is_whole() && !self.harness.is_naive()
    }

    pub fn new(policy: Policy) -> Self {
        Self {
            budgets: Budgets::default(),
            context: ContextConfig::default(),
            policy,
            test_command: None,
            allow_test_edits: false,
            stale_turn_limit: 3,
            prices: PriceTable::default(),
            project_instructions: None,
            cancel_reason: CancelReason::default(),
            redactor: Redactor::default(),
            tools: crate::tools::builtin(),
            tool_updates: None,
            harness: Harness::Full,
            edit_format: EditFormat::Tools,
            temperature: None,
        }
    }
}

/// What the loop reaches the world through.
#[derive(Clone)]
pub struct Ports {
    pub model: Arc<dyn ModelClient>,
    pub workspace: Arc<dyn Workspace>,
    pub exec: Arc<dyn Exec>,
    pub approver: Arc<dyn Approver>,
    pub progress: Arc<dyn ProgressSink>,
    pub verifier: Arc<dyn Verifier>,
    pub artifacts: Arc<dyn Artifacts>,
    /// The durable record (op log, checkpoints); `None` runs without one
    /// (tests, dry runs): nothing then survives a crash.
    pub journal: Option<Arc<Journal>>,
}

/// How a task ended (or paused, for `waiting_user`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub state: TaskState,
    pub reason: String,
    pub spent: Spent,
    pub evidence: Vec<Evidence>,
    /// The model's last words (its summary on success).
    pub final_text: Option<String>,
    pub history: History,
}

/// A stop reason as the trace shows it: its snake_case name (`tool_use`),
/// or the provider's own word for one Rein does not know.
fn stop_name(stop: &rein_models::StopReason) -> String {
    match stop {
        rein_models::StopReason::Other(word) => word.clone(),
        known => serde_json::to_value(known)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| format!("{known:?}")),
    }
}

/// Runs `task` until it ends, pauses for the user, or is cancelled.
pub async fn run(
    task: TaskSpec,
    config: AgentConfig,
    ports: Ports,
    cancel: CancellationToken,
) -> Outcome {
    let mut agent = Agent::new(task, config, ports, cancel);
    if agent.config.harness.is_naive() {
        let text = first_turn::plain_message(&agent.task);
        agent.history.push(Item::user(text));
        return agent.run().await;
    }
    let first = agent.task_message().await;
    agent.history.push(Item::user(first));
    agent.run().await
}

/// Continues a task from a snapshot (its last checkpoint, completed by
/// recovery with a result for every call of its last turn).
pub async fn resume(
    task: TaskSpec,
    snapshot: AgentSnapshot,
    config: AgentConfig,
    ports: Ports,
    cancel: CancellationToken,
) -> Outcome {
    let mut agent = Agent::new(task, config, ports, cancel);
    agent.restore(snapshot);
    agent.run().await
}

struct Agent {
    task: TaskSpec,
    config: AgentConfig,
    ports: Ports,
    cancel: CancellationToken,
    context: ContextManager,
    history: History,
    progress: Progress,
    tracker: BudgetTracker,
    guard: Mutex<LoopGuard>,
    approvals: Mutex<TaskApprovals>,
    reads: ReadTracker,
    runs: AtomicU32,
    artifacts: ArtifactDir,
    state: TaskState,
    compactions: u32,
    resumed: bool,
    /// What the last request changed in the history (stubs, summaries):
    /// a standing transformation is traced once, when it starts.
    shown_transformations: HashSet<(String, String)>,
    /// What the requests show shed, kept so shedding comes in batches.
    shedding: Shedding,
    /// The model's last words (its last non-empty text): the reason it
    /// gives when the loop guard ends the task.
    last_words: Option<String>,
    /// What the model wrote in this turn's reply (empty if nothing).
    turn_text: String,
    /// Whether the next request requires a tool call.
    force_call: ForceCall,
}

/// After a call the model wrote wrong in its text, the next request
/// requires a call, where the provider holds it to the tools' schemas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ForceCall {
    No,
    Next,
    /// The server refused it once: never again in this task.
    Unsupported,
}

/// What a reply's whole files came to ([`Agent::take_whole_files`]).
#[derive(Debug, PartialEq)]
enum WholeFiles {
    None,
    /// They became the reply's calls.
    Written,
    /// They became calls run before the reply's own calls (which decide
    /// what comes next: no check of a claim).
    WrittenBesideCalls,
    /// They are the files as they are now.
    Unchanged(Vec<String>),
    /// Code that names no file and rewrites none.
    Unplaced,
}

/// Why the loop stopped early.
struct Stop {
    state: TaskState,
    reason: String,
    evidence: Vec<Evidence>,
    final_text: Option<String>,
}

impl Stop {
    fn new(state: TaskState, reason: impl Into<String>) -> Self {
        Self {
            state,
            reason: reason.into(),
            evidence: Vec::new(),
            final_text: None,
        }
    }
}

impl Agent {
    fn new(
        task: TaskSpec,
        mut config: AgentConfig,
        ports: Ports,
        cancel: CancellationToken,
    ) -> Self {
        // A key pasted into an instruction or kept in AGENTS.md reaches
        // neither the model nor the trace.
        let task = config.redactor.redacted(task);
        if let Some((_, text)) = &mut config.project_instructions
            && let Cow::Owned(clean) = config.redactor.redact(text)
        {
            *text = clean;
        }
        let tools = config.tools.specs();
        let mut context = ContextManager::new(
            config.context.clone(),
            ports.model.model(),
            &task,
            tools,
            config.project_instructions.clone(),
        );
        if config.whole_files() {
            context = context.for_whole_files();
        }
        let artifacts = ArtifactDir::new(ports.workspace.root(), &task.id.0);
        Self {
            tracker: BudgetTracker::new(config.budgets.clone()),
            guard: Mutex::new(if config.harness.is_naive() {
                LoopGuard::off()
            } else {
                LoopGuard::new(config.stale_turn_limit)
            }),
            approvals: Mutex::new(TaskApprovals::default()),
            reads: ReadTracker::default(),
            runs: AtomicU32::new(0),
            history: History::default(),
            progress: Progress::default(),
            state: TaskState::Queued,
            compactions: 0,
            resumed: false,
            shown_transformations: HashSet::new(),
            shedding: Shedding::default(),
            last_words: None,
            turn_text: String::new(),
            force_call: ForceCall::No,
            artifacts,
            context,
            task,
            config,
            ports,
            cancel,
        }
    }

    fn event(&self, event: TaskEvent) {
        self.ports.progress.event(&self.task.id, &event);
    }

    fn restore(&mut self, AgentSnapshot { history, state }: AgentSnapshot) {
        self.resumed = true;
        self.history = history;
        let snapshot = state;
        self.progress = snapshot.progress;
        self.tracker = BudgetTracker::resume(
            self.config.budgets.clone(),
            snapshot.spent,
            std::time::Duration::from_millis(snapshot.elapsed_ms),
        );
        for (path, version) in snapshot.reads {
            self.reads.set(&path, version);
        }
        self.runs = AtomicU32::new(snapshot.runs);
        self.compactions = snapshot.compactions;
    }

    /// The loop's state for a checkpoint (its history goes separately,
    /// by reference: copying it would make a turn cost more the longer the
    /// task).
    fn loop_state(&self, turn: u32) -> LoopState {
        LoopState {
            turn,
            progress: self.progress.clone(),
            spent: self.tracker.spent.clone(),
            elapsed_ms: self.tracker.elapsed().as_millis() as u64,
            reads: self.reads.all(),
            runs: self.runs.load(std::sync::atomic::Ordering::SeqCst),
            compactions: self.compactions,
            verifier: self.ports.verifier.saved_state(),
        }
    }

    /// Writes to the journal, if there is one. A failed write stops the
    /// task: without its record Rein cannot promise a safe recovery.
    fn journal(
        &self,
        write: impl FnOnce(&Journal) -> Result<(), JournalError>,
    ) -> Result<(), Stop> {
        match &self.ports.journal {
            Some(journal) => {
                write(journal).map_err(|e| Stop::new(TaskState::Failed, e.to_string()))
            }
            None => Ok(()),
        }
    }

    fn checkpoint(&self, turn: u32, phase: CheckpointPhase) -> Result<(), Stop> {
        let state = self.loop_state(turn);
        self.journal(|j| j.checkpoint(phase, &state, &self.history))
    }

    fn set_state(&mut self, state: TaskState, reason: Option<String>) {
        self.state = state;
        if let Some(journal) = &self.ports.journal
            && let Err(error) = journal.state(state, reason.as_deref(), &self.tracker.spent)
        {
            // The next journal write fails too and stops the task.
            tracing::error!(%error, "could not record the task's state");
        }
        self.status(state, reason);
    }

    /// Reports a status without changing the loop's own state: a state
    /// passed through inside a step (waiting for the user's answer).
    fn status(&self, state: TaskState, reason: Option<String>) {
        let spent = &self.tracker.spent;
        self.event(TaskEvent::Status(TaskStatus {
            task_id: self.task.id.clone(),
            state,
            reason,
            turn: spent.turns,
            max_turns: self.tracker.budgets.max_turns,
            input_tokens: spent.usage.total_input(),
            output_tokens: spent.usage.output_tokens,
            cost_usd: spent.cost_usd,
            unpriced_calls: spent.unpriced_calls,
        }));
    }

    async fn run(&mut self) -> Outcome {
        let budgets = &self.config.budgets;
        self.event(TaskEvent::Started {
            goal: self.task.goal.clone(),
            task: self.task.kind.clone(),
            provider: self.ports.model.provider().to_owned(),
            model: self.ports.model.model().to_owned(),
            max_turns: budgets.max_turns,
            max_cost_usd: budgets.max_cost_usd,
            max_tokens: budgets.max_tokens,
            max_minutes: budgets.max_wall_time.as_secs() / 60,
            resumed: self.resumed,
        });
        self.set_state(TaskState::Running, None);
        let lease = self
            .ports
            .journal
            .as_ref()
            .map(|j| j.keep_lease(self.cancel.clone()));
        let stop = match self.already_met().await {
            Some(stop) => stop,
            None => loop {
                match self.turn().await {
                    Ok(()) => continue,
                    Err(stop) => break stop,
                }
            },
        };
        self.set_state(stop.state, Some(stop.reason.clone()));
        if let Some(lease) = lease {
            lease.abort();
        }
        if let Some(journal) = &self.ports.journal {
            journal.release();
        }
        Outcome {
            state: stop.state,
            reason: stop.reason,
            spent: self.tracker.spent.clone(),
            evidence: stop.evidence,
            final_text: stop.final_text,
            history: std::mem::take(&mut self.history),
        }
    }

    /// A new task whose acceptance already holds before it changes
    /// anything (a test to fix that passes) has nothing to do: it ends
    /// here, before any model call, with the evidence that showed it. A
    /// resumed task is past that point: its work has begun.
    async fn already_met(&mut self) -> Option<Stop> {
        if self.resumed || self.cancel.is_cancelled() || !self.ports.verifier.met_at_baseline() {
            return None;
        }
        self.set_state(TaskState::Verifying, None);
        self.event(TaskEvent::Activity {
            text: "checking whether it already passes".into(),
        });
        let cx = VerifyContext {
            task: &self.task,
            touched: &[],
            workspace: self.ports.workspace.as_ref(),
            exec: self.ports.exec.as_ref(),
            artifacts_dir: self.artifacts.abs.clone(),
            cancel: self.cancel.clone(),
            time: self.tracker.time_budget(),
        };
        let met = tokio::select! {
            // The first turn says it was cancelled.
            () = self.cancel.cancelled() => None,
            met = self.ports.verifier.already_met(cx) => met,
        };
        let Some(met) = met else {
            self.set_state(TaskState::Running, None);
            return None;
        };
        self.event(TaskEvent::Verification {
            turn: 0,
            passed: true,
            detail: met.summary.clone(),
            evidence: met.evidence.clone(),
        });
        Some(Stop {
            state: TaskState::Succeeded,
            reason: met.summary,
            evidence: met.evidence,
            final_text: None,
        })
    }

    /// One turn. `Err` ends the task.
    async fn turn(&mut self) -> Result<(), Stop> {
        if self.cancel.is_cancelled() {
            return Err(Stop::new(
                TaskState::Cancelled,
                self.config.cancel_reason.text(),
            ));
        }
        if let Some(exhausted) = self.tracker.check() {
            return Err(Stop::new(TaskState::BudgetExhausted, exhausted.reason));
        }
        let turn = self.tracker.spent.turns + 1;
        self.update_tools().await;
        let (request, estimated) = self.prepare_request(turn).await?;
        let Some(mut reply) = self.call_model(turn, request, estimated).await? else {
            // The history was compacted to fit: try the turn again.
            return Ok(());
        };
        let unusable_text_calls = self.take_text_calls(turn, &mut reply);
        // In the whole format the file is the answer asked for, even beside
        // a call written wrong (then the file is written and checked, and
        // the broken call is not held against the reply). Seen with a 1.5B
        // model: the fix in a code block, then the same file again as a
        // `write_file` JSON call that its own nested fence cut short.
        let wrote = self.take_whole_files(turn, &mut reply).await;

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
            // spent asking the model to say so.
            if wrote == WholeFiles::Written && self.last_results_succeeded() {
                return self.claim(turn, text).await;
            }
            return Ok(());
        }
        // Nothing written: in this format a fix is a write, and the test
        // already ran after the last one, so this is not a claim to check.
        let nudge = match wrote {
            WholeFiles::Unchanged(paths) => Some((
                "whole_file_unchanged",
                format!(
                    "The file you wrote ({}) is the same as it is now: nothing changed. Find the bug, then write the fixed file whole.",
                    paths.join(", ")
                ),
            )),
            // Once files changed, a snippet may illustrate a finished fix:
            // that claim is the verifier's.
            WholeFiles::Unplaced if self.progress.changed.is_empty() => Some((
                "whole_file_unplaced",
                "Your code block names no file, so nothing was written and the test did not run. Write the fixed file whole: its path alone on a line, then every line of the file in a fenced code block.".to_owned(),
            )),
            _ => None,
        };
        if let Some((guard, nudge)) = nudge {
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
                TaskState::Failed,
                format!("the model refused: {}", text.trim()),
            )),
            StopReason::ContextWindowExceeded => {
                if self.compact(turn).await? {
                    Ok(())
                } else {
                    Err(Stop::new(
                        TaskState::Failed,
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
    async fn task_message(&self) -> String {
        let baseline = self.ports.verifier.baseline_output();
        let window = self.context.config.window_tokens;
        let first = first_turn::first_message(
            &self.task,
            &first_turn::Sources {
                workspace: self.ports.workspace.as_ref(),
                policy: &self.config.policy,
                redactor: &self.config.redactor,
                baseline: baseline.as_ref(),
                // What the task needs up front, not the whole window.
                budget_tokens: (window / 4).min(FIRST_TURN_TOKENS),
                whole_files: self.config.whole_files(),
            },
        )
        .await;
        for (path, version) in first.reads {
            self.reads.set(&path, version);
        }
        first.text
    }

    /// The one more try after a model repeated itself, in the whole-file
    /// format: the conversation so far is set aside (archived) and the
    /// task is told again with the code as it is now, and what did not
    /// work. Measured with a 1.5B model: at the repeat, its own replies
    /// in the history were degenerate (an empty fence, the user's words
    /// echoed back), and sampled hotter it repeated them again. Not in
    /// the tools format, where the history holds what the model read and
    /// ran. Returns whether the history was replaced.
    async fn start_afresh(&mut self, did_not_work: &str) -> bool {
        if !self.config.whole_files() || !matches!(self.task.kind, TaskKind::FixTest { .. }) {
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

    /// A reply that is neither a call nor a claim (a broken call, a file
    /// written back unchanged) is answered with how to do better; the same
    /// reply twice, nothing changed in between, is a model going in
    /// circles, and ends the task as a repeated claim does.
    async fn answer_instead(
        &mut self,
        guard: &str,
        nudge: String,
        reply: &str,
    ) -> Result<(), Stop> {
        let nudge = match self.turned_down(reply) {
            TurnedDown::GiveUp(why) => {
                return Err(self.guard_stop("gave_up", format!("stopped: {why}"), Vec::new()));
            }
            TurnedDown::Resample(why) => {
                self.resample_event(&why);
                if self.start_afresh(&nudge).await {
                    return Ok(());
                }
                format!("{nudge}\n{}", prompt::TRY_SOMETHING_ELSE)
            }
            TurnedDown::GoOn => nudge,
        };
        self.event(TaskEvent::Guard {
            call_id: None,
            guard: guard.into(),
            message: nudge.clone(),
        });
        self.history.push(Item::user(nudge));
        Ok(())
    }

    /// What the loop guard makes of a reply the checks turned down.
    fn turned_down(&self, reply: &str) -> TurnedDown {
        self.guard
            .lock()
            .map_or(TurnedDown::GoOn, |mut g| g.claim_turned_down(reply))
    }

    /// Says the model gets one more try, sampled hotter, and why.
    fn resample_event(&self, why: &str) {
        self.event(TaskEvent::Guard {
            call_id: None,
            guard: "resample".into(),
            message: format!(
                "{why}: one more try, at temperature {RESAMPLE_TEMPERATURE}, asked to change its approach"
            ),
        });
    }

    /// A reply without a real call whose text holds calls (see
    /// [`text_calls`]): they become the reply's calls, recorded as read
    /// from text. `Some` with what is wrong when the text tried to call and
    /// cannot be run.
    fn take_text_calls(&self, turn: u32, reply: &mut ModelReply) -> Option<Vec<String>> {
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
    async fn take_whole_files(&self, turn: u32, reply: &mut ModelReply) -> WholeFiles {
        let finished = is_finished(&reply.stop);
        if !self.config.whole_files() || !finished {
            return WholeFiles::None;
        }
        // "Here is the file … now run the tests": the file is written
        // first, then its calls run.
        let beside_calls = !calls_of(reply).is_empty();
        let read: Vec<String> = self.reads.all().into_iter().map(|(p, _)| p).collect();
        let found = whole_files::writes(&reply.text(), self.ports.workspace.as_ref(), &read).await;
        if beside_calls && found.calls.is_empty() {
            return WholeFiles::None;
        }
        if found.calls.is_empty() {
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

    /// Whether every call of the last batch succeeded.
    fn last_results_succeeded(&self) -> bool {
        matches!(
            self.history.items.last(),
            Some(Item::Results { results, .. }) if results.iter().all(|r| !r.is_error)
        )
    }

    /// The request for this turn and Rein's estimate of its input tokens.
    async fn prepare_request(&mut self, turn: u32) -> Result<(ModelRequest, u64), Stop> {
        let note = self.progress.render(
            turn,
            self.tracker.budgets.max_turns,
            &self.task,
            self.context.config.restate_every,
        );
        self.event(TaskEvent::ProgressNote {
            turn,
            progress: self.progress.clone(),
        });
        let mut assembled = self
            .context
            .assemble_with(&self.history, &note, &mut self.shedding);
        if assembled.estimated_tokens > self.context.threshold() && self.compact(turn).await? {
            assembled = self
                .context
                .assemble_with(&self.history, &note, &mut self.shedding);
        }
        let mut now = HashSet::new();
        for (transformation, detail) in assembled.transformations {
            let key = (transformation, detail);
            if !self.shown_transformations.contains(&key) && !now.contains(&key) {
                self.event(TaskEvent::Context {
                    transformation: key.0.clone(),
                    detail: key.1.clone(),
                });
            }
            now.insert(key);
        }
        self.shown_transformations = now;
        let mut request = assembled.request;
        request.temperature = self.config.temperature;
        if self.guard.lock().is_ok_and(|g| g.resampling()) {
            request.temperature = Some(RESAMPLE_TEMPERATURE);
        }
        if self.force_call == ForceCall::Next {
            request.tool_choice = ToolChoice::Required;
            self.force_call = ForceCall::No;
        }
        Ok((request, assembled.estimated_tokens))
    }

    /// One model call with its retries, bounded by the model timeout and
    /// the cancellation token. `None`: the prompt did not fit and the
    /// history was compacted; the turn should be tried again.
    async fn call_model(
        &mut self,
        turn: u32,
        request: ModelRequest,
        estimated: u64,
    ) -> Result<Option<ModelReply>, Stop> {
        let request_ref = self.save_request(turn, &request).await;
        let started = Instant::now();
        let forced = request.tool_choice == ToolChoice::Required;
        // A reply stuck repeating itself is cut short (the loop guard's
        // job, so not in the naive loop).
        let cut = (!self.config.harness.is_naive()).then(|| Arc::new(AtomicBool::new(false)));
        // The call ends when the task's time does: a local model may take
        // minutes over one answer, and the budget is the user's.
        let time_left = self.tracker.time_left();
        let reply = tokio::select! {
            reply = self.stream(request, Some(turn), cut.clone()) => reply,
            () = tokio::time::sleep(time_left) => return Err(self.out_of_time_answering()),
        };
        let mut reply = match reply {
            Ok(reply) => reply,
            Err(ModelError::Cancelled) => {
                return Err(Stop::new(
                    TaskState::Cancelled,
                    self.config.cancel_reason.text(),
                ));
            }
            Err(ModelError::ContextTooLong { .. }) if self.compact(turn).await? => return Ok(None),
            // A server that does not take a required call: ask as before,
            // and not again in this task.
            Err(ModelError::Rejected {
                status: 400 | 422, ..
            }) if forced => {
                self.force_call = ForceCall::Unsupported;
                self.event(TaskEvent::Context {
                    transformation: "tool_choice_unsupported".into(),
                    detail: "the server refused a required tool call; the turn is asked again without it".into(),
                });
                return Ok(None);
            }
            Err(e) => {
                return Err(Stop::new(
                    TaskState::Failed,
                    format!("the model call failed: {e}"),
                ));
            }
        };
        if cut.is_some_and(|cut| cut.load(Ordering::Relaxed)) {
            let dropped = repetition::trim_loop(&mut reply, estimated);
            let looping_call = reply
                .bad_calls
                .iter()
                .find(|bad| bad.problem == rein_models::BadArguments::Looping);
            let detail = match looping_call {
                Some(bad) => format!(
                    "the arguments of a call to {} repeated the same lines more than {} times: cut there, the call not run",
                    bad.name,
                    repetition::REPEATED_LINES
                ),
                None => format!(
                    "the reply repeated the same lines more than {} times: cut there, {dropped} bytes of the loop dropped",
                    repetition::REPEATED_LINES
                ),
            };
            self.event(TaskEvent::Context {
                transformation: "repetition_cut".into(),
                detail,
            });
        }
        let cost = self
            .config
            .prices
            .cost_usd(self.ports.model.model(), &reply.usage);
        self.tracker.record_call(&reply.usage, cost);
        let latency_ms = started.elapsed().as_millis() as u64;
        self.event(TaskEvent::ModelCall {
            turn,
            usage: reply.usage,
            cost_usd: cost,
            latency_ms,
            stop: stop_name(&reply.stop),
            retries: reply.retries,
            estimated_input_tokens: estimated,
        });
        self.journal(|j| j.turn(turn, &request_ref, &reply, cost, latency_ms))?;
        self.set_state(TaskState::Running, None);
        Ok(Some(reply))
    }

    /// The task's time ran out while the model was still answering.
    fn out_of_time_answering(&self) -> Stop {
        let reason = self
            .tracker
            .check()
            .map_or_else(|| "stopped: max time".to_owned(), |e| e.reason);
        Stop::new(
            TaskState::BudgetExhausted,
            format!("{reason}, while the model was answering"),
        )
    }

    /// Keeps the exact request of a turn as an artifact (the turn's record
    /// refers to it). Only with a journal: without one nothing refers to it.
    async fn save_request(&self, turn: u32, request: &ModelRequest) -> String {
        let rel = format!("{}/request-{turn}.json", self.artifacts.rel);
        let Some(journal) = &self.ports.journal else {
            return rel;
        };
        let json = self.config.redactor.json_pretty(request);
        match self.ports.artifacts.write(&rel, &json).await {
            Ok(()) => {
                let _ = journal.artifact(
                    &format!("request-{turn}.json"),
                    "request",
                    json.len() as u64,
                );
            }
            Err(error) => tracing::warn!(%error, "could not save the request"),
        }
        rel
    }

    /// `turn`: the turn whose text streams to the front end as it comes
    /// (`None` for a call whose text is not the model's answer: a
    /// compaction's summary).
    /// With `cut`, a reply that falls into a loop ends there and `cut`
    /// says so (`repetition.rs`).
    async fn stream(
        &self,
        request: ModelRequest,
        turn: Option<u32>,
        cut: Option<Arc<AtomicBool>>,
    ) -> Result<ModelReply, ModelError> {
        let progress = Arc::clone(&self.ports.progress);
        let task = self.task.id.clone();
        let events =
            self.ports
                .model
                .call(request, self.cancel.clone())
                .inspect(move |event| match (event, turn) {
                    (
                        Ok(ModelEvent::Retrying {
                            attempt,
                            delay,
                            reason,
                        }),
                        _,
                    ) => {
                        let retry = TaskEvent::ModelRetry {
                            attempt: *attempt,
                            delay_ms: delay.as_millis() as u64,
                            reason: reason.clone(),
                        };
                        progress.event(&task, &retry);
                    }
                    (Ok(ModelEvent::TextDelta(text)), Some(turn)) if !text.is_empty() => {
                        let delta = TaskEvent::TextDelta {
                            turn,
                            text: text.clone(),
                        };
                        progress.event(&task, &delta);
                    }
                    _ => {}
                });
        let events: EventStream = match cut {
            Some(cut) => Box::pin(repetition::cut_loops(events, cut)),
            None => Box::pin(events),
        };
        let timeout = self.tracker.budgets.model_timeout;
        tokio::select! {
            () = self.cancel.cancelled() => Err(ModelError::Cancelled),
            reply = tokio::time::timeout(timeout, rein_models::collect(events)) => match reply {
                Ok(reply) => reply,
                Err(_) => Err(ModelError::RequestTimeout { provider: "model", after: timeout }),
            },
        }
    }

    /// Runs the calls of one reply and records one result per call, in
    /// order. Consecutive read-only calls run in parallel.
    async fn run_calls(
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
            let effect = self
                .config
                .tools
                .get(tool)
                .map_or(crate::tools::Effect::Unknown, |t| t.effect());
            self.event(TaskEvent::ToolCall {
                turn,
                call_id: call_id.clone(),
                tool: tool.clone(),
                arguments,
                title: described.title,
                detail: described.detail,
                effect,
            });
        }
        let Batch {
            results,
            notes,
            cancelled,
            learned,
            waiting,
            out_of_time,
        } = self.dispatch_all(turn, &calls).await?;
        for r in &results {
            if let crate::context::history::ResultMeta::Edited { path, version } = &r.meta {
                self.progress.record_edit(path, version.label());
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
                TaskState::Cancelled,
                self.config.cancel_reason.text(),
            ));
        }
        if let Some(reason) = out_of_time {
            return Err(Stop::new(TaskState::BudgetExhausted, reason));
        }
        if let Some(question) = waiting {
            // Nobody could answer now: the task waits, its history intact.
            return Err(Stop::new(
                TaskState::WaitingUser,
                format!("waiting for the user's answer to: {question}"),
            ));
        }
        let stuck = self.guard.lock().ok().and_then(|g| g.stuck());
        if let Some(why) = stuck {
            let words = self.last_words.as_deref().map(quote);
            let reason = match words {
                Some(words) => format!("stopped: {why}. Its last words: {words}"),
                None => format!("stopped: {why}"),
            };
            return Err(self.guard_stop("stuck", reason, Vec::new()));
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
    async fn dispatch_all(
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
            results.push(result);
        }
        Ok(Batch {
            results,
            notes,
            cancelled,
            learned,
            waiting,
            out_of_time,
        })
    }

    /// Records a call as requested, then started, with the hashes of the
    /// files it may change now and after (what recovery compares with).
    async fn op_begin(
        &self,
        turn: u32,
        call: &Result<ToolCall, BadToolCall>,
    ) -> Result<Option<i64>, Stop> {
        let Some(journal) = &self.ports.journal else {
            return Ok(None);
        };
        let Ok(call) = call else { return Ok(None) };
        let (pre, expected) = self.expected_change(call).await;
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
            .map_err(|e| Stop::new(TaskState::Failed, e.to_string()))?;
        journal
            .op_started(op, &call.name)
            .map_err(|e| Stop::new(TaskState::Failed, e.to_string()))?;
        Ok(Some(op))
    }

    /// For an edit or a new file: the file's hash now, and the hash it
    /// will have if the call applies as asked.
    async fn expected_change(&self, call: &ToolCall) -> (Vec<FileHash>, Vec<FileHash>) {
        let Some(tool) = self.config.tools.get(&call.name) else {
            return (Vec::new(), Vec::new());
        };
        // The file first (which the tool names), then what it will hold.
        let Some(named) = tool.predicted_edit(&call.arguments, None) else {
            return (Vec::new(), Vec::new());
        };
        let Ok(path) = crate::paths::resolve(self.ports.workspace.root(), &named.path) else {
            return (Vec::new(), Vec::new());
        };
        let current = self.ports.workspace.read_file(&path).await.ok();
        let after = tool
            .predicted_edit(&call.arguments, current.as_ref().map(|f| f.text.as_str()))
            .and_then(|p| p.after)
            .map(|text| rein_text::ContentHash::of_str(&text));
        let pre = vec![file_hash(&path, current.map(|f| f.version.hash))];
        let expected = after
            .map(|h| vec![file_hash(&path, Some(h))])
            .unwrap_or_default();
        (pre, expected)
    }

    /// An output over the cap goes to a file; the model gets its head, its
    /// tail and where the rest is.
    async fn spill_if_large(&self, call_id: &str, mut output: ToolOutput) -> ToolOutput {
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
    async fn update_tools(&mut self) {
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

    /// The model says it is done: the verifier decides.
    async fn claim(&mut self, turn: u32, text: String) -> Result<(), Stop> {
        self.set_state(TaskState::Verifying, None);
        self.event(TaskEvent::Activity {
            text: "verifying".into(),
        });
        let touched: Vec<String> = self.progress.changed.keys().cloned().collect();
        let cx = VerifyContext {
            task: &self.task,
            touched: &touched,
            workspace: self.ports.workspace.as_ref(),
            exec: self.ports.exec.as_ref(),
            artifacts_dir: self.artifacts.abs.clone(),
            cancel: self.cancel.clone(),
            time: self.tracker.time_budget(),
        };
        let verdict = tokio::select! {
            () = self.cancel.cancelled() => return Err(Stop::new(TaskState::Cancelled, self.config.cancel_reason.text())),
            verdict = self.ports.verifier.verify(cx) => verdict,
        };
        match verdict {
            Verdict::Verified { summary, evidence } => {
                self.event(TaskEvent::Verification {
                    turn,
                    passed: true,
                    detail: summary.clone(),
                    evidence: evidence.clone(),
                });
                let reason = format!("{summary} in {turn} turns");
                Err(Stop {
                    state: TaskState::Succeeded,
                    reason,
                    evidence,
                    final_text: Some(text),
                })
            }
            Verdict::Unconfirmed { summary, evidence } => {
                let summary = self.config.redactor.redact(&summary).into_owned();
                self.event(TaskEvent::Verification {
                    turn,
                    passed: false,
                    detail: summary.clone(),
                    evidence: evidence.clone(),
                });
                Err(Stop {
                    state: TaskState::Unverified,
                    reason: format!("not verified after {turn} turns: {summary}"),
                    evidence,
                    final_text: Some(text),
                })
            }
            Verdict::Gap { gap, evidence } => {
                // It quotes test output, and goes to the model.
                let gap = self.config.redactor.redact(&gap).into_owned();
                self.event(TaskEvent::Verification {
                    turn,
                    passed: false,
                    detail: gap.clone(),
                    evidence: evidence.clone(),
                });
                let time = self.tracker.time_budget();
                if time.is_over() {
                    // The checks were cut short (or ended just in time):
                    // either way there is no time left to act on the gap.
                    return Err(Stop::new(
                        TaskState::BudgetExhausted,
                        format!(
                            "the time budget ({}) ran out while Rein verified the claim: {}",
                            time.label(),
                            gap.lines().next().unwrap_or_default()
                        ),
                    ));
                }
                let keep_going = match self.turned_down(&text) {
                    TurnedDown::GiveUp(why) => {
                        let reason = match text.trim() {
                            "" => format!("stopped: {why}"),
                            said => format!("stopped: {why}: {}", quote(said)),
                        };
                        return Err(self.guard_stop("gave_up", reason, evidence));
                    }
                    TurnedDown::Resample(why) => {
                        self.resample_event(&why);
                        self.progress.last_gap = Some(gap.clone());
                        if self
                            .start_afresh(&format!("Rein ran the test after it: {gap}"))
                            .await
                        {
                            self.set_state(TaskState::Running, None);
                            return Ok(());
                        }
                        prompt::TRY_SOMETHING_ELSE
                    }
                    TurnedDown::GoOn => "Keep going.",
                };
                self.progress.last_gap = Some(gap.clone());
                self.history.push(Item::user(format!(
                    "Rein checked your claim and the task is not done yet: {gap}\n{keep_going}"
                )));
                self.set_state(TaskState::Running, None);
                Ok(())
            }
        }
    }

    /// The loop guard ends the task: the model is going in circles, and
    /// more turns would only spend the budget. The trace says why.
    fn guard_stop(&self, guard: &str, reason: String, evidence: Vec<Evidence>) -> Stop {
        self.event(TaskEvent::Guard {
            call_id: None,
            guard: guard.into(),
            message: reason.clone(),
        });
        Stop {
            state: TaskState::Failed,
            reason,
            evidence,
            final_text: self.last_words.clone(),
        }
    }

    /// Writes `items`, about to leave the history, to the task's artifacts
    /// (redacted) and starts a new history epoch; the archive's path, or
    /// `None` if it could not be written.
    async fn archive_history(&mut self, items: &[Item], before: &str) -> Option<String> {
        self.compactions += 1;
        let archive = format!("{}/history-{}.json", self.artifacts.rel, self.compactions);
        let archived = self.config.redactor.json_pretty(items);
        match self.ports.artifacts.write(&archive, &archived).await {
            Ok(()) => Some(archive),
            Err(e) => {
                tracing::warn!(error = %e, "could not archive history before {before}");
                None
            }
        }
    }

    /// Summarizes the older part of the history with the model. Returns
    /// whether anything was compacted.
    async fn compact(&mut self, turn: u32) -> Result<bool, Stop> {
        if self.config.harness.is_naive() {
            return Ok(false);
        }
        let Some(cut) = self.context.compaction_cut(&self.history) else {
            return Ok(false);
        };
        let old: Vec<Item> = self.history.items[1..cut].to_vec();
        let tokens_before: u64 = self.history.items.iter().map(Item::tokens).sum();
        let Some(archive) = self.archive_history(&old, "compaction").await else {
            return Ok(false);
        };
        self.event(TaskEvent::Activity {
            text: "compacting the context".into(),
        });
        crate::failpoint::hit("compaction");
        let request = ModelRequest {
            model: self.ports.model.model().to_owned(),
            system: vec![prompt::COMPACTION_SYSTEM.to_owned()],
            messages: vec![rein_models::Message::user(prompt::compaction_request(
                &self.task,
                &transcript(&old),
            ))],
            tools: Vec::new(),
            // A summary, within what the model may write at all.
            max_output_tokens: self.context.config.max_output_tokens.min(4_096),
            temperature: None,
            tool_choice: Default::default(),
            cache: rein_models::CachePlan::default(),
        };
        // The summary is a model call like any other: it ends when the
        // task's time does.
        let time_left = self.tracker.time_left();
        let reply = tokio::select! {
            reply = self.stream(request, None, None) => reply,
            () = tokio::time::sleep(time_left) => return Err(self.out_of_time_answering()),
        };
        let reply = match reply {
            Ok(reply) => reply,
            Err(ModelError::Cancelled) => {
                return Err(Stop::new(
                    TaskState::Cancelled,
                    self.config.cancel_reason.text(),
                ));
            }
            Err(e) => {
                tracing::warn!(error = %e, "compaction call failed");
                return Ok(false);
            }
        };
        let cost = self
            .config
            .prices
            .cost_usd(self.ports.model.model(), &reply.usage);
        self.tracker.record_usage(&reply.usage, cost);
        let summary = reply.text();
        if summary.trim().is_empty() {
            return Ok(false);
        }
        let text = prompt::summary_item(summary.trim(), &archive);
        let tokens = rein_models::tokens::count_text(&text);
        self.history.items.splice(
            1..cut,
            [Item::Summary {
                text,
                archive: archive.clone(),
                tokens,
            }],
        );
        let tokens_after: u64 = self.history.items.iter().map(Item::tokens).sum();
        self.event(TaskEvent::Compaction {
            summarized_items: old.len(),
            tokens_before,
            tokens_after,
            archive,
            usage: reply.usage,
            cost_usd: cost,
        });
        let _ = turn;
        Ok(true)
    }
}

/// The outcome of one reply's calls.
struct Batch {
    results: Vec<RecordedResult>,
    notes: Vec<String>,
    /// The task was cancelled midway (unrun calls got "cancelled").
    cancelled: bool,
    /// Something new was learned (for the no-progress guard).
    learned: bool,
    /// A question the user could not be asked or did not answer.
    waiting: Option<String>,
    /// The task's time budget ran out during a call: why the task ends.
    out_of_time: Option<String>,
}

/// One call's outcome, before it is recorded.
#[derive(Clone)]
struct CallDone {
    output: ToolOutput,
    notice: Option<&'static str>,
    new_information: bool,
    waiting_for: Option<String>,
    duration_ms: u64,
}

/// The most the first message spends on what the task needs up front (the
/// failure, the test, the code under test).
const FIRST_TURN_TOKENS: u64 = 6_000;

/// The reply's calls in order: runnable ones and unusable ones alike, so
/// each gets its result.
/// A reply that ended as the model meant it to (not cut off, refused or
/// paused): its text may hold calls or files.
fn is_finished(stop: &StopReason) -> bool {
    matches!(
        stop,
        StopReason::EndTurn | StopReason::StopSequence | StopReason::ToolUse | StopReason::Other(_)
    )
}

/// `reply` with its text replaced by `prose` and the calls read from it,
/// numbered after `id_prefix`, before the reply's own calls. Thinking stays
/// where it was.
fn with_calls_from_text(
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
fn without_writes_of(reply: &mut ModelReply, paths: &[String]) -> Vec<String> {
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

fn calls_of(reply: &ModelReply) -> Vec<Result<ToolCall, BadToolCall>> {
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

/// A result in one line: a command's own summary (exit code, failures),
/// else the first line of the text.
fn summary_of(output: &ToolOutput) -> String {
    match &output.meta {
        ResultMeta::Command { summary, .. } => summary.clone(),
        _ => first_line(&output.content),
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() > 120 {
        format!("{}…", line.chars().take(120).collect::<String>())
    } else {
        line.to_owned()
    }
}

/// How much of the model's words a stop reason quotes: it is shown on a
/// status line; the whole text is the outcome's `final_text`.
const QUOTED_CHARS: usize = 300;

/// The model's words for a stop reason: on one line, cut to
/// [`QUOTED_CHARS`], key-shaped tokens redacted, in quotes.
fn quote(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let line = rein_models::redact(&line, None);
    if line.chars().count() > QUOTED_CHARS {
        format!(
            "\"{}…\"",
            line.chars().take(QUOTED_CHARS).collect::<String>()
        )
    } else {
        format!("\"{line}\"")
    }
}

/// How much of unparseable arguments the trace keeps: enough to see what
/// went wrong, not a whole truncated file.
const RAW_ARGUMENTS_SHOWN: usize = 2_000;

fn raw_shown(raw: &str) -> String {
    if raw.len() <= RAW_ARGUMENTS_SHOWN {
        return raw.to_owned();
    }
    let mut cut = RAW_ARGUMENTS_SHOWN;
    while !raw.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} bytes)", &raw[..cut], raw.len())
}

#[cfg(test)]
mod tests {
    use super::stop_name;
    use rein_models::StopReason;

    #[test]
    fn stop_reasons_are_traced_by_their_wire_names() {
        assert_eq!(stop_name(&StopReason::ToolUse), "tool_use");
        assert_eq!(stop_name(&StopReason::EndTurn), "end_turn");
        assert_eq!(
            stop_name(&StopReason::Other("content_filter".into())),
            "content_filter"
        );
    }
}
