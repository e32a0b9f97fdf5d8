//! What `rein eval` found: per task and overall, as JSON (`report.json`,
//! for programs and `rein eval compare`) and markdown (`report.md`).
//!
//! A task is **fixed** only when Rein's verdict is `succeeded` *and* the
//! suite's own check passes on the result (the visible tests as the suite
//! wrote them, plus the held-out ones). A **false claim** is a
//! `succeeded` verdict whose check fails.

use rein_core::task::TaskState;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

pub const VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub version: u32,
    pub suite: String,
    pub label: String,
    pub rein_version: String,
    pub provider: String,
    pub model: String,
    /// What confined the checks.
    pub check_sandbox: String,
    pub jobs: usize,
    pub started_unix: u64,
    pub wall_ms: u64,
    pub tasks: Vec<TaskResult>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    pub id: String,
    pub split: String,
    /// Rein's verdict (`succeeded`, `failed`, …), or `error` when the run
    /// could not be judged (see `error`), `timed_out` when eval stopped it.
    pub state: String,
    pub reason: String,
    /// Whether the suite's check passed on the result; `None` when it
    /// could not run.
    pub check_passed: Option<bool>,
    pub fixed: bool,
    pub false_claim: bool,
    pub turns: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    /// Model calls without a known price (a local server): `cost_usd`
    /// undercounts, and the report says "unknown", never "$0.0000".
    #[serde(default)]
    pub unpriced_calls: u32,
    pub wall_ms: u64,
    /// What went wrong around the run (not the agent's failure).
    pub error: Option<String>,
    /// Where the run's output, result and check log are.
    pub dir: String,
    /// Candidate fixes the search with the verifier tried (its
    /// `candidate` events in the task's trace, but for replies that were
    /// no candidate); 0: it never searched.
    #[serde(default)]
    pub candidates: u32,
    /// Which of them passed its check (its number in its search), if one
    /// did: the last such in the trace.
    #[serde(default)]
    pub candidate_won: Option<u32>,
}

impl TaskResult {
    /// A task before its run is known: nothing spent, nothing judged.
    pub fn not_run(id: &str, split: &str, dir: &std::path::Path) -> Self {
        Self {
            id: id.to_owned(),
            split: split.to_owned(),
            state: "error".to_owned(),
            reason: String::new(),
            check_passed: None,
            fixed: false,
            false_claim: false,
            turns: 0,
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: 0.0,
            unpriced_calls: 0,
            wall_ms: 0,
            error: None,
            dir: dir.display().to_string(),
            candidates: 0,
            candidate_won: None,
        }
    }

    /// Counts the search's candidates in a task's trace (JSON lines, as
    /// `rein run` wrote them); a line that is not an event is skipped.
    pub fn count_candidates(&mut self, trace: &str) {
        for line in trace.lines() {
            let Ok(event) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if event["kind"] != "candidate" || event["outcome"] == "not_a_candidate" {
                continue;
            }
            self.candidates = self.candidates.saturating_add(1);
            if event["outcome"] == "passed" {
                self.candidate_won = event["number"].as_u64().and_then(|n| u32::try_from(n).ok());
            }
        }
    }

    /// Judges a run: `succeeded` is Rein's claim, `check` the evidence.
    pub fn judge(&mut self) {
        let claimed = self.state.parse() == Ok(TaskState::Succeeded);
        self.fixed = claimed && self.check_passed == Some(true);
        self.false_claim = claimed && self.check_passed == Some(false);
    }
}

/// Sums over a set of task results.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Totals {
    pub tasks: usize,
    pub fixed: usize,
    pub false_claims: usize,
    pub errors: usize,
    pub turns: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    pub unpriced_calls: u32,
    pub wall_ms: u64,
}

impl Totals {
    pub fn of<'a>(results: impl IntoIterator<Item = &'a TaskResult>) -> Self {
        let mut t = Totals::default();
        for r in results {
            t.tasks += 1;
            t.fixed += usize::from(r.fixed);
            t.false_claims += usize::from(r.false_claim);
            t.errors += usize::from(r.error.is_some());
            t.turns += u64::from(r.turns);
            t.input_tokens = t.input_tokens.saturating_add(r.input_tokens);
            t.output_tokens = t.output_tokens.saturating_add(r.output_tokens);
            t.cost_usd += r.cost_usd;
            t.unpriced_calls = t.unpriced_calls.saturating_add(r.unpriced_calls);
            t.wall_ms = t.wall_ms.saturating_add(r.wall_ms);
        }
        t
    }

    pub fn pass_rate(&self) -> f64 {
        if self.tasks == 0 {
            0.0
        } else {
            self.fixed as f64 / self.tasks as f64
        }
    }
}

