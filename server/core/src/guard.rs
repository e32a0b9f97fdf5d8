//! Loop guards: catching a model that repeats itself or stops learning,
//! before the turn budget does.
//!
//! - The same call (tool + arguments), with the project unchanged in
//!   between, giving the same result twice: the second result carries a
//!   notice; a third such call is refused without running. Results are
//!   compared by [`Fingerprint`]: a command's outcome without what changes
//!   on every run (its log path, its timings: `volatile.rs`).
//! - Several turns in a row that brought no new information (every result
//!   already seen, nothing changed): the model is asked for its best answer.
//! - A model that goes on regardless ends the task: [`REFUSAL_LIMIT`] calls
//!   refused with nothing changed in between, or claims of completion the
//!   checks turned down, with nothing changed in between, that repeat the
//!   same words or reach [`CLAIM_LIMIT`]. Before that, once, the model is
//!   asked to try something else and sampled at [`RESAMPLE_TEMPERATURE`]
//!   until the project changes: a small model served with a fixed seed
//!   gives the same answer to nearly the same prompt, and one sample at a
//!   higher temperature is what it takes to get a different one.

mod volatile;

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;

use crate::context::history::ResultMeta;
use crate::exec::CommandKind;
use crate::tools::ToolOutput;

pub const REPEAT_NOTICE: &str = "You already ran this exact call and got the same result; running it again will not change anything. Change your approach.";

/// Refused calls, with nothing changed in between, that end the task.
pub const REFUSAL_LIMIT: u32 = 3;

/// Claims turned down, with nothing changed in between, that end the task.
pub const CLAIM_LIMIT: usize = 3;

/// The temperature of the one more try a model gets when it would
/// otherwise be stopped for repeating itself (1.0: the highest every
/// provider accepts).
pub const RESAMPLE_TEMPERATURE: f64 = 1.0;

/// What a claim turned down leads to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TurnedDown {
    /// The model is told why, and goes on.
    GoOn,
    /// The model repeats itself: it gets one more try, told to change its
    /// approach and sampled at [`RESAMPLE_TEMPERATURE`]; why.
    Resample(String),
    /// It repeated itself after that too: the task ends; why.
    GiveUp(String),
}

#[derive(Debug)]
pub struct LoopGuard {
    /// Off for the naive loop (`crate::harness`): nothing refused or nudged.
    on: bool,
    /// Bumped whenever the project changes (an edit, a new file, a
    /// command): a repeated call after a change is not a repeat.
    epoch: u64,
    /// (call key) → results it produced, in order.
    calls: HashMap<u64, Vec<Fingerprint>>,
    /// Every result seen, to tell new information from old.
    seen_results: HashSet<u64>,
    stale_turns: u32,
    /// Turns without new information before the nudge.
    pub stale_limit: u32,
    /// Calls refused since the project last changed, and the last one's tool.
    refused: u32,
    last_refused: String,
    /// The claims turned down since the project last changed, as compared.
    claims: Vec<String>,
    /// The one more try was given since the project last changed.
    resampling: bool,
}

/// What a result says, as the guard compares it: equal fingerprints mean
/// the model learned nothing new from the second result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fingerprint(u64);

impl Fingerprint {
    /// A command's outcome is compared by what it says about the project:
    /// exit status, failing tests, the number of lines and the tail with
    /// its timings, clock times and temporary paths taken out. Not its log
    /// path or duration, which are new on every run. Any other result is
    /// compared whole.
    pub fn of(output: &ToolOutput) -> Self {
        let mut h = DefaultHasher::new();
        output.is_error.hash(&mut h);
        match &output.meta {
            ResultMeta::Command {
                kind,
                command,
                result,
                ..
            } => {
                "command".hash(&mut h);
                (*kind == CommandKind::Test).hash(&mut h);
                command.hash(&mut h);
                (result.exit_code, result.timed_out, result.cancelled).hash(&mut h);
                result.failures.hash(&mut h);
                result.total_lines.hash(&mut h);
                for line in &result.tail {
                    volatile::normalize(line).hash(&mut h);
                }
            }
            // An error (a command that could not run says so with its
            // log's path, a timing) is compared without what changes on
            // every call.
            _ if output.is_error => {
                "error".hash(&mut h);
                for line in output.content.lines() {
                    volatile::normalize(line).hash(&mut h);
                }
            }
            _ => {
                "text".hash(&mut h);
                output.content.hash(&mut h);
            }
        }
        Self(h.finish())
    }
}

