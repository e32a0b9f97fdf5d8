//! What a trace says, worked out once for both renderings (the terminal
//! timeline and the HTML report): the summary, the usage of each turn, the
//! timeline grouped by turn, the edits the model made and the verifier's
//! checks. Every kind of event is shown: those it does not know, generically.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::read::{Event, Trace};

/// Everything the renderings show.
#[derive(Debug)]
pub struct Report {
    pub task_id: String,
    /// The trace file's name (not its path: the report does not depend on
    /// where the workspace is).
    pub source: String,
    pub goal: Option<String>,
    /// The last state the trace reports, and its reason.
    pub state: Option<String>,
    pub reason: Option<String>,
    pub turns: u32,
    pub max_turns: Option<u64>,
    /// The sum of the model calls the trace records.
    pub tokens: Tokens,
    pub cost_usd: f64,
    pub model_calls: u32,
    pub unpriced_calls: u32,
    /// The totals of the last status, when they differ from the sums of
    /// the model calls (traces written before compaction calls recorded
    /// their usage).
    pub status_totals: Option<StatusTotals>,
    pub start_ts: Option<String>,
    pub duration_ms: Option<u64>,
    pub events: usize,
    pub notes: Vec<String>,
    pub turn_usage: Vec<TurnUsage>,
    pub groups: Vec<Group>,
    pub edits: Vec<Edit>,
    pub checks: Vec<Check>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Uncached input.
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl Tokens {
    /// Every input token, cached or not.
    pub fn total_input(&self) -> u64 {
        self.input
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write)
    }

    /// Saturating: a trace may hold any count a provider reported.
    fn add(&mut self, other: &Tokens) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StatusTotals {
    pub input: u64,
    pub output: u64,
    pub cost_usd: f64,
}

/// The model calls of one turn.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnUsage {
    pub turn: u32,
    pub tokens: Tokens,
    /// `None` when no call of the turn was priced.
    pub cost_usd: Option<f64>,
    pub latency_ms: u64,
    pub calls: u32,
}

/// The timeline of one turn (`None`: before the first model call).
#[derive(Debug)]
pub struct Group {
    pub turn: Option<u32>,
    pub entries: Vec<Entry>,
}

/// How an entry looks: its colour, its icon in HTML.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    State,
    Model,
    Retry,
    Text,
    Call,
    Ok,
    Error,
    Denied,
    Approval,
    Guard,
    Context,
    Question,
    Answer,
    Verified,
    NotVerified,
    Activity,
    Permission,
    Other,
}

impl Class {
    /// Sentences (Rein's reasons and verdicts, the model's words, the
    /// user's), which quote names in Markdown code spans; shown rendered
    /// or stripped. Other lines hold commands and outputs, where a
    /// backtick is a character.
    pub fn is_prose(self) -> bool {
        matches!(
            self,
            Self::State
                | Self::Text
                | Self::Verified
                | Self::NotVerified
                | Self::Question
                | Self::Answer
        )
    }

    pub fn css(self) -> &'static str {
        match self {
            Self::State => "state",
            Self::Model => "model",
            Self::Retry => "retry",
            Self::Text => "text",
            Self::Call => "call",
            Self::Ok => "ok",
            Self::Error => "err",
            Self::Denied => "denied",
            Self::Approval => "approval",
            Self::Guard => "guard",
            Self::Context => "context",
            Self::Question => "question",
            Self::Answer => "answer",
            Self::Verified => "verified",
            Self::NotVerified => "notverified",
            Self::Activity => "activity",
            Self::Permission => "permission",
            Self::Other => "other",
        }
    }
}

/// One line of the timeline.
#[derive(Debug)]
pub struct Entry {
    /// Milliseconds since the first event.
    pub offset_ms: Option<i64>,
    pub class: Class,
    /// A short word for the terminal's label column (`model`, `call`, `✓`).
    pub label: String,
    /// One line.
    pub text: String,
    /// A tool result, shown under its call.
    pub indent: bool,
    /// The whole text when `text` is only its first line.
    pub full_text: Option<String>,
    /// A tool call's arguments.
    pub args: Option<Value>,
    /// The edit (index into [`Report::edits`]) a call makes.
    pub edit: Option<usize>,
    /// The check (index into [`Report::checks`]) a verification made.
    pub check: Option<usize>,
    /// Shown only with `-v` in the terminal (always in HTML, dimmed).
    pub verbose_only: bool,
}

impl Entry {
    fn new(offset_ms: Option<i64>, class: Class, label: &str, text: impl Into<String>) -> Self {
        Self {
            offset_ms,
            class,
            label: label.to_owned(),
            text: text.into(),
            indent: false,
            full_text: None,
            args: None,
            edit: None,
            check: None,
            verbose_only: false,
        }
    }

    fn verbose(mut self) -> Self {
        self.verbose_only = true;
        self
    }
}

/// An `edit_file` or `create_file` the model asked for.
#[derive(Clone, Debug)]
pub struct Edit {
    pub call_id: String,
    pub turn: Option<u32>,
    pub tool: String,
    pub path: String,
    /// `None` for a new file.
    pub old_text: Option<String>,
    pub new_text: String,
    pub replace_all: bool,
    pub outcome: EditOutcome,
    /// The result's line.
    pub result: Option<String>,
    /// How long the edit waited for the user's review (its call's
    /// duration, when the edit was proposed for confirmation).
    pub review_ms: Option<u64>,
}