impl Report {
    pub fn read(path: &std::path::Path) -> Result<Self, String> {
        rein_cli::run_result::read_versioned(path, VERSION, "a `rein eval` report")
    }

    pub fn splits(&self) -> Vec<String> {
        let mut splits: Vec<String> = self.tasks.iter().map(|t| t.split.clone()).collect();
        splits.sort();
        splits.dedup();
        splits
    }

    /// The readable summary. Values from the suite or the model are shown
    /// as code spans with their backticks and line breaks removed, so they
    /// cannot fake a row or a heading.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let all = Totals::of(&self.tasks);
        let _ = writeln!(out, "# rein eval: {}", cell(&self.suite));
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{} · {}/{} · Rein {} · {} job{} · checks: {}",
            cell(&self.label),
            cell(&self.provider),
            cell(&self.model),
            cell(&self.rein_version),
            self.jobs,
            if self.jobs == 1 { "" } else { "s" },
            cell(&self.check_sandbox),
        );
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "**Fixed {} of {} ({:.0} %)**, false claims: {}, errors: {}; {} turns, {} tokens in, {} out, cost {}, {:.1} s of task time ({:.1} s wall).",
            all.fixed,
            all.tasks,
            all.pass_rate() * 100.0,
            all.false_claims,
            all.errors,
            all.turns,
            all.input_tokens,
            all.output_tokens,
            cost(all.cost_usd, all.unpriced_calls),
            all.wall_ms as f64 / 1000.0,
            self.wall_ms as f64 / 1000.0,
        );
        let splits = self.splits();
        if splits.len() > 1 {
            let _ = writeln!(out);
            let _ = writeln!(out, "| split | tasks | fixed | false claims |");
            let _ = writeln!(out, "|---|---:|---:|---:|");
            for split in &splits {
                let t = Totals::of(self.tasks.iter().filter(|r| &r.split == split));
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} |",
                    cell(split),
                    t.tasks,
                    t.fixed,
                    t.false_claims
                );
            }
        }
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "| task | split | verdict | check | fixed | turns | tokens in | tokens out | cost | time | note |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---:|---:|---:|---:|---:|---|");
        for t in &self.tasks {
            let check = match t.check_passed {
                Some(true) => "pass",
                Some(false) => "FAIL",
                None => "—",
            };
            let fixed = if t.false_claim {
                "**false claim**"
            } else if t.fixed {
                "yes"
            } else {
                "no"
            };
            let note = t.error.as_deref().unwrap_or(&t.reason);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {check} | {fixed} | {} | {} | {} | {} | {:.1} s | {} |",
                cell(&t.id),
                cell(&t.split),
                cell(&t.state),
                t.turns,
                t.input_tokens,
                t.output_tokens,
                cost(t.cost_usd, t.unpriced_calls),
                t.wall_ms as f64 / 1000.0,
                cell(&shorten(note, 160)),
            );
        }
        out
    }
}

/// A cost as a report shows it: never "$0.0000" for calls whose price
/// Rein does not know (a local server), which would read as free.
pub fn cost(usd: f64, unpriced_calls: u32) -> String {
    rein_app::format::known_cost(usd, unpriced_calls, 4).unwrap_or_else(|| "unknown".into())
}

