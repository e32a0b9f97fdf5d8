//! Budgets: the hard limits that stop a task that is not converging before
//! it burns the user's time and money. Reaching one ends the task as
//! `budget_exhausted` with the reason; it is not a failure of the user.

use std::time::{Duration, Instant};

use rein_models::Usage;
use rein_models::pricing::add_usd;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Budgets {
    /// Model calls per task.
    pub max_turns: u32,
    pub max_wall_time: Duration,
    /// Input + output tokens over the whole task (cached input included).
    pub max_tokens: u64,
    /// `None`: no USD limit (e.g. a local model with no price).
    pub max_cost_usd: Option<f64>,
    /// One model call, stream included.
    pub model_timeout: Duration,
    /// Default and ceiling for one `run_command`.
    pub command_timeout: Duration,
    /// Ceiling for one `run_tests` (and each of the verifier's runs).
    pub test_timeout: Duration,
}

impl Default for Budgets {
    fn default() -> Self {
        Self {
            max_turns: 20,
            max_wall_time: Duration::from_secs(30 * 60),
            max_tokens: 2_000_000,
            max_cost_usd: Some(2.0),
            model_timeout: Duration::from_secs(600),
            command_timeout: Duration::from_secs(120),
            test_timeout: Duration::from_secs(600),
        }
    }
}

/// What a task has used so far.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Spent {
    pub turns: u32,
    pub usage: Usage,
    pub cost_usd: f64,
    /// Calls to models without a known price: the USD figure undercounts.
    pub unpriced_calls: u32,
}

impl Spent {
    pub fn tokens(&self) -> u64 {
        self.usage.total()
    }
}

/// Which budget ran out, with the numbers for the user.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Exhausted {
    pub budget: &'static str,
    pub reason: String,
}

/// Tracks spending against the budgets of one task.
#[derive(Debug)]
pub struct BudgetTracker {
    pub budgets: Budgets,
    pub spent: Spent,
    started: Instant,
}

impl BudgetTracker {
    pub fn new(budgets: Budgets) -> Self {
        Self {
            budgets,
            spent: Spent::default(),
            started: Instant::now(),
        }
    }

    /// Continues from a checkpoint: time already spent counts.
    pub fn resume(budgets: Budgets, spent: Spent, elapsed: Duration) -> Self {
        Self {
            budgets,
            spent,
            started: Instant::now()
                .checked_sub(elapsed)
                .unwrap_or_else(Instant::now),
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    pub fn record_call(&mut self, usage: &Usage, cost_usd: Option<f64>) {
        self.spent.turns = self.spent.turns.saturating_add(1);
        self.record_usage(usage, cost_usd);
    }

    /// A model call that is not a turn of its own (compaction): its tokens
    /// and cost count, the turn count does not. Sums saturate: a provider
    /// may report any usage.
    pub fn record_usage(&mut self, usage: &Usage, cost_usd: Option<f64>) {
        self.spent.usage.add(usage);
        match cost_usd {
            Some(cost) => self.spent.cost_usd = add_usd(self.spent.cost_usd, cost),
            None => self.spent.unpriced_calls = self.spent.unpriced_calls.saturating_add(1),
        }
    }

    /// Whether another model call may start.
    pub fn check(&self) -> Option<Exhausted> {
        let b = &self.budgets;
        if self.spent.turns >= b.max_turns {
            return Some(Exhausted {
                budget: "turns",
                reason: format!("stopped: max turns ({})", b.max_turns),
            });
        }
        self.check_spending()
    }

    /// Whether another model call within the current turn may start (a
    /// search's later candidates): every budget but the turns.
    pub fn check_spending(&self) -> Option<Exhausted> {
        let b = &self.budgets;
        let elapsed = self.elapsed();
        if elapsed >= b.max_wall_time {
            return Some(Exhausted {
                budget: "wall_time",
                reason: format!("stopped: max time ({})", duration_label(b.max_wall_time)),
            });
        }
        if self.spent.tokens() >= b.max_tokens {
            return Some(Exhausted {
                budget: "tokens",
                reason: format!(
                    "stopped: max tokens ({} used of {})",
                    self.spent.tokens(),
                    b.max_tokens
                ),
            });
        }
        if let Some(max) = b.max_cost_usd
            && self.spent.cost_usd >= max
        {
            return Some(Exhausted {
                budget: "cost",
                reason: format!(
                    "stopped: max cost (${:.2} used of ${max:.2})",
                    self.spent.cost_usd
                ),
            });
        }
        None
    }

    /// Time left before the wall-time budget, to bound a long tool run.
    pub fn time_left(&self) -> Duration {
        self.budgets.max_wall_time.saturating_sub(self.elapsed())
    }

    /// The wall-time budget as a clock that commands and checks consult
    /// while they run (a resumed task's time already spent counts).
    pub fn time_budget(&self) -> TimeBudget {
        TimeBudget::ending(self.started, self.budgets.max_wall_time)
    }
}

/// A task's wall-time budget: how long it is, and when it ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeBudget {
    pub total: Duration,
    deadline: Instant,
}

/// Far enough ahead to be "no limit" for any task.
const NO_LIMIT: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

impl TimeBudget {
    /// A budget of `total` that started at `started`.
    pub fn ending(started: Instant, total: Duration) -> Self {
        let deadline = started
            .checked_add(total)
            .or_else(|| started.checked_add(NO_LIMIT))
            .unwrap_or(started);
        Self { total, deadline }
    }