impl Edit {
    /// The edit as a unified-style diff of its `old_text` → `new_text`
    /// (a new file: every line added). The lines are those of the edit,
    /// not the whole file: the trace does not hold the file.
    pub fn diff_lines(&self) -> Vec<String> {
        let from = match self.old_text {
            Some(_) => format!("--- a/{}", self.path),
            None => "--- /dev/null".to_owned(),
        };
        let mut out = vec![from, format!("+++ b/{}", self.path)];
        let old = self.old_text.as_deref().unwrap_or("");
        let diff = similar::TextDiff::from_lines(old, self.new_text.as_str());
        for change in diff.iter_all_changes() {
            let sign = match change.tag() {
                similar::ChangeTag::Delete => '-',
                similar::ChangeTag::Insert => '+',
                similar::ChangeTag::Equal => ' ',
            };
            let value = change.value();
            let value = value.strip_suffix('\n').unwrap_or(value);
            let value = value.strip_suffix('\r').unwrap_or(value);
            out.push(format!("{sign}{value}"));
        }
        out
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EditOutcome {
    Applied,
    Rejected,
    /// Reviewed, but nobody answered in time (not a rejection).
    NoAnswer,
    Denied,
    Failed,
    /// Proposed, but whether the editor applied it is not known.
    Unknown,
    /// No result in the trace: the task stopped before the call finished.
    NoResult,
}

impl EditOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Applied => "applied",
            Self::Rejected => "rejected",
            Self::NoAnswer => "no answer",
            Self::Denied => "denied",
            Self::Failed => "failed",
            Self::Unknown => "unknown",
            Self::NoResult => "no result",
        }
    }
}

/// One verification: the verifier's verdict and what it saw.
#[derive(Clone, Debug)]
pub struct Check {
    pub offset_ms: Option<i64>,
    pub turn: Option<u32>,
    pub passed: bool,
    pub detail: String,
    pub evidence: Vec<EvidenceView>,
}

#[derive(Clone, Debug, Default)]
pub struct EvidenceView {
    pub check: String,
    pub command: String,
    pub exit_code: Option<i64>,
    pub duration_ms: Option<u64>,
    pub log_path: String,
    /// (path, content hash) of every touched file when the check ran.
    pub files: Vec<(String, String)>,
    pub failures: Vec<String>,
    /// What confined the check's command (empty in older traces).
    pub sandbox: String,
}

/// A tool call, by id: what later events refer to.
struct Call {
    tool: String,
    args: Value,
}

/// The states a task ends in.
pub fn is_final(state: &str) -> bool {
    // A trace ends where the run stops: at its end, or paused for the user.
    state
        .parse()
        .is_ok_and(|state| rein_core::task::run_is_over(state, false))
}

/// Works out the report of `trace`. `task_id` names it when the events do
/// not; `goal` is used when no event carries one.
pub fn build(task_id: &str, source: &str, trace: &Trace, goal: Option<String>) -> Report {
    let index = Index::of(&trace.events);
    let mut b = Builder::new(&index, trace.events.iter().find_map(|e| e.ts_ms));
    for e in &trace.events {
        b.event(e);
    }
    b.flush();
    b.finish(task_id, source, trace, goal)
}

/// What events refer to across the trace, gathered first: the calls by id,
/// their results, the calls a permission denied.
#[derive(Default)]
struct Index {
    calls: HashMap<String, Call>,
    results: HashMap<String, (bool, String)>,
    /// How long each call took, by its result.
    latency: HashMap<String, u64>,
    denied: HashSet<String>,
    /// Calls the rules said to ask about: for an edit, proposed to the
    /// user for review (in the editor, or on the terminal).
    asked: HashSet<String>,
}

impl Index {
    fn of(events: &[Event]) -> Self {
        let mut index = Self::default();
        for e in events {
            let Some(id) = e.str("call_id").filter(|id| !id.is_empty()) else {
                continue;
            };
            match e.kind.as_str() {
                "tool_call" => {
                    let call = Call {
                        tool: e.str("tool").unwrap_or("?").to_owned(),
                        args: tool_args(e),
                    };
                    index.calls.insert(id.to_owned(), call);
                }
                "tool_result" => {
                    let result = (e.bool("is_error").unwrap_or(false), result_text(e));
                    index.results.insert(id.to_owned(), result);
                    if let Some(ms) = result_ms(e) {
                        index.latency.insert(id.to_owned(), ms);
                    }
                }
                "permission" if e.str("decision") == Some("deny") => {
                    index.denied.insert(id.to_owned());
                }
                "permission" if e.str("decision") == Some("ask") => {
                    index.asked.insert(id.to_owned());
                }
                _ => {}
            }
        }
        index
    }

    /// How long the edit `call_id` waited for the user's review: the
    /// duration of an edit proposed for confirmation, which the user then
    /// saw (applied, rejected, or not known). An edit refused before that
    /// (by a rule, or because it did not apply) was never reviewed.
    fn review_ms(&self, call_id: &str) -> Option<u64> {
        let call = self.calls.get(call_id)?;
        if !rein_core::tools::builtin().edits_workspace(&call.tool) || !self.asked.contains(call_id)
        {
            return None;
        }
        let outcome = edit_outcome(self.results.get(call_id), self.denied.contains(call_id));
        match outcome {
            EditOutcome::Applied
            | EditOutcome::Rejected
            | EditOutcome::NoAnswer
            | EditOutcome::Unknown => self.latency.get(call_id).copied(),
            EditOutcome::Denied | EditOutcome::Failed | EditOutcome::NoResult => None,
        }
    }
}

/// A result's duration (`latency_ms`, or `duration_ms` in older traces).
fn result_ms(e: &Event) -> Option<u64> {
    e.u64("latency_ms").or_else(|| e.u64("duration_ms"))
}

