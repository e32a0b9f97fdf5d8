//! Telling the front end which tests the verifier's runs showed failing
//! and passing ([`TaskEvent::TestOutcomes`]); the model's own runs are
//! told by the dispatcher.

use super::*;
use crate::testing::outcomes;

impl Agent {
    /// The baseline run's failures, once it is known whether the task
    /// was already done.
    pub(super) fn baseline_outcomes(&self) {
        if let Some(baseline) = self.ports.verifier.baseline_output()
            && let Some(event) = outcomes::event(baseline.failures.iter().map(String::as_str), [])
        {
            self.event(event);
        }
    }

    /// What the checks behind a verdict showed.
    pub(super) fn test_outcomes(&self, verdict: &Verdict) {
        let (verified, evidence) = match verdict {
            Verdict::Verified { evidence, .. } => (true, evidence),
            Verdict::Gap { evidence, .. } | Verdict::Unconfirmed { evidence, .. } => {
                (false, evidence)
            }
        };
        if let Some(event) = outcomes::of_verdict(&self.task, verified, evidence) {
            self.event(event);
        }
    }
}
