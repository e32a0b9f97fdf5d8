//! The loop's other ports: the human ([`Approver`]), the observer
//! ([`ProgressSink`]: progress in the editor, and the trace) and the judge
//! ([`Verifier`]). Front-ends implement them; the loop only calls them.

use std::path::PathBuf;

use async_trait::async_trait;
use rein_models::Usage;
use rein_text::ContentHash;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::effect::{Effect, ToolKind};
use crate::exec::{Exec, SandboxMode};
use crate::permissions::Decision;
use crate::task::{TaskId, TaskSpec, TaskState};
use crate::workspace::Workspace;

/// A command the policy says to ask about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandApproval {
    pub task: TaskId,
    pub tool: String,
    pub command: String,
    pub cwd: PathBuf,
    /// The rule that asked, e.g. "default: run_command asks".
    pub rule: String,
    /// The command asks for the network (it has loopback only otherwise).
    pub network: bool,
    /// The sandbox a `[[sandbox.rules]]` entry gives the command (`None`:
    /// the workspace's), so the question can say where it may write.
    pub sandbox_mode: Option<SandboxMode>,
    /// A call of a tool that is no command (an MCP tool): what it is called
    /// with, for the question to show.
    pub call: Option<CallShown>,
}

/// A tool call put to the user as it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallShown {
    /// The call's arguments (the approver redacts them before showing).
    pub arguments: Value,
    /// What the tool says it does: its own word, which the policy does not
    /// trust, but the user may want to know.
    pub declared: Effect,
    /// What the tool is for, as the user sees it.
    pub kind: ToolKind,
}

