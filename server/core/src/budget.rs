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
    /// One `run_tests`.
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
        let elapsed = self.elapsed();
        if elapsed >= b.max_wall_time {
            return Some(Exhausted {
                budget: "wall_time",
                reason: format!(
                    "stopped: max time ({} min)",
                    b.max_wall_time.as_secs().div_ceil(60)
                ),
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
}