/// What to do with a call before running it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Before {
    Run,
    Refuse(String),
}

impl LoopGuard {
    /// A guard that never refuses, nudges or stops (the naive loop).
    pub fn off() -> Self {
        Self {
            on: false,
            ..Self::new(0)
        }
    }

    pub fn new(stale_limit: u32) -> Self {
        Self {
            on: true,
            epoch: 0,
            calls: HashMap::new(),
            seen_results: HashSet::new(),
            stale_turns: 0,
            stale_limit,
            refused: 0,
            last_refused: String::new(),
            claims: Vec::new(),
            resampling: false,
        }
    }

    /// The project changed: earlier results may no longer hold, and the
    /// model is trying something.
    pub fn project_changed(&mut self) {
        self.epoch += 1;
        self.refused = 0;
        self.claims.clear();
        self.resampling = false;
    }

    /// The model is on its one more try: sample it at
    /// [`RESAMPLE_TEMPERATURE`] (until the project changes).
    pub fn resampling(&self) -> bool {
        self.resampling
    }

    fn key(&self, tool: &str, arguments: &Value) -> u64 {
        let mut h = DefaultHasher::new();
        (tool, canonical(arguments), self.epoch).hash(&mut h);
        h.finish()
    }

    /// Whether the call may run; a refusal counts towards [`Self::stuck`].
    pub fn before(&mut self, tool: &str, arguments: &Value) -> Before {
        let results = self
            .calls
            .get(&self.key(tool, arguments))
            .map(Vec::as_slice)
            .unwrap_or_default();
        if !self.on {
            return Before::Run;
        }
        match results {
            [.., a, b] if a == b => {
                let message = format!(
                    "Refused: {tool} with these arguments already ran {} times with the same result, and nothing changed since. Do something different.",
                    results.len()
                );
                self.refused += 1;
                tool.clone_into(&mut self.last_refused);
                Before::Refuse(message)
            }
            _ => Before::Run,
        }
    }

    /// Records a result; returns the notice to attach if it repeats the
    /// previous result of the same call.
    pub fn after(
        &mut self,
        tool: &str,
        arguments: &Value,
        result: Fingerprint,
    ) -> Option<&'static str> {
        let key = self.key(tool, arguments);
        self.seen_results.insert(hash_pair(tool, result));
        let results = self.calls.entry(key).or_default();
        let repeat = results.last() == Some(&result);
        results.push(result);
        (repeat && self.on).then_some(REPEAT_NOTICE)
    }

    /// Whether a result is something the model has not seen before.
    pub fn is_new(&self, tool: &str, result: Fingerprint) -> bool {
        !self.seen_results.contains(&hash_pair(tool, result))
    }

    /// Why the task should end, when the model keeps making calls that
    /// were refused: it ignores the refusals and will until the budget.
    pub fn stuck(&self) -> Option<String> {
        (self.on && self.refused >= REFUSAL_LIMIT).then(|| {
            format!(
                "the model kept repeating calls the loop guard had refused ({} refusals with nothing changed in between; last: {})",
                self.refused, self.last_refused
            )
        })
    }

    /// A claim of completion the checks turned down. Returns why the task
    /// should end, when the model has nothing more to try: it says the
    /// same thing again (giving up: "my edit was not applied, so I stop
    /// here"), or keeps claiming, with nothing changed in between.
    /// The first time, it gets one more try instead ([`TurnedDown`]).
    pub fn claim_turned_down(&mut self, text: &str) -> TurnedDown {
        if !self.on {
            return TurnedDown::GoOn;
        }
        let said = words(text);
        let repeated = self.claims.contains(&said);
        self.claims.push(said);
        let why = if repeated {
            "the model gave up (the same answer twice, nothing changed in between)".to_owned()
        } else if self.claims.len() >= CLAIM_LIMIT {
            format!(
                "the model said it was done {} times with nothing changed in between, and the checks still fail",
                self.claims.len()
            )
        } else {
            return TurnedDown::GoOn;
        };
        if self.resampling {
            TurnedDown::GiveUp(why)
        } else {
            self.resampling = true;
            TurnedDown::Resample(why)
        }
    }

    /// Ends a turn. Returns the nudge when too many turns in a row brought
    /// nothing new.
    pub fn end_turn(&mut self, learned_something: bool) -> Option<String> {
        if learned_something || !self.on {
            self.stale_turns = 0;
            return None;
        }
        self.stale_turns += 1;
        if self.stale_turns < self.stale_limit {
            return None;
        }
        self.stale_turns = 0;
        Some(format!(
            "The last {} turns brought no new information. Stop exploring and give your best answer now: make the fix if you know it, or say clearly what blocks you.",
            self.stale_limit
        ))
    }
}