/// `waited 4.40s for your review`: the duration of an edit the user
/// reviewed is the user's time, not Rein's, and says so.
pub fn review_label(ms: u64) -> String {
    format!("waited {} for your review", fmt_ms(ms))
}

/// Goes through the events once, in order.
struct Builder<'a> {
    index: &'a Index,
    start_ms: Option<i64>,
    groups: Vec<Group>,
    /// Events that belong to the next model call (the context it is sent,
    /// its retries): shown with it, or where the next other event comes.
    pending: Vec<Entry>,
    /// The call the last shown line was about.
    last_call: Option<String>,
    last_state: Option<(String, Option<String>)>,
    edits: Vec<Edit>,
    checks: Vec<Check>,
    turn_usage: Vec<TurnUsage>,
    tokens: Tokens,
    cost_usd: f64,
    model_calls: u32,
    unpriced_calls: u32,
    turns: u32,
    max_turns: Option<u64>,
    state: Option<String>,
    reason: Option<String>,
    status_totals: Option<StatusTotals>,
    goal: Option<String>,
}

impl<'a> Builder<'a> {
    fn new(index: &'a Index, start_ms: Option<i64>) -> Self {
        Self {
            index,
            start_ms,
            groups: vec![Group {
                turn: None,
                entries: Vec::new(),
            }],
            pending: Vec::new(),
            last_call: None,
            last_state: None,
            edits: Vec::new(),
            checks: Vec::new(),
            turn_usage: Vec::new(),
            tokens: Tokens::default(),
            cost_usd: 0.0,
            model_calls: 0,
            unpriced_calls: 0,
            turns: 0,
            max_turns: None,
            state: None,
            reason: None,
            status_totals: None,
            goal: None,
        }
    }

    fn event(&mut self, e: &Event) {
        let at = self.offset(e);
        if self.goal.is_none() {
            self.goal = e.str("goal").map(str::to_owned);
        }
        if let Some(turn) = turn_of(e)
            && matches!(e.kind.as_str(), "model_call" | "text" | "tool_call")
        {
            self.turns = self.turns.max(turn);
            self.enter_turn(turn);
        }
        let text = |key: &str| e.str(key).unwrap_or("").to_owned();
        match e.kind.as_str() {
            "started" => {
                self.max_turns = field_u64(e, "max_turns").or(self.max_turns);
                let mut line = match e.get("task") {
                    Some(t) if t.get("kind").and_then(Value::as_str) == Some("fix_test") => {
                        format!(
                            "fix test {}::{}",
                            t.get("path").and_then(Value::as_str).unwrap_or("?"),
                            t.get("name").and_then(Value::as_str).unwrap_or("?")
                        )
                    }
                    _ => "instruction".to_owned(),
                };
                line.push_str(&format!(
                    " · {}/{}",
                    e.str("provider").unwrap_or("?"),
                    e.str("model").unwrap_or("?")
                ));
                if let Some(usd) = e.f64("max_cost_usd") {
                    line.push_str(&format!(" · up to {}", fmt_usd(usd)));
                }
                let label = if e.get("resumed").and_then(Value::as_bool) == Some(true) {
                    "resumed"
                } else {
                    "started"
                };
                self.flush();
                self.push(Entry::new(at, Class::State, label, line));
            }
            "status" => self.status(e, at),
            "model_call" => self.model_call(e, at),
            "model_retry" => {
                let text = format!(
                    "attempt {} in {}: {}",
                    e.u64("attempt").unwrap_or(0),
                    fmt_ms(e.u64("delay_ms").unwrap_or(0)),
                    text("reason")
                );
                self.pending
                    .push(Entry::new(at, Class::Retry, "retry", text));
            }
            "text" => {
                self.flush();
                let (line, cut) = first_line(&text("text"), 160);
                let mut entry = Entry::new(at, Class::Text, "says", line);
                entry.full_text = cut.then(|| text("text"));
                self.push(entry);
            }
            "tool_call" => self.tool_call(e, at),
            "tool_result" => self.tool_result(e, at),
            "permission" => self.permission(e, at),
            "approval" => self.approval(e, at),
            "guard" => self.guard(e, at),
            "context" => {
                let detail = text("detail");
                let mut line = format!("{}: {detail}", e.str("transformation").unwrap_or("?"));
                // A detail that names a call: say which.
                let id = detail.split([':', ' ']).next().unwrap_or("");
                if !id.is_empty() && self.index.calls.contains_key(id) {
                    line.push_str(&format!(" [{}]", self.describe(id, None)));
                }
                self.pending
                    .push(Entry::new(at, Class::Context, "context", line));
            }
            "compaction" => {
                let mut line = format!(
                    "{} items summarized · {} → {} tok · archive {}",
                    e.u64("summarized_items").unwrap_or(0),
                    fmt_count(e.u64("tokens_before").unwrap_or(0)),
                    fmt_count(e.u64("tokens_after").unwrap_or(0)),
                    e.str("archive").unwrap_or("?")
                );
                // The summarizing call is a model call too (older traces
                // did not record its usage).
                if e.get("tokens").is_some() || e.get("usage").is_some() {
                    let tokens = call_tokens(e);
                    self.tokens.add(&tokens);
                    self.model_calls += 1;
                    match e.f64("cost_usd") {
                        Some(c) => self.cost_usd = rein_models::pricing::add_usd(self.cost_usd, c),
                        None => self.unpriced_calls += 1,
                    }
                    line.push_str(&format!(
                        " · call {} in · {} out",
                        fmt_count(tokens.total_input()),
                        fmt_count(tokens.output)
                    ));
                }
                self.pending
                    .push(Entry::new(at, Class::Context, "compact", line));
            }
            "activity" => {
                let entry = Entry::new(at, Class::Activity, "doing", text("text")).verbose();
                if text("text").starts_with("compacting") {
                    self.pending.push(entry);
                } else {
                    self.flush();
                    self.push_keep(entry);
                }
            }
            "question" => {
                self.flush();
                self.push(Entry::new(at, Class::Question, "asks", text("question")));
            }
            "answer" => {
                self.flush();
                self.push(Entry::new(at, Class::Answer, "answer", text("answer")));
            }
            "verification" => self.verification(e, at),
            _ => self.other(e, at),
        }
    }

