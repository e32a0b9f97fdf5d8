//! The context manager: what the model sees each turn.
//!
//! Layers in fixed places: system (role, rules, tool policy, project
//! instructions) and task (goal, constraints, acceptance) as system blocks
//! that never change during a task, so they stay in the prompt cache; then
//! the working history; then the progress note at the very end. Before each
//! call the request is measured and the working layer sheds, in order:
//! 1. tool outputs over the cap were already spilled to a file when they
//!    were recorded (the model sees head, tail and the file's path);
//! 2. a read of a file superseded by a later read of it becomes a stub;
//! 3. test logs older than the latest test run shrink to their summary;
//! 4. if still over the threshold, compaction: the model summarizes the
//!    older part, the summary replaces it, the originals are archived.
//!
//! A cut never separates a tool call from its result. Every transformation
//! is reported (and so traced).

pub mod first_turn;
pub mod history;
pub mod progress;
pub mod prompt;
mod test_data;

use std::collections::{HashMap, HashSet};

use rein_models::{CachePlan, ModelRequest, ToolSpec, tokens};
use serde::{Deserialize, Serialize};

use self::history::{History, Item, RecordedResult, ResultMeta, to_messages};
use crate::exec::CommandKind;
use crate::task::TaskSpec;
use crate::tools::TypedTool;
use crate::tools::ask_user::AskUser;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContextConfig {
    /// The model's context window in tokens.
    pub window_tokens: u64,
    pub max_output_tokens: u32,
    /// A tool output over this many tokens is spilled to a file.
    pub tool_output_cap: u64,
    /// Compact when the request would use more than this share of the
    /// window (after leaving room for the output).
    pub compaction_threshold: f64,
    /// Items kept verbatim after the cut when compacting.
    pub keep_recent_items: usize,
    /// Project instructions are cut to fit this many tokens.
    pub project_instructions_budget: u64,
    /// Restate the goal in the progress note every N turns (0: never).
    pub restate_every: u32,
    /// Shed in batches: only once shedding would save more than this many
    /// tokens (or the request nears the compaction threshold), so the
    /// history stays a stable, cached prefix in between.
    #[serde(default = "default_shed_slack_tokens")]
    pub shed_slack_tokens: u64,
}

fn default_shed_slack_tokens() -> u64 {
    10_000
}

impl ContextConfig {
    /// The defaults, fitted to a model's window: the output reserve is at
    /// most a quarter of it (a 4k window keeps 3k for the prompt, instead
    /// of compacting on every turn), and spilled outputs, project
    /// instructions and shedding batches shrink with it. A 200k window
    /// gets the defaults.
    pub fn for_window(window: u64) -> Self {
        let defaults = Self::default();
        // Below this nothing useful fits; a smaller setting is a mistake.
        let window = window.max(1_024);
        Self {
            window_tokens: window,
            max_output_tokens: u32::try_from(
                (window / 4).min(u64::from(defaults.max_output_tokens)),
            )
            .unwrap_or(defaults.max_output_tokens),
            tool_output_cap: defaults.tool_output_cap.min(window / 4),
            project_instructions_budget: defaults.project_instructions_budget.min(window / 8),
            shed_slack_tokens: defaults.shed_slack_tokens.min(window / 10),
            ..defaults
        }
    }
}

impl Default for ContextConfig {
    fn default() -> Self {
        Self {
            window_tokens: 200_000,
            max_output_tokens: 8_192,
            tool_output_cap: 25_000,
            compaction_threshold: 0.8,
            keep_recent_items: 6,
            project_instructions_budget: 4_000,
            restate_every: 5,
            shed_slack_tokens: default_shed_slack_tokens(),
        }
    }
}

/// Tokens of the layers that never change during a task.
fn fixed_tokens(system: &[String], tools: &[ToolSpec]) -> u64 {
    system.iter().map(|s| tokens::count_text(s)).sum::<u64>()
        + tools
            .iter()
            .map(|t| {
                tokens::count_text(&t.description)
                    + tokens::count_text(&t.input_schema.to_string())
                    + 8
            })
            .sum::<u64>()
}

/// A request ready to send, and what was done to get it.
#[derive(Clone, Debug)]
pub struct Assembled {
    pub request: ModelRequest,
    pub estimated_tokens: u64,
    /// (transformation, detail), e.g. ("stub_superseded_read", "cart.py v3").
    pub transformations: Vec<(String, String)>,
}