impl CommandApproval {
    /// Why the user is asked, for the question: the rule, and for a tool's
    /// call under the default rule, what the tool said of itself (one that
    /// says it only reads is asked about all the same: the policy does not
    /// take a server's word).
    pub fn why_asked(&self) -> String {
        const DEFAULT: &str = "default: tools with effects ask";
        match &self.call {
            Some(call) if self.rule == DEFAULT => match call.declared {
                Effect::ReadOnly => "default: MCP tools ask, even one that says it only reads (its server's word, which Rein cannot check)".to_owned(),
                Effect::Unknown => format!("{DEFAULT}; this one does not say what it does"),
                Effect::SideEffects | Effect::EditsWorkspace => DEFAULT.to_owned(),
            },
            _ => self.rule.clone(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    AllowOnce,
    /// Allow this exact command for the rest of the task.
    AllowForTask,
    Deny,
}

/// Everything that needs the human (edits are approved through the
/// [`Workspace`], where the editor shows them).
#[async_trait]
pub trait Approver: Send + Sync {
    /// Asks whether a command may run. No answer in time counts as `Deny`.
    async fn approve_command(&self, request: &CommandApproval) -> ApprovalDecision;

    /// Puts the model's question to the user; `None` if it could not be
    /// asked or was not answered (the task then stops, waiting).
    async fn ask_user(&self, task: &TaskId, question: &str) -> Option<String>;
}

/// A snapshot of a task for a status line (the editor's `rein/taskStatus`
/// is the LSP crate's wire shape of it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskStatus {
    pub task_id: TaskId,
    pub state: TaskState,
    pub reason: Option<String>,
    pub turn: u32,
    pub max_turns: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// What the priced calls cost; see `unpriced_calls`.
    pub cost_usd: f64,
    /// Calls of a model with no known price: `cost_usd` leaves them out,
    /// so the real cost is unknown (more than `cost_usd`).
    #[serde(default)]
    pub unpriced_calls: u32,
    /// On a final status: why the task stopped, typed (a front end offers
    /// what fixes it: set-up after a model that failed, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<rein_protocol::StopCause>,
}

/// The activity while a command waits for the user's approval: front ends
/// that show the approval itself skip it.
pub const APPROVAL_WAIT: &str = "waiting for approval";

/// Everything that happens in a task, in order: progress for the editor
/// and the record for the trace.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TaskEvent {
    /// The first event of a run (and of every resumed run): what the task
    /// is and what it may spend, so a trace stands on its own.
    Started {
        goal: String,
        task: crate::task::TaskKind,
        provider: String,
        model: String,
        max_turns: u32,
        max_cost_usd: Option<f64>,
        max_tokens: u64,
        max_minutes: u64,
        /// Continued from a checkpoint after a crash or a pause.
        resumed: bool,
    },
    Status(TaskStatus),
    /// What the harness is doing now, for the progress line
    /// ("running tests", [`APPROVAL_WAIT`]).
    Activity {
        text: String,
    },
    ModelCall {
        turn: u32,
        usage: Usage,
        cost_usd: Option<f64>,
        latency_ms: u64,
        stop: String,
        retries: u32,
        estimated_input_tokens: u64,
    },
    ModelRetry {
        attempt: u32,
        delay_ms: u64,
        reason: String,
    },
    /// A piece of the model's text as it streams, for a front end that
    /// shows it live (a chat panel). The whole text of the turn follows as
    /// [`TaskEvent::Text`] once the reply is complete; after a
    /// [`TaskEvent::ModelRetry`] the reply starts over. Not traced: the
    /// trace records the whole text.
    TextDelta {
        turn: u32,
        text: String,
    },
    /// The model's visible text of one turn.
    Text {
        turn: u32,
        text: String,
    },
    ToolCall {
        turn: u32,
        call_id: String,
        tool: String,
        arguments: Value,
        /// What the call is doing, for a status line ("reading cart.py"),
        /// from the tool's registry entry.
        title: String,
        /// Its main argument, for a log line ("cart.py:10-20").
        detail: String,
        /// What the tool is for (a panel's icon; for an MCP tool, what the
        /// server says it does). Not traced: the registry's fact, not the
        /// call's.
        #[serde(skip)]
        kind: ToolKind,
    },
    Permission {
        call_id: String,
        tool: String,
        decision: Decision,
        rule: String,
    },
    Approval {
        call_id: String,
        tool: String,
        decision: ApprovalDecision,
    },
    ToolResult {
        call_id: String,
        tool: String,
        is_error: bool,
        summary: String,
        duration_ms: u64,
        /// The size of the whole result the tool gave, in bytes (before a
        /// large one was spilled to the artifacts).
        output_bytes: u64,
    },
    Guard {
        call_id: Option<String>,
        guard: String,
        message: String,
    },
    /// A change to what the model sees (a stub, a trimmed log, a spill).
    Context {
        transformation: String,
        detail: String,
    },
    Compaction {
        summarized_items: usize,
        tokens_before: u64,
        tokens_after: u64,
        archive: String,
        /// The summarizing model call's own usage and cost (not a turn,
        /// but it counts against the budget).
        usage: Usage,
        cost_usd: Option<f64>,
    },
    /// `ask_user`: the call that asks, for the trace to link them.
    Question {
        call_id: String,
        question: String,
    },
    Answer {
        call_id: String,
        answer: String,
    },
    /// Where the task stands, as the model reads it at the end of each
    /// turn's context (`context::progress`): for a front end that shows it
    /// as a plan. Not traced: the checkpoints hold it.
    ProgressNote {
        turn: u32,
        progress: crate::context::progress::Progress,
    },
    /// One candidate fix of the search (`agent/search.rs`): sampled from
    /// the same prompt state as the others, checked in a private layer
    /// over the workspace, never written to it unless it passed.
    Candidate {
        /// The model call that gave it.
        turn: u32,
        /// Its number in this search, from 1 (the ordinary next turn).
        number: u32,
        /// How many the search may try.
        of: u32,
        temperature: f64,
        outcome: CandidateOutcome,
        /// One line: why it failed, which earlier one it repeats, what
        /// made it no candidate.
        detail: String,
        /// The files it changes (workspace-relative).
        files: Vec<String>,
        /// How long its check took (0: not checked).
        check_ms: u64,
    },
    /// Which tests a run showed failing and which passing (the model's
    /// `run_tests`, the verifier's checks, the baseline), as the runner
    /// named them, cleaned and bounded by `testing::outcomes`: for a front
    /// end that marks the failing tests (a CodeLens). Not traced: the
    /// command results and the evidence hold them.
    TestOutcomes {
        failed: Vec<String>,
        passed: Vec<String>,
    },
    /// The verifier's verdict on the claim the model made in `turn`.
    Verification {
        turn: u32,
        passed: bool,
        detail: String,
        evidence: Vec<Evidence>,
    },
}

/// What became of one candidate fix of the search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CandidateOutcome {
    /// Its check passed: it is proposed as the model's reply.
    Passed,
    /// Its check failed (or its edits do not apply).
    Failed,
    /// The same files as an earlier candidate, or as they are now: not
    /// checked again.
    SameAsBefore,
    /// A reply that does more than change files (reads, runs, claims):
    /// it goes on as an ordinary turn, and the search ends.
    NotACandidate,
}

impl CandidateOutcome {
    pub fn name(self) -> &'static str {
        match self {
            CandidateOutcome::Passed => "passed",
            CandidateOutcome::Failed => "failed",
            CandidateOutcome::SameAsBefore => "same_as_before",
            CandidateOutcome::NotACandidate => "not_a_candidate",
        }
    }
}

/// Observes a task. Must not block: the LSP implementation forwards to
/// the editor without awaiting it, the trace writer appends a line.
pub trait ProgressSink: Send + Sync {
    fn event(&self, task: &TaskId, event: &TaskEvent);
}

/// A sink that drops everything.
pub struct NoProgress;

impl ProgressSink for NoProgress {
    fn event(&self, _: &TaskId, _: &TaskEvent) {}
}

/// What a check saw, so "it passes" is a fact anyone can look at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    pub check: String,
    pub command: String,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// The content of every file the task touched when the check ran.
    pub files: Vec<(String, ContentHash)>,
    pub log_path: String,
    pub failures: Vec<String>,
    /// What confined the check's command (`rein doctor`'s words), so the
    /// verdict says what the tests could and could not touch.
    #[serde(default)]
    pub sandbox: String,
}