    /// A budget of `total` starting now.
    pub fn from_now(total: Duration) -> Self {
        Self::ending(Instant::now(), total)
    }

    /// No time budget to speak of (checks made outside a task).
    pub fn unlimited() -> Self {
        Self::from_now(NO_LIMIT)
    }

    pub fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    pub fn is_over(&self) -> bool {
        self.left().is_zero()
    }

    /// The budget as the user set it: "1 min", "15 s".
    pub fn label(&self) -> String {
        duration_label(self.total)
    }
}

/// What set a command's time limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitedBy {
    /// The model's `timeout_s`, under the ceiling.
    Request,
    /// The configured ceiling (the default, or a request clipped to it).
    Ceiling,
    /// The task's time budget: when it runs out, so does the command.
    TimeBudget,
}

/// The time one command may run: the smallest of what the model asked,
/// the configured ceiling and the task's time left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommandLimit {
    pub timeout: Duration,
    pub by: LimitedBy,
    pub requested: Option<Duration>,
    pub ceiling: Duration,
}

impl CommandLimit {
    pub fn new(requested: Option<Duration>, ceiling: Duration, left: Duration) -> Self {
        let (wanted, by) = match requested {
            Some(asked) if asked < ceiling => (asked, LimitedBy::Request),
            _ => (ceiling, LimitedBy::Ceiling),
        };
        let (timeout, by) = if left <= wanted {
            (left, LimitedBy::TimeBudget)
        } else {
            (wanted, by)
        };
        Self {
            timeout,
            by,
            requested,
            ceiling,
        }
    }

    /// What the model is told when the limit is not the one it asked for
    /// (`tool`'s ceiling clipped it, or the task's time left did).
    pub fn note(&self, tool: &str, budget: &TimeBudget) -> Option<String> {
        let limit = duration_label(self.timeout);
        let asked = self
            .requested
            .map(|r| format!("you asked for {}; ", duration_label(r)))
            .unwrap_or_default();
        match self.by {
            LimitedBy::Request => None,
            LimitedBy::Ceiling => self
                .requested
                .filter(|r| *r > self.ceiling)
                .map(|_| format!("time limit: {limit} ({asked}{tool} runs at most {limit} here)")),
            LimitedBy::TimeBudget => Some(format!(
                "time limit: {limit} ({asked}the task's time budget of {} has {limit} left)",
                budget.label()
            )),
        }
    }
}