#[derive(Debug)]
pub struct ContextManager {
    pub config: ContextConfig,
    model: String,
    system: Vec<String>,
    tools: Vec<ToolSpec>,
    /// Only these tools are declared (the `whole` format's).
    only: Option<&'static [&'static str]>,
    /// Tokens of the layers that never change during the task.
    fixed_tokens: u64,
}

impl ContextManager {
    /// `project_instructions`: (file name, text) of `AGENTS.md` or `CLAUDE.md`.
    pub fn new(
        config: ContextConfig,
        model: &str,
        task: &TaskSpec,
        tools: Vec<ToolSpec>,
        project_instructions: Option<(String, String)>,
    ) -> Self {
        let can_ask = tools.iter().any(|t| t.name == AskUser::NAME);
        let mut system = vec![format!(
            "{}\n{}\n\n{}",
            prompt::ROLE_AND_RULES,
            if can_ask {
                prompt::ASK_WHEN_STUCK
            } else {
                prompt::NOBODY_TO_ASK
            },
            prompt::TOOL_POLICY
        )];
        if let Some((file, text)) = project_instructions {
            let text = fit_tokens(&text, config.project_instructions_budget);
            system.push(prompt::project_instructions(&file, &text));
        }
        system.push(prompt::task_layer(task));
        let fixed_tokens = fixed_tokens(&system, &tools);
        Self {
            config,
            model: model.to_owned(),
            system,
            tools,
            only: None,
            fixed_tokens,
        }
    }

    /// The `whole` edit format ([`crate::harness::EditFormat`]): its short
    /// role and rules, and only the tools it needs declared.
    pub fn for_whole_files(mut self) -> Self {
        if let Some(role) = self.system.first_mut() {
            *role = prompt::WHOLE_ROLE_AND_RULES.to_owned();
        }
        self.only = Some(&prompt::WHOLE_TOOLS);
        let tools = std::mem::take(&mut self.tools);
        self.set_tools(tools);
        self
    }

    /// The tools declared from now on (a server's tools changed): the
    /// cached prefix changes with them, once.
    pub fn set_tools(&mut self, mut tools: Vec<ToolSpec>) {
        if let Some(only) = self.only {
            tools.retain(|t| only.contains(&t.name.as_str()));
        }
        self.tools = tools;
        self.fixed_tokens = fixed_tokens(&self.system, &self.tools);
    }

    /// The request for this turn with every shedding rule applied, and the
    /// progress note last (what [`ContextManager::assemble_with`] does when
    /// it sheds).
    pub fn assemble(&self, history: &History, progress_note: &str) -> Assembled {
        self.assemble_with(history, progress_note, &mut Shedding::eager())
    }

    /// The request for this turn: history with the shedding rules applied
    /// in batches, and the progress note last.
    ///
    /// Shedding rewrites an earlier part of the history, and a provider's
    /// prompt cache is read only up to the first change: shedding each
    /// superseded read on the turn after it is superseded made every
    /// request miss the cache from there on (BENCHMARKS.md, figure 4). So
    /// what `shed` has applied stays applied, and new candidates wait until
    /// they would save more than `shed_slack_tokens`, or the request nears
    /// the compaction threshold; then all of them are applied at once.
    pub fn assemble_with(
        &self,
        history: &History,
        progress_note: &str,
        shed: &mut Shedding,
    ) -> Assembled {
        let candidates = self.shedding_candidates(history);
        let other_tokens: u64 = history
            .items
            .iter()
            .filter(|i| !matches!(i, Item::Results { .. }))
            .map(Item::tokens)
            .sum();
        let note_tokens = tokens::count_text(progress_note);
        let results_tokens = |applied: &dyn Fn(&str) -> bool| -> u64 {
            results(history)
                .map(|r| match candidates.get(r.call_id.as_str()) {
                    Some(c) if applied(&r.call_id) => c.tokens,
                    _ => r.tokens,
                })
                .sum()
        };
        let standing = results_tokens(&|id| shed.applied.contains(id));
        let all_shed = results_tokens(&|_| true);
        let near_threshold =
            self.fixed_tokens + other_tokens + note_tokens + standing > self.threshold();
        if shed.eager || standing > all_shed + self.config.shed_slack_tokens || near_threshold {
            shed.applied = candidates.keys().map(|id| (*id).to_owned()).collect();
        } else {
            // A candidate can vanish (compacted away): forget it.
            shed.applied
                .retain(|id| candidates.contains_key(id.as_str()));
        }

        let mut transformations = Vec::new();
        let mut shown_tokens = 0u64;
        let mut view = |r: &RecordedResult| -> String {
            match candidates.get(r.call_id.as_str()) {
                Some(c) if shed.applied.contains(&r.call_id) => {
                    transformations.push((c.transformation.to_owned(), c.detail.clone()));
                    shown_tokens += c.tokens;
                    c.text.clone()
                }
                _ => {
                    shown_tokens += r.tokens;
                    r.content.clone()
                }
            }
        };
        let mut messages = to_messages(&history.items, &mut view);
        if let Some(last) = messages.last_mut() {
            last.parts.push(rein_models::Part::text(progress_note));
        }
        // The history up to the last assistant turn is what the previous
        // request also had: cache it.
        let stable_message = messages.len().checked_sub(2);
        let request = ModelRequest {
            model: self.model.clone(),
            system: self.system.clone(),
            messages,
            tools: self.tools.clone(),
            max_output_tokens: self.config.max_output_tokens,
            temperature: None,
            seed: None,
            tool_choice: Default::default(),
            cache: CachePlan {
                enabled: true,
                stable_message,
            },
        };
        let estimated_tokens = self.fixed_tokens + other_tokens + shown_tokens + note_tokens;
        Assembled {
            request,
            estimated_tokens,
            transformations,
        }
    }