/// A reply's words as compared: case and spacing do not make it new.
fn words(text: &str) -> String {
    text.split_whitespace()
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

fn hash_pair(tool: &str, result: Fingerprint) -> u64 {
    let mut h = DefaultHasher::new();
    (tool, result).hash(&mut h);
    h.finish()
}

/// JSON with object keys sorted, so `{"a":1,"b":2}` and `{"b":2,"a":1}`
/// are the same call.
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .iter()
                .map(|k| format!("{k:?}:{}", canonical(&map[*k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::exec::CommandResult;
    use serde_json::json;

    fn text(content: &str) -> Fingerprint {
        Fingerprint::of(&ToolOutput::ok(content, ResultMeta::Plain))
    }

    /// A failing test run as `run_tests` reports it: run `n` has its own
    /// log, duration and timing line.
    fn test_run(n: u32, change: impl FnOnce(&mut CommandResult)) -> ToolOutput {
        let mut result = CommandResult {
            exit_code: Some(1),
            duration: Duration::from_millis(2_300 + u64::from(n) * 17),
            tail: vec![
                "FAIL: test_total (tests.test_cart.TestCart.test_total)".into(),
                "AssertionError: 2 != 30".into(),
                format!("Ran 3 tests in 0.{n:03}s"),
                "FAILED (failures=1)".into(),
            ],
            failures: vec!["tests.test_cart.TestCart.test_total".into()],
            log_path: format!("/w/.rein/artifacts/t/run-{n}.log").into(),
            total_lines: 4,
            total_bytes: 120 + u64::from(n),
            ..CommandResult::default()
        };
        change(&mut result);
        let log = format!(".rein/artifacts/t/run-{n}.log");
        ToolOutput {
            content: crate::tools::format_command_result("run-tests t", &result, &log, None),
            is_error: !result.succeeded(),
            meta: ResultMeta::Command {
                kind: CommandKind::Test,
                command: "run-tests t".into(),
                summary: format!("run {n}"),
                result,
            },
            changed_project: false,
            out_of_time: None,
            unanswered: None,
            rejected: false,
        }
    }

    fn run_fingerprint(n: u32, change: impl FnOnce(&mut CommandResult)) -> Fingerprint {
        Fingerprint::of(&test_run(n, change))
    }

    #[test]
    fn a_repeated_call_gets_a_notice_then_is_refused() {
        let mut g = LoopGuard::new(3);
        let args = json!({"target": "tests", "x": [1, {"b": 1, "a": 2}]});
        let reordered = json!({"x": [1, {"a": 2, "b": 1}], "target": "tests"});
        assert_eq!(g.before("run_tests", &args), Before::Run);
        assert_eq!(g.after("run_tests", &args, text("1 failing")), None);
        assert_eq!(g.before("run_tests", &reordered), Before::Run);
        assert_eq!(
            g.after("run_tests", &reordered, text("1 failing")),
            Some(REPEAT_NOTICE)
        );
        assert!(
            matches!(g.before("run_tests", &args), Before::Refuse(m) if m.contains("already ran 2 times"))
        );
        // After a change to the project the same call is legitimate again.
        g.project_changed();
        assert_eq!(g.before("run_tests", &args), Before::Run);
    }

    #[test]
    fn different_results_are_not_repeats() {
        let mut g = LoopGuard::new(3);
        let args = json!({});
        g.after("run_tests", &args, text("1 failing"));
        assert_eq!(g.after("run_tests", &args, text("0 failing")), None);
        assert_eq!(g.before("run_tests", &args), Before::Run);
    }

    #[test]
    fn test_runs_compare_without_their_log_path_and_timings() {
        let first = test_run(1, |_| {});
        let seventh = test_run(7, |_| {});
        assert_ne!(first.content, seventh.content);
        assert_eq!(Fingerprint::of(&first), Fingerprint::of(&seventh));
        // Anything else that differs is a different result.
        let same = run_fingerprint(1, |_| {});
        type Change = Box<dyn FnOnce(&mut CommandResult)>;
        let changes: [(&str, Change); 6] = [
            ("exit code", Box::new(|r| r.exit_code = Some(2))),
            ("timed out", Box::new(|r| r.timed_out = true)),
            ("failures", Box::new(|r| r.failures.push("test_b".into()))),
            (
                "a tail line",
                Box::new(|r| r.tail[1] = "AssertionError: 3 != 30".into()),
            ),
            ("line count", Box::new(|r| r.total_lines = 5)),
            ("passing", Box::new(|r| r.exit_code = Some(0))),
        ];
        for (what, change) in changes {
            assert_ne!(run_fingerprint(2, change), same, "{what}");
        }
        // A command that could not run names the log it could not write.
        let failed = |n: u32| {
            Fingerprint::of(&ToolOutput::error(format!(
                "could not write the command log /w/.rein/artifacts/t/run-{n}.log after 0.{n}s: disk full"
            )))
        };
        assert_eq!(failed(3), failed(4));
    }

    #[test]
    fn refusals_with_nothing_changed_end_the_task() {
        let mut g = LoopGuard::new(3);
        let args = json!({"path": "cart.py"});
        g.after("read_file", &args, text("abc"));
        g.after("read_file", &args, text("abc"));
        for _ in 1..REFUSAL_LIMIT {
            assert!(matches!(g.before("read_file", &args), Before::Refuse(_)));
            assert_eq!(g.stuck(), None);
        }
        g.project_changed();
        g.after("read_file", &args, text("abc"));
        g.after("read_file", &args, text("abc"));
        for _ in 0..REFUSAL_LIMIT {
            assert!(matches!(g.before("read_file", &args), Before::Refuse(_)));
        }
        assert_eq!(
            g.stuck().as_deref(),
            Some(
                "the model kept repeating calls the loop guard had refused (3 refusals with nothing changed in between; last: read_file)"
            )
        );
    }

    #[test]
    fn the_same_claim_twice_or_three_claims_get_one_more_try_then_end_the_task() {
        let gave_up = "the model gave up (the same answer twice, nothing changed in between)";
        let mut g = LoopGuard::new(3);
        assert_eq!(
            g.claim_turned_down("My edit was not applied."),
            TurnedDown::GoOn
        );
        assert!(!g.resampling());
        assert_eq!(
            g.claim_turned_down("my edit was  not\napplied."),
            TurnedDown::Resample(gave_up.into())
        );
        assert!(g.resampling());
        assert_eq!(
            g.claim_turned_down("My edit was not applied."),
            TurnedDown::GiveUp(gave_up.into())
        );

        let three = "the model said it was done 3 times with nothing changed in between, and the checks still fail";
        let mut g = LoopGuard::new(3);
        assert_eq!(g.claim_turned_down("Done."), TurnedDown::GoOn);
        g.project_changed();
        assert_eq!(g.claim_turned_down("Done."), TurnedDown::GoOn);
        assert_eq!(g.claim_turned_down("Fixed now."), TurnedDown::GoOn);
        assert_eq!(
            g.claim_turned_down("It works."),
            TurnedDown::Resample(three.into())
        );
        assert!(matches!(
            g.claim_turned_down("All good."),
            TurnedDown::GiveUp(why) if why.starts_with("the model said it was done 4 times")
        ));
    }

    /// A change to the project is progress: the model is sampled as usual
    /// again, and earns a new try.
    #[test]
    fn a_change_ends_the_extra_try_and_earns_a_new_one() {
        let mut g = LoopGuard::new(3);
        g.claim_turned_down("Done.");
        assert!(matches!(
            g.claim_turned_down("Done."),
            TurnedDown::Resample(_)
        ));
        g.project_changed();
        assert!(!g.resampling());
        g.claim_turned_down("Done.");
        assert!(matches!(
            g.claim_turned_down("Done."),
            TurnedDown::Resample(_)
        ));
    }

    /// The naive loop has no guard: it never resamples nor stops.
    #[test]
    fn without_the_guard_a_claim_goes_on() {
        let mut g = LoopGuard::off();
        for _ in 0..5 {
            assert_eq!(g.claim_turned_down("Done."), TurnedDown::GoOn);
        }
        assert!(!g.resampling());
    }

    #[test]
    fn stale_turns_lead_to_a_nudge() {
        let mut g = LoopGuard::new(2);
        assert!(g.is_new("read_file", text("abc")));
        g.after("read_file", &json!({"path": "a"}), text("abc"));
        assert!(!g.is_new("read_file", text("abc")));
        assert_eq!(g.end_turn(false), None);
        assert!(
            g.end_turn(false)
                .unwrap()
                .contains("The last 2 turns brought no new information")
        );
        assert_eq!(g.end_turn(false), None);
        assert_eq!(g.end_turn(true), None);
    }
}