    fn status(&mut self, e: &Event, at: Option<i64>) {
        self.flush();
        let state = e.str("state").unwrap_or("?").to_owned();
        let reason = e.str("reason").map(str::to_owned);
        if let Some(turn) = field_u64(e, "turn") {
            self.turns = self.turns.max(u32::try_from(turn).unwrap_or(u32::MAX));
        }
        self.max_turns = field_u64(e, "max_turns").or(self.max_turns);
        self.status_totals = Some(StatusTotals {
            input: field_u64(e, "input_tokens").unwrap_or(0),
            output: field_u64(e, "output_tokens").unwrap_or(0),
            cost_usd: field_f64(e, "cost_usd").unwrap_or(0.0),
        });
        // A status comes after every model call: only a change is news.
        let now = (state.clone(), reason.clone());
        if self.last_state.as_ref() != Some(&now) {
            let text = match &reason {
                Some(reason) => format!("{state}: {reason}"),
                None => state.clone(),
            };
            self.push(Entry::new(at, Class::State, "state", text));
            self.last_state = Some(now);
        }
        self.state = Some(state);
        self.reason = reason;
    }

    fn model_call(&mut self, e: &Event, at: Option<i64>) {
        let tokens = call_tokens(e);
        let cost = e.f64("cost_usd");
        let latency = e.u64("latency_ms").unwrap_or(0);
        let turn = turn_of(e).unwrap_or(0);
        self.tokens.add(&tokens);
        self.model_calls += 1;
        match cost {
            Some(c) => self.cost_usd = rein_models::pricing::add_usd(self.cost_usd, c),
            None => self.unpriced_calls += 1,
        }
        match self.turn_usage.iter_mut().find(|u| u.turn == turn) {
            Some(u) => {
                u.tokens.add(&tokens);
                u.cost_usd = match (u.cost_usd, cost) {
                    (Some(a), Some(c)) => Some(rein_models::pricing::add_usd(a, c)),
                    (a, c) => a.or(c),
                };
                u.latency_ms = u.latency_ms.saturating_add(latency);
                u.calls += 1;
            }
            None => self.turn_usage.push(TurnUsage {
                turn,
                tokens,
                cost_usd: cost,
                latency_ms: latency,
                calls: 1,
            }),
        }
        self.flush();
        let mut text = format!("{} in", fmt_count(tokens.total_input()));
        if tokens.cache_read > 0 {
            text.push_str(&format!(" ({} cached)", fmt_count(tokens.cache_read)));
        }
        text.push_str(&format!(" · {} out", fmt_count(tokens.output)));
        if let Some(c) = cost {
            text.push_str(&format!(" · {}", fmt_usd(c)));
        }
        text.push_str(&format!(" · {}", fmt_ms(latency)));
        if let Some(stop) = e.str("stop") {
            text.push_str(&format!(" · {}", snake(stop)));
        }
        match e.u64("retries") {
            Some(0) | None => {}
            Some(1) => text.push_str(" · 1 retry"),
            Some(n) => text.push_str(&format!(" · {n} retries")),
        }
        self.push(Entry::new(at, Class::Model, "model", text));
    }

    fn tool_call(&mut self, e: &Event, at: Option<i64>) {
        self.flush();
        let tool = e.str("tool").unwrap_or("?");
        let args = tool_args(e);
        let text = format!("{tool} {}", main_argument(tool, &args));
        let mut entry = Entry::new(at, Class::Call, "call", text.trim_end());
        let call_id = e.str("call_id").unwrap_or("").to_owned();
        if let Some(change) = rein_core::tools::builtin().proposed_change(tool, &args) {
            let result = self.index.results.get(&call_id);
            self.edits.push(Edit {
                call_id: call_id.clone(),
                turn: turn_of(e),
                tool: tool.to_owned(),
                path: change.path,
                old_text: change.old_text,
                new_text: change.new_text,
                replace_all: change.replace_all,
                outcome: edit_outcome(result, self.index.denied.contains(&call_id)),
                result: result.map(|(_, r)| r.clone()),
                review_ms: self.index.review_ms(&call_id),
            });
            entry.edit = Some(self.edits.len() - 1);
        }
        entry.args = Some(args);
        self.push(entry);
        self.last_call = Some(call_id);
    }

    fn tool_result(&mut self, e: &Event, at: Option<i64>) {
        self.flush();
        let call_id = e.str("call_id").unwrap_or("");
        let mut text = String::new();
        // Right under its call, the call goes without saying.
        if self.last_call.as_deref() != Some(call_id) {
            text.push_str(&self.describe(call_id, e.str("tool")));
            text.push_str(" · ");
        }
        if let Some(ms) = result_ms(e) {
            match self.index.review_ms(call_id) {
                Some(_) => text.push_str(&review_label(ms)),
                None => text.push_str(&fmt_ms(ms)),
            }
            text.push_str(" · ");
        }
        // What the tool returned: an MCP server's answer can be megabytes.
        if let Some(bytes) = e.u64("output_bytes") {
            text.push_str(&fmt_bytes(bytes));
            text.push_str(" · ");
        }
        let result = result_text(e);
        let (line, cut) = first_line(&result, 240);
        text.push_str(&line);
        let (class, label) = if e.bool("is_error").unwrap_or(false) {
            (Class::Error, "✗")
        } else {
            (Class::Ok, "✓")
        };
        let mut entry = Entry::new(at, class, label, text);
        entry.indent = true;
        entry.full_text = cut.then_some(result);
        self.push(entry);
        self.last_call = Some(call_id.to_owned());
    }