    /// Every result the shedding rules would replace, by call id: a read
    /// of a file superseded by a later read of it becomes a stub, a test
    /// log older than the latest test run its summary.
    fn shedding_candidates<'h>(&self, history: &'h History) -> HashMap<&'h str, Shed> {
        let latest_read = latest_reads(history);
        let latest_test = latest_test_run(history);
        let mut candidates = HashMap::new();
        for r in results(history) {
            let shed = match &r.meta {
                ResultMeta::FileRead { path, version } => match latest_read.get(path.as_str()) {
                    // The stub does not name the newer read: a later read
                    // would change it, and with it an early message.
                    Some((call_id, _)) if *call_id != r.call_id => Some(Shed {
                        transformation: "stub_superseded_read",
                        detail: format!("{path} {}", version.label()),
                        text: format!(
                            "[{path} read at {}; superseded by a later read of it below]",
                            version.label(),
                        ),
                        tokens: 0,
                    }),
                    _ => None,
                },
                ResultMeta::Command {
                    kind: CommandKind::Test,
                    summary,
                    ..
                } if latest_test
                    .as_deref()
                    .is_some_and(|latest| latest != r.call_id) =>
                {
                    Some(Shed {
                        transformation: "summarize_old_test_log",
                        detail: r.call_id.clone(),
                        text: format!("[earlier test run, summarized] {summary}"),
                        tokens: 0,
                    })
                }
                _ => None,
            };
            if let Some(mut shed) = shed {
                // As a result's own count: its text plus the block's framing.
                shed.tokens = tokens::count_text(&shed.text) + 4;
                candidates.insert(r.call_id.as_str(), shed);
            }
        }
        candidates
    }

    /// The token count above which the history must be compacted.
    pub fn threshold(&self) -> u64 {
        let room = self
            .config
            .window_tokens
            .saturating_sub(u64::from(self.config.max_output_tokens));
        (room as f64 * self.config.compaction_threshold) as u64
    }

    /// Where to cut for compaction: items `1..cut` are summarized (the
    /// first item, the task as given, always stays). `None` when there is
    /// nothing old enough to summarize.
    pub fn compaction_cut(&self, history: &History) -> Option<usize> {
        let latest_allowed = history
            .items
            .len()
            .checked_sub(self.config.keep_recent_items)?;
        history
            .cut_points()
            .filter(|&c| c > 1 && c <= latest_allowed)
            .max()
    }
}

/// What a shedding rule shows instead of a result.
struct Shed {
    transformation: &'static str,
    detail: String,
    text: String,
    tokens: u64,
}

/// What has been shed so far in a task: the call ids whose results the
/// requests show shed. Kept across turns so that shedding, which rewrites
/// earlier messages, happens in batches (see
/// [`ContextManager::assemble_with`]).
#[derive(Clone, Debug, Default)]
pub struct Shedding {
    applied: HashSet<String>,
    /// Apply every candidate at once, every time.
    eager: bool,
}

impl Shedding {
    /// Sheds everything it can on every assembly.
    pub fn eager() -> Self {
        Self {
            applied: HashSet::new(),
            eager: true,
        }
    }
}

/// Every recorded result, in history order.
fn results(history: &History) -> impl Iterator<Item = &RecordedResult> {
    history.items.iter().flat_map(|item| match item {
        Item::Results { results, .. } => results.as_slice(),
        _ => &[],
    })
}