/// The verifier's answer to a claim of completion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Verified {
        summary: String,
        evidence: Vec<Evidence>,
    },
    /// Not done: `gap` tells the model what is still wrong.
    Gap {
        gap: String,
        evidence: Vec<Evidence>,
    },
    /// The checks ran without failing but could not show the target
    /// passing (a runner whose output names no test): not "fixed", and
    /// nothing the model can change; `summary` tells the user why.
    Unconfirmed {
        summary: String,
        evidence: Vec<Evidence>,
    },
}

impl Verdict {
    pub fn evidence(&self) -> &[Evidence] {
        match self {
            Self::Verified { evidence, .. }
            | Self::Gap { evidence, .. }
            | Self::Unconfirmed { evidence, .. } => evidence,
        }
    }
}

/// What a verifier may look at.
pub struct VerifyContext<'a> {
    pub task: &'a TaskSpec,
    /// Files the task changed, workspace-relative.
    pub touched: &'a [String],
    pub workspace: &'a dyn Workspace,
    pub exec: &'a dyn Exec,
    /// Where check logs go.
    pub artifacts_dir: PathBuf,
    pub cancel: CancellationToken,
    /// The task's time budget: the checks' runs end when it does.
    pub time: crate::budget::TimeBudget,
}

/// The test run the verifier made before the task began, as the model's
/// first message shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BaselineOutput {
    pub command: String,
    pub exit_code: Option<i32>,
    pub failures: Vec<String>,
    /// The last lines of its output (redacted as it streamed).
    pub tail: Vec<String>,
    pub log_path: String,
}

/// Judges a claim of completion against the task's acceptance checks.
#[async_trait]
pub trait Verifier: Send + Sync {
    async fn verify(&self, cx: VerifyContext<'_>) -> Verdict;

    /// The run it made before the task began, if it made one: what the
    /// model's first message shows of the failure. `None` by default, and
    /// for a resumed task.
    fn baseline_output(&self) -> Option<BaselineOutput> {
        None
    }

    /// What the verifier compares against, to keep with the task's state
    /// so a resumed task is judged by the same baseline.
    fn saved_state(&self) -> Value {
        Value::Null
    }

    /// Whether the task's acceptance already held before the task began:
    /// its baseline (the test run before any change) showed every target
    /// test passing. Cheap. `false` by default, and for a resumed task
    /// (its baseline is only compared against). The loop then asks
    /// [`Verifier::already_met`] to confirm it.
    fn met_at_baseline(&self) -> bool {
        false
    }

    /// Confirms on the text as it is now what [`Verifier::met_at_baseline`]
    /// said: the baseline ran on the saved files, and an unsaved change of
    /// the user's may undo it. `Some`: the task has nothing to do and ends
    /// before any model call; `None`: it runs as usual.
    async fn already_met(&self, _cx: VerifyContext<'_>) -> Option<AlreadyMet> {
        None
    }

    /// Checks a candidate fix without touching the workspace: `files`
    /// (workspace-relative path, whole text) are what the workspace would
    /// hold once it is applied; the checks see them laid over it in a
    /// private layer ([`crate::exec::Layer`]), by the same rules as
    /// [`Verifier::verify`]. `None`: this verifier cannot (the default),
    /// or not for this task.
    async fn check_candidate(
        &self,
        _cx: VerifyContext<'_>,
        _files: &[(String, String)],
    ) -> Option<CandidateCheck> {
        None
    }
}

/// What the check of a candidate fix showed ([`Verifier::check_candidate`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CandidateCheck {
    /// The checks would verify it.
    pub passed: bool,
    /// Why not, as a gap tells the model (empty when it passed).
    pub gap: String,
    pub evidence: Vec<Evidence>,
}

/// A task whose acceptance held before it changed anything (a test to
/// fix that already passes): why, and what showed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlreadyMet {
    /// "already passing: `test_total` passes; nothing to change".
    pub summary: String,
    pub evidence: Vec<Evidence>,
}

/// Where a task's artifacts are stored: spilled tool outputs and archived
/// history, at workspace-relative paths the model can `read_file`.
#[async_trait]
pub trait Artifacts: Send + Sync {
    /// Writes `content` at `rel_path` (under `.rein/artifacts/<task>/`).
    async fn write(&self, rel_path: &str, content: &str) -> Result<(), String>;
    /// Writes `bytes` as they are (an image a tool returned): not text, so
    /// not redacted; text goes through [`Artifacts::write`].
    async fn write_bytes(&self, rel_path: &str, bytes: &[u8]) -> Result<(), String> {
        let _ = (rel_path, bytes);
        Err("this task keeps no binary artifacts".into())
    }
}

/// Sends every event to several sinks (the editor's progress and the
/// trace, say), in the order given.
pub struct Tee(pub Vec<std::sync::Arc<dyn ProgressSink>>);

impl ProgressSink for Tee {
    fn event(&self, task: &TaskId, event: &TaskEvent) {
        for sink in &self.0 {
            sink.event(task, event);
        }
    }
}