/// A duration as people write it: "1 min", "1 min 30 s", "15 s", "250 ms".
pub fn duration_label(d: Duration) -> String {
    let secs = d.as_secs();
    match (secs / 60, secs % 60) {
        (0, 0) if d.subsec_millis() > 0 => format!("{} ms", d.subsec_millis()),
        (0, s) => format!("{s} s"),
        (m, 0) => format!("{m} min"),
        (m, s) => format!("{m} min {s} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        }
    }

    #[test]
    fn each_budget_stops_with_its_reason() {
        let mut t = BudgetTracker::new(Budgets {
            max_turns: 2,
            ..Budgets::default()
        });
        assert_eq!(t.check(), None);
        t.record_call(&usage(10, 10), Some(0.01));
        t.record_call(&usage(10, 10), Some(0.01));
        assert_eq!(t.check().unwrap().reason, "stopped: max turns (2)");

        let mut t = BudgetTracker::new(Budgets {
            max_tokens: 1_000,
            ..Budgets::default()
        });
        t.record_call(&usage(900, 100), None);
        assert_eq!(t.check().unwrap().budget, "tokens");
        assert_eq!(t.spent.unpriced_calls, 1);

        let mut t = BudgetTracker::new(Budgets {
            max_cost_usd: Some(0.05),
            ..Budgets::default()
        });
        t.record_call(&usage(1, 1), Some(0.06));
        assert_eq!(
            t.check().unwrap().reason,
            "stopped: max cost ($0.06 used of $0.05)"
        );

        let t = BudgetTracker::resume(
            Budgets {
                max_wall_time: Duration::from_secs(60),
                ..Budgets::default()
            },
            Spent::default(),
            Duration::from_secs(61),
        );
        assert_eq!(t.check().unwrap().reason, "stopped: max time (1 min)");
    }

    #[test]
    fn usage_sums_saturate() {
        let absurd = Usage {
            input_tokens: u64::MAX,
            output_tokens: u64::MAX,
            cache_read_tokens: u64::MAX,
            cache_write_tokens: u64::MAX,
        };
        let mut t = BudgetTracker::new(Budgets::default());
        t.record_call(&absurd, Some(f64::MAX));
        t.record_call(&absurd, Some(f64::MAX));
        t.record_usage(&absurd, Some(1.0));
        assert_eq!(t.spent.usage, absurd);
        assert_eq!(t.spent.tokens(), u64::MAX);
        assert_eq!(t.spent.cost_usd, f64::MAX);
        assert_eq!(
            t.check().unwrap().reason,
            "stopped: max tokens (18446744073709551615 used of 2000000)"
        );
    }

    const S: fn(u64) -> Duration = Duration::from_secs;

    #[test]
    fn a_command_gets_the_smallest_of_request_ceiling_and_time_left() {
        use LimitedBy::*;
        let cases: &[(Option<u64>, u64, u64, u64, LimitedBy)] = &[
            // requested, ceiling, left → timeout, by
            (None, 120, 1800, 120, Ceiling),
            (Some(30), 120, 1800, 30, Request),
            (Some(3600), 120, 1800, 120, Ceiling),
            (Some(3600), 120, 60, 60, TimeBudget),
            (None, 600, 45, 45, TimeBudget),
            (Some(100), 120, 100, 100, TimeBudget),
            (Some(10), 120, 0, 0, TimeBudget),
        ];
        for &(requested, ceiling, left, timeout, by) in cases {
            let limit = CommandLimit::new(requested.map(S), S(ceiling), S(left));
            assert_eq!(
                (limit.timeout, limit.by),
                (S(timeout), by),
                "{requested:?} {ceiling} {left}"
            );
        }
    }

    #[test]
    fn the_model_is_told_the_limit_that_applied() {
        let budget = TimeBudget::from_now(S(60));
        let note = |requested: Option<u64>, left| {
            CommandLimit::new(requested.map(S), S(120), S(left)).note("run_command", &budget)
        };
        assert_eq!(note(None, 1800), None);
        assert_eq!(note(Some(30), 1800), None);
        assert_eq!(
            note(Some(3600), 1800).as_deref(),
            Some("time limit: 2 min (you asked for 60 min; run_command runs at most 2 min here)")
        );
        assert_eq!(
            note(Some(100), 45).as_deref(),
            Some(
                "time limit: 45 s (you asked for 1 min 40 s; the task's time budget of 1 min has 45 s left)"
            )
        );
    }

    /// A resumed task's budget counts the time it had already spent.
    #[test]
    fn a_resumed_task_has_only_its_time_left() {
        let t = BudgetTracker::resume(
            Budgets {
                max_wall_time: S(60),
                ..Budgets::default()
            },
            Spent::default(),
            S(55),
        );
        let left = t.time_budget().left();
        assert!(left <= S(5), "{left:?}");
        let limit = CommandLimit::new(Some(S(100)), S(120), left);
        assert_eq!(limit.by, LimitedBy::TimeBudget);
    }
}