    fn permission(&mut self, e: &Event, at: Option<i64>) {
        self.flush();
        let tool = e.str("tool").unwrap_or("?");
        let rule = e.str("rule").unwrap_or("");
        let call = e.str("call_id").unwrap_or("");
        let entry = match e.str("decision") {
            Some("deny") => {
                let what = if call.is_empty() {
                    tool.to_owned()
                } else {
                    self.describe(call, Some(tool))
                };
                Entry::new(
                    at,
                    Class::Denied,
                    "denied",
                    format!("{what} by rule {rule}"),
                )
            }
            decision => Entry::new(
                at,
                Class::Permission,
                "permit",
                format!("{tool}: {} ({rule})", decision.unwrap_or("?")),
            )
            .verbose(),
        };
        self.push_keep(entry);
    }

    fn approval(&mut self, e: &Event, at: Option<i64>) {
        self.flush();
        let what = self.describe(e.str("call_id").unwrap_or(""), e.str("tool"));
        let (class, text) = match e.str("decision") {
            Some("allow_once") => (Class::Approval, format!("allowed once: {what}")),
            Some("allow_for_task") => (Class::Approval, format!("allowed for this task: {what}")),
            Some("deny") => (Class::Denied, format!("denied: {what}")),
            other => (Class::Approval, format!("{}: {what}", other.unwrap_or("?"))),
        };
        self.push_keep(Entry::new(at, class, "user", text));
    }

    fn guard(&mut self, e: &Event, at: Option<i64>) {
        self.flush();
        let mut text = format!(
            "{}: {}",
            e.str("guard").unwrap_or("?"),
            e.str("message").unwrap_or("")
        );
        if let Some(call) = e.str("call_id").filter(|c| !c.is_empty())
            && self.last_call.as_deref() != Some(call)
        {
            text.push_str(&format!(" [{}]", self.describe(call, None)));
        }
        let (line, cut) = first_line(&text, 240);
        let mut entry = Entry::new(at, Class::Guard, "guard", line);
        entry.full_text = cut.then_some(text);
        self.push_keep(entry);
    }

    fn verification(&mut self, e: &Event, at: Option<i64>) {
        self.flush();
        let passed = e.bool("passed").unwrap_or(false);
        let detail = e.str("detail").unwrap_or("").to_owned();
        let evidence = e
            .get("evidence")
            .and_then(Value::as_array)
            .map(|list| list.iter().map(evidence).collect())
            .unwrap_or_default();
        let (class, text) = if passed {
            (Class::Verified, format!("✓ verified: {detail}"))
        } else {
            (Class::NotVerified, format!("✗ not verified: {detail}"))
        };
        self.checks.push(Check {
            offset_ms: at,
            turn: self.groups.last().and_then(|g| g.turn),
            passed,
            detail,
            evidence,
        });
        let mut entry = Entry::new(at, class, "verify", text);
        entry.check = Some(self.checks.len() - 1);
        self.push(entry);
    }

    /// A kind this version does not know: its fields, as they are.
    fn other(&mut self, e: &Event, at: Option<i64>) {
        self.flush();
        let fields: serde_json::Map<String, Value> = e
            .own_fields()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let json = Value::Object(fields).to_string();
        let (line, cut) = first_line(&json, 200);
        let mut entry = Entry::new(at, Class::Other, &e.kind, line);
        entry.full_text = cut.then_some(json);
        self.push(entry);
    }

    fn finish(self, task_id: &str, source: &str, trace: &Trace, goal: Option<String>) -> Report {
        let events = &trace.events;
        let mut notes = trace.notes.clone();
        if events.is_empty() {
            notes.push("the trace has no events".to_owned());
        } else if !self.state.as_deref().is_some_and(is_final) {
            notes.push(
                "the trace ends without a final state: the task is still running, or its process stopped (a crash, a kill)"
                    .to_owned(),
            );
        }
        let (tokens, cost_usd) = (self.tokens, self.cost_usd);
        let status_totals = self.status_totals.filter(|s| {
            s.input != tokens.total_input()
                || s.output != tokens.output
                || (s.cost_usd - cost_usd).abs() > 1e-9
        });
        let end_ms = events.iter().rev().find_map(|e| e.ts_ms);
        Report {
            task_id: events
                .iter()
                .find_map(|e| e.str("task_id"))
                .unwrap_or(task_id)
                .to_owned(),
            source: source.to_owned(),
            goal: self.goal.or(goal),
            state: self.state,
            reason: self.reason,
            turns: self.turns,
            max_turns: self.max_turns,
            tokens,
            cost_usd,
            model_calls: self.model_calls,
            unpriced_calls: self.unpriced_calls,
            status_totals,
            start_ts: events.iter().find_map(|e| e.ts.clone()),
            duration_ms: self
                .start_ms
                .zip(end_ms)
                .map(|(s, e)| u64::try_from(e - s).unwrap_or(0)),
            events: events.len(),
            notes,
            turn_usage: self.turn_usage,
            groups: self
                .groups
                .into_iter()
                .filter(|g| !g.entries.is_empty())
                .collect(),
            edits: self.edits,
            checks: self.checks,
        }
    }