/// One table cell of untrusted text: a code span on one line, without
/// the characters that end a span or a cell.
pub fn cell(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| match c {
            '`' | '|' => '\'',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect();
    format!("`{}`", clean.trim())
}

pub fn shorten(text: &str, max: usize) -> String {
    let first = text.lines().next().unwrap_or_default();
    if first.chars().count() <= max && text.lines().nth(1).is_none() {
        return first.to_owned();
    }
    let mut short: String = first.chars().take(max).collect();
    short.push('…');
    short
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn report(label: &str, tasks: Vec<TaskResult>) -> Report {
        Report {
            version: VERSION,
            suite: "quixbugs-python".into(),
            label: label.into(),
            rein_version: "0.1.0".into(),
            provider: "openai".into(),
            model: "qwen".into(),
            check_sandbox: "none".into(),
            jobs: 1,
            started_unix: 0,
            wall_ms: 0,
            tasks,
        }
    }

    pub(crate) fn result(id: &str, state: &str, check: Option<bool>) -> TaskResult {
        let mut r = TaskResult {
            id: id.into(),
            split: "dev".into(),
            state: state.into(),
            reason: "r".into(),
            check_passed: check,
            fixed: false,
            false_claim: false,
            turns: 2,
            input_tokens: 100,
            output_tokens: 10,
            cost_usd: 0.0,
            unpriced_calls: 0,
            wall_ms: 1500,
            error: None,
            dir: "d".into(),
            candidates: 0,
            candidate_won: None,
        };
        r.judge();
        r
    }

    #[test]
    fn an_unknown_price_is_never_shown_as_free() {
        assert_eq!(cost(0.0, 0), "$0.0000");
        assert_eq!(cost(0.0, 3), "unknown");
        assert_eq!(cost(0.0123, 1), "≥ $0.0123");
        let mut r = result("t", "failed", Some(false));
        r.unpriced_calls = 2;
        let md = report("l", vec![r]).markdown();
        assert!(md.contains(", cost unknown, "), "{md}");
        assert!(md.contains("| 100 | 10 | unknown | 1.5 s |"), "{md}");
        assert!(!md.contains("$0.0000"), "{md}");
    }

    #[test]
    fn candidates_are_counted_from_the_trace() {
        let mut r = result("t", "succeeded", Some(true));
        r.count_candidates(concat!(
            r#"{"kind":"model_call","turn":1}"#,
            "\n",
            r#"{"kind":"candidate","number":1,"outcome":"not_a_candidate"}"#,
            "\n",
            r#"{"kind":"candidate","number":1,"outcome":"failed"}"#,
            "\nnot json\n",
            r#"{"kind":"candidate","number":2,"outcome":"same_as_before"}"#,
            "\n",
            r#"{"kind":"candidate","number":3,"outcome":"passed"}"#,
            "\n",
        ));
        assert_eq!((r.candidates, r.candidate_won), (3, Some(3)));
        // A report written before the fields were kept still reads.
        let mut old = serde_json::to_value(result("t", "failed", None)).unwrap();
        let fields = old.as_object_mut().unwrap();
        fields.remove("candidates");
        fields.remove("candidate_won");
        let read: TaskResult = serde_json::from_value(old).unwrap();
        assert_eq!((read.candidates, read.candidate_won), (0, None));
    }

    #[test]
    fn fixed_needs_both_the_verdict_and_the_check() {
        let cases = [
            ("succeeded", Some(true), (true, false)),
            ("succeeded", Some(false), (false, true)),
            ("succeeded", None, (false, false)),
            ("failed", Some(true), (false, false)),
            ("unverified", Some(false), (false, false)),
        ];
        for (state, check, (fixed, false_claim)) in cases {
            let r = result("t", state, check);
            assert_eq!(
                (r.fixed, r.false_claim),
                (fixed, false_claim),
                "{state} {check:?}"
            );
        }
    }

    #[test]
    fn a_value_from_the_suite_cannot_fake_a_row() {
        assert_eq!(cell("a|b`c\n| x | y |"), "`a'b'c ' x ' y '`");
        let mut r = result("t\n| fixed | yes |", "failed", Some(false));
        r.reason = "done\n\n# Fixed 40 of 40".into();
        let report = Report {
            version: VERSION,
            suite: "s".into(),
            label: "l".into(),
            rein_version: "0".into(),
            provider: "p".into(),
            model: "m".into(),
            check_sandbox: "none".into(),
            jobs: 1,
            started_unix: 0,
            wall_ms: 0,
            tasks: vec![r],
        };
        let md = report.markdown();
        assert!(!md.contains("\n# Fixed"), "{md}");
        assert_eq!(
            md.lines().filter(|l| l.starts_with("| `t")).count(),
            1,
            "{md}"
        );
    }
}