/// For each path, the call id and version of its latest read.
fn latest_reads(history: &History) -> HashMap<&str, (String, crate::workspace::ReadVersion)> {
    let mut latest = HashMap::new();
    for item in &history.items {
        if let Item::Results { results, .. } = item {
            for r in results {
                if let ResultMeta::FileRead { path, version } = &r.meta {
                    latest.insert(path.as_str(), (r.call_id.clone(), version.clone()));
                }
            }
        }
    }
    latest
}

fn latest_test_run(history: &History) -> Option<String> {
    history.items.iter().rev().find_map(|item| match item {
        Item::Results { results, .. } => results
            .iter()
            .rev()
            .find(|r| {
                matches!(
                    r.meta,
                    ResultMeta::Command {
                        kind: CommandKind::Test,
                        ..
                    }
                )
            })
            .map(|r| r.call_id.clone()),
        _ => None,
    })
}

/// Cuts `text` to about `budget` tokens, saying so.
pub fn fit_tokens(text: &str, budget: u64) -> String {
    if tokens::count_text(text) <= budget {
        return text.to_owned();
    }
    // Four characters a token is a safe over-estimate for cutting.
    let keep: String = text.chars().take((budget as usize) * 3).collect();
    format!("{keep}\n[… cut to fit the context; read the file for the rest]")
}

/// The text of the items being compacted, for the summarizing call. Long
/// tool outputs are cut: the summary needs their gist, not every line.
pub fn transcript(items: &[Item]) -> String {
    use std::fmt::Write;
    const CUT: usize = 3_000;
    let cut = |s: &str| -> String {
        if s.len() <= CUT {
            s.to_owned()
        } else {
            let head: String = s.chars().take(CUT / 2).collect();
            let tail: String = s
                .chars()
                .rev()
                .take(CUT / 2)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            format!("{head}\n[…]\n{tail}")
        }
    };
    let mut out = String::new();
    for item in items {
        match item {
            Item::User { text, .. } => {
                let _ = writeln!(out, "USER: {}", cut(text));
            }
            Item::Summary { text, .. } => {
                let _ = writeln!(out, "EARLIER SUMMARY: {text}");
            }
            Item::Assistant { parts, .. } => {
                for part in parts {
                    match part {
                        rein_models::Part::Text { text } => {
                            let _ = writeln!(out, "ASSISTANT: {}", cut(text));
                        }
                        rein_models::Part::ToolCall(call) => {
                            let _ = writeln!(
                                out,
                                "ASSISTANT CALLS {}({}) [{}]",
                                call.name, call.arguments, call.id
                            );
                        }
                        _ => {}
                    }
                }
            }
            Item::Results { results, notes } => {
                for r in results {
                    let status = if r.is_error { " (error)" } else { "" };
                    let _ = writeln!(
                        out,
                        "RESULT of {} [{}]{status}:\n{}",
                        r.tool,
                        r.call_id,
                        cut(&r.content)
                    );
                }
                for n in notes {
                    let _ = writeln!(out, "NOTE: {n}");
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod window_tests {
    use super::*;

    /// Regression: the output reserve was 8,192 tokens whatever the
    /// window, so a window of 8k or less left a compaction threshold of 0
    /// and every turn paid for a summary.
    #[test]
    fn a_small_window_keeps_room_for_the_prompt() {
        let small = ContextConfig::for_window(4_096);
        assert_eq!(small.max_output_tokens, 1_024);
        assert_eq!(small.tool_output_cap, 1_024);
        assert_eq!(small.project_instructions_budget, 512);
        let task = crate::task::TaskSpec::instruction(crate::task::TaskId("t".into()), "x");
        let manager = ContextManager::new(small, "local", &task, Vec::new(), None);
        assert_eq!(manager.threshold(), 2_457);
        for window in [2_048, 8_192, 32_768] {
            let c = ContextConfig::for_window(window);
            assert!(u64::from(c.max_output_tokens) * 4 <= window, "{window}");
        }
        // A hosted model's window gets exactly the defaults.
        let big = ContextConfig::for_window(200_000);
        let defaults = ContextConfig::default();
        assert_eq!(
            (
                big.max_output_tokens,
                big.tool_output_cap,
                big.shed_slack_tokens
            ),
            (
                defaults.max_output_tokens,
                defaults.tool_output_cap,
                defaults.shed_slack_tokens
            )
        );
        // Nonsense is lifted to the smallest window that can hold a prompt.
        assert_eq!(ContextConfig::for_window(0).window_tokens, 1_024);
    }
}
