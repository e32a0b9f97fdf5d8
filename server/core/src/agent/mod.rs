//! The loop. One turn: check the budgets → assemble the context (compact
//! if needed) → call the model → branch: tool calls (permission → run,
//! independent reads in parallel, everything else in order → one result
//! per call, in the calls' order) · a claim of completion (→ verifier) ·
//! a budget or guard (→ stop with the reason). Cancellation is honoured
//! at every await and leaves a consistent history: calls that did not run
//! get a "cancelled" result.
//!
//! Here: the task's life (`run`, `resume`, the loop, checkpoints, status).
//! The turn is in `turn.rs`; the model call in `model_call.rs`; a reply's
//! formats beyond tool calls (calls written as text, files written whole)
//! in `replies.rs`; running its calls in `calls.rs`; a claim checked and
//! the loop guard's verdict in `claims.rs`; compaction in `compaction.rs`.

mod call_of;
mod calls;
mod claims;
mod compaction;
mod ending;
mod minimise;
mod model_call;
mod replies;
mod search;
mod test_outcomes;
mod turn;
mod unfinished;

pub use ending::REJECTED;

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
pub use rein_protocol::StopCause;

/// The text of a result for a call that never ran.
pub use crate::tools::call::CANCELLED;

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
    /// When the loop searches with the verifier (`search.rs`); never in
    /// the naive loop.
    pub search: crate::config::search::SearchConfig,
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
            search: crate::config::search::SearchConfig::default(),
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
    /// Why it stopped, typed: what front ends decide on. `reason` is the
    /// same for people.
    pub cause: StopCause,
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
    /// Why the run stopped, once it has: on the final status.
    stopped_for: Option<StopCause>,
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
    /// The next turn is a search (`on_failure`, after a turned-down
    /// attempt).
    search_armed: bool,
    /// The next search starts hotter than the turn's own temperature: the
    /// model's greedy answer was already seen to change nothing.
    search_hot: bool,
    /// The search was found unavailable here, and said so.
    search_unavailable_said: bool,
    /// The one last search the loop guard's stop gives way to was spent.
    last_search_spent: bool,
    /// The user turned down the model's last change (none applied since):
    /// a model that then stops stops because the user said no.
    user_rejected: bool,
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
    /// Blocks that are a small part of the files they name (not written).
    Fragments(Vec<String>),
    /// Only the target test's file, which stays as written (not written).
    TargetTest(String),
}

/// Why the loop stopped early.
struct Stop {
    cause: StopCause,
    reason: String,
    evidence: Vec<Evidence>,
    final_text: Option<String>,
}

impl Stop {
    fn new(cause: StopCause, reason: impl Into<String>) -> Self {
        Self {
            cause,
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
            stopped_for: None,
            compactions: 0,
            resumed: false,
            shown_transformations: HashSet::new(),
            shedding: Shedding::default(),
            last_words: None,
            turn_text: String::new(),
            force_call: ForceCall::No,
            search_armed: false,
            search_hot: false,
            search_unavailable_said: false,
            last_search_spent: false,
            user_rejected: false,
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
                write(journal).map_err(|e| Stop::new(StopCause::Internal, e.to_string()))
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
            cause: self.stopped_for,
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
        self.baseline_outcomes();
        let stop = match self.already_met().await {
            Some(stop) => stop,
            None => loop {
                match self.turn().await {
                    Ok(()) => continue,
                    Err(stop) => break stop,
                }
            },
        };
        let stop = self.in_users_words(stop);
        let state = stop.cause.state();
        self.stopped_for = Some(stop.cause);
        self.set_state(state, Some(stop.reason.clone()));
        if let Some(lease) = lease {
            lease.abort();
        }
        if let Some(journal) = &self.ports.journal {
            journal.release();
        }
        Outcome {
            state,
            cause: stop.cause,
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
            cause: StopCause::AlreadyMet,
            reason: met.summary,
            evidence: met.evidence,
            final_text: None,
        })
    }
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
