//! A claim of completion, checked by the verifier; what the loop guard
//! makes of a reply the checks turned down (one more try, or the end).

use super::*;

impl Agent {
    /// The model says it is done: the verifier decides.
    pub(super) async fn claim(&mut self, turn: u32, text: String) -> Result<(), Stop> {
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
            () = self.cancel.cancelled() => return Err(Stop::new(StopCause::Cancelled, self.config.cancel_reason.text())),
            verdict = self.ports.verifier.verify(cx) => verdict,
        };
        self.test_outcomes(&verdict);
        match verdict {
            Verdict::Verified { summary, evidence } => {
                self.event(TaskEvent::Verification {
                    turn,
                    passed: true,
                    detail: summary.clone(),
                    evidence: evidence.clone(),
                });
                // Without checks the model's word is all there is.
                let (cause, reason) = if self.task.acceptance.is_empty() {
                    (StopCause::Answered, ending::answered(turn))
                } else {
                    (
                        StopCause::Verified,
                        format!("{summary} in {}", ending::turns(turn)),
                    )
                };
                Err(Stop {
                    cause,
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
                    cause: StopCause::Unproven,
                    reason: format!("not verified after {}: {summary}", ending::turns(turn)),
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
                        StopCause::Budget,
                        format!(
                            "the time budget ({}) ran out while Rein verified the claim: {}",
                            time.label(),
                            gap.lines().next().unwrap_or_default()
                        ),
                    ));
                }
                let keep_going = match self.turned_down(&text) {
                    TurnedDown::GiveUp(why) => {
                        self.progress.last_gap = Some(gap.clone());
                        if self
                            .last_search(&why, &format!("Rein ran the test after it: {gap}"))
                            .await
                        {
                            self.set_state(TaskState::Running, None);
                            return Ok(());
                        }
                        // Its last words claim what the checks refuted: said
                        // so, never quoted as if they held.
                        let reason = match text.trim() {
                            "" => format!("stopped: {why}"),
                            said => format!(
                                "stopped: {why}; not verified: Rein's checks show the task is not done. Its last words: {}",
                                quote(said)
                            ),
                        };
                        return Err(self.guard_stop(
                            "gave_up",
                            StopCause::GaveUp,
                            reason,
                            evidence,
                        ));
                    }
                    TurnedDown::Resample(why) => {
                        self.resample_event(&why);
                        self.progress.last_gap = Some(gap.clone());
                        if self
                            .start_afresh(&format!("Rein ran the test after it: {gap}"))
                            .await
                        {
                            self.arm_search();
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
                // The next reply is searched for (`search.rs`).
                self.arm_search();
                self.set_state(TaskState::Running, None);
                Ok(())
            }
        }
    }

    /// The loop guard ends the task: the model is going in circles, and
    /// more turns would only spend the budget. The trace says why.
    pub(super) fn guard_stop(
        &self,
        guard: &str,
        cause: StopCause,
        reason: String,
        evidence: Vec<Evidence>,
    ) -> Stop {
        self.event(TaskEvent::Guard {
            call_id: None,
            guard: guard.into(),
            message: reason.clone(),
        });
        Stop {
            cause,
            reason,
            evidence,
            final_text: self.last_words.clone(),
        }
    }

    /// A reply that is neither a call nor a claim (a broken call, a file
    /// written back unchanged) is answered with how to do better; the same
    /// reply twice, nothing changed in between, is a model going in
    /// circles, and ends the task as a repeated claim does.
    pub(super) async fn answer_instead(
        &mut self,
        guard: &str,
        nudge: String,
        reply: &str,
    ) -> Result<(), Stop> {
        let nudge = match self.turned_down(reply) {
            TurnedDown::GiveUp(why) => {
                if self.last_search(&why, &nudge).await {
                    return Ok(());
                }
                return Err(self.guard_stop(
                    "gave_up",
                    StopCause::GaveUp,
                    format!("stopped: {why}"),
                    Vec::new(),
                ));
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
    pub(super) fn turned_down(&self, reply: &str) -> TurnedDown {
        self.guard
            .lock()
            .map_or(TurnedDown::GoOn, |mut g| g.claim_turned_down(reply))
    }

    /// Says the model gets one more try, sampled hotter, and why.
    pub(super) fn resample_event(&self, why: &str) {
        self.event(TaskEvent::Guard {
            call_id: None,
            guard: "resample".into(),
            message: format!(
                "{why}: one more try, at temperature {RESAMPLE_TEMPERATURE}, asked to change its approach"
            ),
        });
    }
}

/// How much of the model's words a stop reason quotes: it is shown on a
/// status line; the whole text is the outcome's `final_text`.
pub(super) const QUOTED_CHARS: usize = 300;

/// The model's words for a stop reason: on one line, cut to
/// [`QUOTED_CHARS`], key-shaped tokens redacted, in quotes.
pub(super) fn quote(text: &str) -> String {
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