    fn offset(&self, e: &Event) -> Option<i64> {
        Some(e.ts_ms? - self.start_ms?)
    }

    fn enter_turn(&mut self, turn: u32) {
        let current = self.groups.last().and_then(|g| g.turn);
        if current.is_none_or(|c| turn > c) {
            self.groups.push(Group {
                turn: Some(turn),
                entries: Vec::new(),
            });
        }
    }

    fn flush(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for entry in pending {
            self.push(entry);
        }
    }

    fn push(&mut self, entry: Entry) {
        self.last_call = None;
        self.push_keep(entry);
    }

    /// Pushes without ending the current call's run of lines (a permission,
    /// an approval, an activity of the call).
    fn push_keep(&mut self, entry: Entry) {
        if let Some(group) = self.groups.last_mut() {
            group.entries.push(entry);
        }
    }

    /// `run_tests tests/x.py` for a call id.
    fn describe(&self, call_id: &str, tool: Option<&str>) -> String {
        match self.index.calls.get(call_id) {
            Some(call) => format!("{} {}", call.tool, main_argument(&call.tool, &call.args))
                .trim_end()
                .to_owned(),
            None => tool.unwrap_or(call_id).to_owned(),
        }
    }
}

fn turn_of(e: &Event) -> Option<u32> {
    e.u64("turn").and_then(|t| u32::try_from(t).ok())
}

fn edit_outcome(result: Option<&(bool, String)>, denied: bool) -> EditOutcome {
    if denied {
        return EditOutcome::Denied;
    }
    match result {
        None => EditOutcome::NoResult,
        Some((false, _)) => EditOutcome::Applied,
        Some((true, text)) if text.starts_with("The user rejected") => EditOutcome::Rejected,
        Some((true, text)) if text.starts_with("The user did not answer the review") => {
            EditOutcome::NoAnswer
        }
        Some((true, text)) if text.starts_with("Denied by rule") => EditOutcome::Denied,
        Some((true, text)) if text.starts_with("It is not known whether") => EditOutcome::Unknown,
        Some((true, _)) => EditOutcome::Failed,
    }
}

/// A call's arguments (`inputs`, or `arguments` in older traces).
fn tool_args(e: &Event) -> Value {
    e.get("inputs")
        .or_else(|| e.get("arguments"))
        .cloned()
        .unwrap_or(Value::Null)
}

/// A result's line (`result`, or `summary`).
fn result_text(e: &Event) -> String {
    e.str("result")
        .or_else(|| e.str("summary"))
        .unwrap_or("")
        .to_owned()
}

fn call_tokens(e: &Event) -> Tokens {
    let from = |tokens: &str, usage: &str| {
        e.get("tokens")
            .and_then(|t| t.get(tokens))
            .and_then(Value::as_u64)
            .or_else(|| {
                e.get("usage")
                    .and_then(|u| u.get(usage))
                    .and_then(Value::as_u64)
            })
            .unwrap_or(0)
    };
    Tokens {
        input: from("in", "input_tokens"),
        output: from("out", "output_tokens"),
        cache_read: from("cache_read", "cache_read_tokens"),
        cache_write: from("cache_write", "cache_write_tokens"),
    }
}

/// A status field, snake_case or camelCase (`input_tokens`, `inputTokens`).
fn field(e: &Event, snake: &str) -> Option<Value> {
    let camel: String = snake
        .split('_')
        .enumerate()
        .map(|(i, part)| {
            if i == 0 {
                part.to_owned()
            } else {
                let mut chars = part.chars();
                chars
                    .next()
                    .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                    .unwrap_or_default()
            }
        })
        .collect();
    e.get(snake).or_else(|| e.get(&camel)).cloned()
}

fn field_u64(e: &Event, snake: &str) -> Option<u64> {
    field(e, snake).and_then(|v| v.as_u64())
}

fn field_f64(e: &Event, snake: &str) -> Option<f64> {
    field(e, snake).and_then(|v| v.as_f64())
}

fn evidence(v: &Value) -> EvidenceView {
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    EvidenceView {
        check: s("check"),
        command: s("command"),
        exit_code: v.get("exit_code").and_then(Value::as_i64),
        duration_ms: v.get("duration_ms").and_then(Value::as_u64),
        log_path: s("log_path"),
        sandbox: s("sandbox"),
        files: v
            .get("files")
            .and_then(Value::as_array)
            .map(|files| {
                files
                    .iter()
                    .filter_map(|f| {
                        let pair = f.as_array()?;
                        Some((
                            pair.first()?.as_str()?.to_owned(),
                            pair.get(1).and_then(Value::as_str).unwrap_or("").to_owned(),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default(),
        failures: v
            .get("failures")
            .and_then(Value::as_array)
            .map(|f| {
                f.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// The argument that says what a call does: a path, a target, a command
/// (the tool's registry entry says which; a tool this build does not know
/// shows its arguments).
pub fn main_argument(tool: &str, args: &Value) -> String {
    rein_core::tools::builtin().describe(tool, args).detail
}

/// The first line of `text`, at most `max` characters; whether anything
/// was left out.
pub fn first_line(text: &str, max: usize) -> (String, bool) {
    let trimmed = text.trim();
    let line = trimmed.lines().next().unwrap_or("");
    let mut out: String = line.chars().take(max).collect();
    let cut = out.len() < trimmed.len();
    if cut {
        out.push_str(" …");
    }
    (out, cut)
}

/// `ToolUse` → `tool_use` (the stop reasons are written in Rust's names).
pub fn snake(name: &str) -> String {
    if name.contains('_') || !name.chars().any(|c| c.is_ascii_uppercase()) {
        return name.to_owned();
    }
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `177`, `2.1k`, `1.2M`.
pub fn fmt_count(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1_000_000.0)
    } else if n >= 1_000 {
        format!("{:.1}k", n as f64 / 1_000.0)
    } else {
        n.to_string()
    }
}

/// `$0.0041` under a dollar, `$1.23` from there.
pub fn fmt_usd(usd: f64) -> String {
    if usd < 1.0 {
        format!("${usd:.4}")
    } else {
        format!("${usd:.2}")
    }
}

/// `9ms`, `0.32s`, `12.3s`, `2m05s`, `1h02m`.
/// `512 B`, `1.5 KB`, `10.0 MB` (powers of 1024).
pub fn fmt_bytes(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} B")
    } else if b < KB * KB {
        format!("{:.1} KB", b / KB)
    } else {
        format!("{:.1} MB", b / (KB * KB))
    }
}

pub fn fmt_ms(ms: u64) -> String {
    if ms < 1_000 {
        format!("{ms}ms")
    } else if ms < 10_000 {
        format!("{:.2}s", ms as f64 / 1000.0)
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else if ms < 3_600_000 {
        format!("{}m{:02}s", ms / 60_000, (ms % 60_000) / 1000)
    } else {
        format!("{}h{:02}m", ms / 3_600_000, (ms % 3_600_000) / 60_000)
    }
}

/// A time offset: `+0.35s`, `+1m05.2s`.
pub fn fmt_offset(ms: Option<i64>) -> String {
    let Some(ms) = ms else {
        return "?".to_owned();
    };
    let sign = if ms < 0 { "-" } else { "+" };
    let ms = ms.unsigned_abs();
    if ms < 60_000 {
        format!("{sign}{:.2}s", ms as f64 / 1000.0)
    } else if ms < 3_600_000 {
        format!(
            "{sign}{}m{:04.1}s",
            ms / 60_000,
            (ms % 60_000) as f64 / 1000.0
        )
    } else {
        format!(
            "{sign}{}h{:02}m{:02}s",
            ms / 3_600_000,
            (ms % 3_600_000) / 60_000,
            (ms % 60_000) / 1000
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace may hold any count a provider reported: sums saturate, and
    /// the report, its timeline and its chart still render.
    #[test]
    fn usage_sums_saturate() {
        let call = format!(
            r#"{{"kind":"model_call","ts":"2026-11-30T07:12:01.234Z","turn":1,"usage":{{"input_tokens":{m},"output_tokens":{m},"cache_read_tokens":{m},"cache_write_tokens":{m}}},"cost_usd":1.7e308,"latency_ms":{m},"stop":"tool_use","retries":0,"estimated_input_tokens":0}}"#,
            m = u64::MAX
        );
        let text = format!("{call}\n{call}\n");
        let trace = super::super::read::parse(text.as_bytes(), &|s: &str| s.to_owned());
        let report = build("t-1", "trace.jsonl", &trace, None);
        assert_eq!(report.tokens.total_input(), u64::MAX);
        assert_eq!(report.tokens.output, u64::MAX);
        assert_eq!(report.cost_usd, f64::MAX);
        assert_eq!(report.turn_usage[0].cost_usd, Some(f64::MAX));
        assert!(super::super::html::render(&report, None).contains("<svg"));
        let timeline = super::super::timeline::render(&report, Default::default());
        assert!(timeline.contains("18446744073709.6M in"), "{timeline}");
    }

    /// Issue 16: an edit's "4.62s" was the user's review time, unlabelled.
    /// An edit proposed for review says so; one a rule allowed, or one
    /// refused before anyone saw it, shows its plain duration.
    #[test]
    fn a_reviewed_edit_says_its_time_was_the_review() {
        let edit = |id: &str, path: &str| {
            format!(
                r#"{{"kind":"tool_call","ts":"2026-11-30T07:12:01.000Z","turn":1,"call_id":"{id}","tool":"edit_file","inputs":{{"path":"{path}","old_text":"a","new_text":"b"}}}}"#
            )
        };
        let permission = |id: &str, decision: &str| {
            format!(
                r#"{{"kind":"permission","ts":"2026-11-30T07:12:01.001Z","call_id":"{id}","tool":"edit_file","decision":"{decision}","rule":"default"}}"#
            )
        };
        let result = |id: &str, ms: u64, error: bool, text: &str| {
            format!(
                r#"{{"kind":"tool_result","ts":"2026-11-30T07:12:05.620Z","call_id":"{id}","tool":"edit_file","latency_ms":{ms},"is_error":{error},"result":"{text}"}}"#
            )
        };
        let lines = [
            edit("e1", "cart.py"),
            permission("e1", "ask"),
            result("e1", 4620, false, "Edited cart.py."),
            edit("e2", "NOTES.md"),
            permission("e2", "ask"),
            result("e2", 2100, true, "The user rejected this edit to NOTES.md."),
            edit("e3", "util.py"),
            permission("e3", "allow"),
            result("e3", 30, false, "Edited util.py."),
            edit("e4", "tests/test_cart.py"),
            permission("e4", "ask"),
            result(
                "e4",
                2,
                true,
                "Denied by rule built-in deny: test assertions",
            ),
        ];
        let text = lines.join("\n") + "\n";
        let trace = super::super::read::parse(text.as_bytes(), &|s: &str| s.to_owned());
        let report = build("t-1", "t-1.jsonl", &trace, None);
        let reviews: Vec<Option<u64>> = report.edits.iter().map(|e| e.review_ms).collect();
        assert_eq!(reviews, [Some(4620), Some(2100), None, None]);

        let timeline = super::super::timeline::render(&report, Default::default());
        for line in [
            "✓       waited 4.62s for your review · Edited cart.py.",
            "✗       waited 2.10s for your review · The user rejected this edit to NOTES.md.",
            "✓       30ms · Edited util.py.",
            "✗       2ms · Denied by rule built-in deny: test assertions",
        ] {
            assert!(timeline.contains(line), "{line:?} in\n{timeline}");
        }
        let html = super::super::html::render(&report, None);
        assert!(
            html.contains("· e1 · waited 4.62s for your review</span></h3>"),
            "{html}"
        );
        assert!(html.contains("· e3</span></h3>"), "{html}");
    }

    /// Issue 19: an MCP call shows its server's tool, its arguments, its
    /// latency and the size of what the server returned.
    #[test]
    fn an_mcp_call_shows_its_latency_and_size() {
        let lines = [
            r#"{"kind":"tool_call","ts":"2026-11-30T07:12:01.000Z","turn":1,"call_id":"c1","tool":"mcp__db__query","inputs":{"sql":"select 1","token":"<redacted>"}}"#,
            r#"{"kind":"tool_result","ts":"2026-11-30T07:12:02.250Z","call_id":"c1","tool":"mcp__db__query","latency_ms":1250,"is_error":false,"output_bytes":1572864,"result":"1 row"}"#,
        ];
        let text = lines.join("\n") + "\n";
        let trace = super::super::read::parse(text.as_bytes(), &|s: &str| s.to_owned());
        let report = build("t-1", "t-1.jsonl", &trace, None);
        let timeline = super::super::timeline::render(&report, Default::default());
        assert!(timeline.contains("mcp__db__query"), "{timeline}");
        assert!(timeline.contains("1.25s · 1.5 MB · 1 row"), "{timeline}");
        let html = super::super::html::render(&report, None);
        assert!(html.contains("1.25s · 1.5 MB · 1 row"), "{html}");
        assert!(html.contains("&lt;redacted&gt;"), "{html}");
        assert!(!html.contains("select 2"));
    }

    #[test]
    fn sizes_read_as_bytes_kilobytes_megabytes() {
        let cases = [
            (0, "0 B"),
            (1023, "1023 B"),
            (1536, "1.5 KB"),
            (10 * 1024 * 1024, "10.0 MB"),
        ];
        for (bytes, text) in cases {
            assert_eq!(fmt_bytes(bytes), text);
        }
    }

    /// The terminal shows sentences without their Markdown backticks;
    /// commands keep theirs, where a backtick is a character.
    #[test]
    fn the_timeline_strips_code_spans_from_sentences_only() {
        let text = [
            r#"{"kind":"started","ts":"2026-11-30T07:12:00.000Z","goal":"Make `test_total` pass.","task":{"kind":"instruction"},"provider":"scripted","model":"m"}"#,
            r#"{"kind":"tool_call","ts":"2026-11-30T07:12:01.000Z","turn":1,"call_id":"c1","tool":"run_command","inputs":{"command":"echo `date`"}}"#,
            r#"{"kind":"text","ts":"2026-11-30T07:12:01.000Z","turn":1,"text":"Running `date`, and a lone ` stays."}"#,
            r#"{"kind":"status","ts":"2026-11-30T07:12:02.000Z","state":"failed","reason":"the `date` call failed"}"#,
        ]
        .join("\n")
            + "\n";
        let trace = super::super::read::parse(text.as_bytes(), &|s: &str| s.to_owned());
        let report = build("t-1", "t-1.jsonl", &trace, None);
        let timeline = super::super::timeline::render(&report, Default::default());
        for line in [
            "goal      Make test_total pass.\n",
            "state     failed: the date call failed\n",
            "says      Running date, and a lone ` stays.\n",
            "call      run_command `echo `date``\n",
        ] {
            assert!(timeline.contains(line), "{line:?} in\n{timeline}");
        }
    }

    #[test]
    fn formats() {
        assert_eq!(snake("ToolUse"), "tool_use");
        assert_eq!(snake("end_turn"), "end_turn");
        assert_eq!(fmt_offset(Some(350)), "+0.35s");
        assert_eq!(fmt_offset(Some(65_200)), "+1m05.2s");
        assert_eq!(fmt_offset(Some(3_725_000)), "+1h02m05s");
        assert_eq!(fmt_count(2_124), "2.1k");
        assert_eq!(fmt_usd(0.04123), "$0.0412");
        assert_eq!(first_line("a\nb", 10), ("a …".to_owned(), true));
        assert_eq!(first_line("abc", 10), ("abc".to_owned(), false));
    }

    #[test]
    fn edit_outcomes_come_from_the_result() {
        let r = |e: bool, t: &str| Some((e, t.to_owned()));
        assert_eq!(
            edit_outcome(r(false, "Edited").as_ref(), false),
            EditOutcome::Applied
        );
        assert_eq!(
            edit_outcome(r(true, "The user rejected this edit").as_ref(), false),
            EditOutcome::Rejected
        );
        assert_eq!(
            edit_outcome(
                r(true, "The user did not answer the review of this edit").as_ref(),
                false
            ),
            EditOutcome::NoAnswer
        );
        assert_eq!(
            edit_outcome(r(true, "x").as_ref(), true),
            EditOutcome::Denied
        );
        assert_eq!(edit_outcome(None, false), EditOutcome::NoResult);
        assert_eq!(
            edit_outcome(r(true, "nope").as_ref(), false),
            EditOutcome::Failed
        );
    }
}
