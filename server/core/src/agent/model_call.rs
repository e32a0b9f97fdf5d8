//! The model call: the request assembled from the context, the stream
//! (cut where it loops), bounded by the task's time and cancellation.

use super::call_of::CallOf;
use super::unfinished::Streamed;
use super::*;

impl Agent {
    /// The request for this turn and Rein's estimate of its input tokens.
    pub(super) async fn prepare_request(&mut self, turn: u32) -> Result<(ModelRequest, u64), Stop> {
        let note = self.progress.render(
            turn,
            self.tracker.budgets.max_turns,
            &self.task,
            self.context.config.restate_every,
        );
        self.event(TaskEvent::ProgressNote {
            turn,
            progress: self.progress.clone(),
        });
        let mut assembled = self
            .context
            .assemble_with(&self.history, &note, &mut self.shedding);
        if assembled.estimated_tokens > self.context.threshold() && self.compact(turn).await? {
            assembled = self
                .context
                .assemble_with(&self.history, &note, &mut self.shedding);
        }
        let mut now = HashSet::new();
        for (transformation, detail) in assembled.transformations {
            let key = (transformation, detail);
            if !self.shown_transformations.contains(&key) && !now.contains(&key) {
                self.event(TaskEvent::Context {
                    transformation: key.0.clone(),
                    detail: key.1.clone(),
                });
            }
            now.insert(key);
        }
        self.shown_transformations = now;
        let mut request = assembled.request;
        request.temperature = self.config.temperature;
        if self.guard.lock().is_ok_and(|g| g.resampling()) {
            request.temperature = Some(RESAMPLE_TEMPERATURE);
        }
        if self.force_call == ForceCall::Next {
            request.tool_choice = ToolChoice::Required;
            self.force_call = ForceCall::No;
        }
        Ok((request, assembled.estimated_tokens))
    }

    /// One model call with its retries, bounded by the model timeout and
    /// the cancellation token. `None`: the prompt did not fit and the
    /// history was compacted; the turn should be tried again.
    pub(super) async fn call_model(
        &mut self,
        turn: u32,
        request: ModelRequest,
        estimated: u64,
    ) -> Result<Option<ModelReply>, Stop> {
        let request_ref = self.save_request(turn, &request).await;
        self.call_saved(turn, request, estimated, &request_ref, CallOf::Turn)
            .await
    }

    /// [`Agent::call_model`] of a request already saved at `request_ref`.
    pub(super) async fn call_saved(
        &mut self,
        turn: u32,
        request: ModelRequest,
        estimated: u64,
        request_ref: &str,
        of: CallOf,
    ) -> Result<Option<ModelReply>, Stop> {
        let started = Instant::now();
        let forced = request.tool_choice == ToolChoice::Required;
        // A reply stuck repeating itself is cut short (the loop guard's
        // job, so not in the naive loop).
        let cut = (!self.config.harness.is_naive()).then(|| Arc::new(AtomicBool::new(false)));
        // The call ends when the task's time does: a local model may take
        // minutes over one answer, and the budget is the user's.
        let time_left = self.tracker.time_left();
        // What the call streams counts even if it never finishes.
        let so_far = Arc::new(Streamed::default());
        let reply = tokio::select! {
            reply = self.stream(request, of.streamed().then_some(turn), cut.clone(), Arc::clone(&so_far)) => reply,
            () = tokio::time::sleep(time_left) => {
                self.record_unfinished_call(Some((turn, of)), estimated, &so_far, "cut at the task's time", started);
                return Err(self.out_of_time_answering());
            }
        };
        let mut reply = match reply {
            Ok(reply) => reply,
            Err(ModelError::Cancelled) => {
                self.record_unfinished_call(
                    Some((turn, of)),
                    estimated,
                    &so_far,
                    "cancelled",
                    started,
                );
                return Err(Stop::new(
                    StopCause::Cancelled,
                    self.config.cancel_reason.text(),
                ));
            }
            Err(ModelError::ContextTooLong { .. }) if self.compact(turn).await? => return Ok(None),
            // A server that does not take a required call: ask as before,
            // and not again in this task.
            Err(ModelError::Rejected {
                status: 400 | 422, ..
            }) if forced => {
                self.force_call = ForceCall::Unsupported;
                self.event(TaskEvent::Context {
                    transformation: "tool_choice_unsupported".into(),
                    detail: "the server refused a required tool call; the turn is asked again without it".into(),
                });
                return Ok(None);
            }
            Err(e) => {
                if so_far.tokens() > 0 {
                    self.record_unfinished_call(
                        Some((turn, of)),
                        estimated,
                        &so_far,
                        "broken off",
                        started,
                    );
                }
                return Err(Stop::new(
                    StopCause::ModelFailed,
                    format!("the model call failed: {e}"),
                ));
            }
        };
        if cut.is_some_and(|cut| cut.load(Ordering::Relaxed)) {
            let dropped = repetition::trim_loop(&mut reply, estimated);
            let looping_call = reply
                .bad_calls
                .iter()
                .find(|bad| bad.problem == rein_models::BadArguments::Looping);
            let detail = match looping_call {
                Some(bad) => format!(
                    "the arguments of a call to {} repeated the same lines more than {} times: cut there, the call not run",
                    bad.name,
                    repetition::REPEATED_LINES
                ),
                None => format!(
                    "the reply repeated the same lines more than {} times: cut there, {dropped} bytes of the loop dropped",
                    repetition::REPEATED_LINES
                ),
            };
            self.event(TaskEvent::Context {
                transformation: "repetition_cut".into(),
                detail,
            });
        }
        let cost = self
            .config
            .prices
            .cost_usd(self.ports.model.model(), &reply.usage);
        if of.new_turn() {
            self.tracker.record_call(&reply.usage, cost);
        } else {
            self.tracker.record_usage(&reply.usage, cost);
        }
        let latency_ms = started.elapsed().as_millis() as u64;
        self.event(TaskEvent::ModelCall {
            turn,
            usage: reply.usage,
            cost_usd: cost,
            latency_ms,
            stop: stop_name(&reply.stop),
            retries: reply.retries,
            estimated_input_tokens: estimated,
        });
        self.journal(|j| j.turn(turn, request_ref, &reply, cost, latency_ms))?;
        self.set_state(TaskState::Running, None);
        Ok(Some(reply))
    }

    /// The task's time ran out while the model was still answering.
    pub(super) fn out_of_time_answering(&self) -> Stop {
        let reason = self
            .tracker
            .check()
            .map_or_else(|| "stopped: max time".to_owned(), |e| e.reason);
        Stop::new(
            StopCause::Budget,
            format!("{reason}, while the model was answering"),
        )
    }

    /// Keeps the exact request of a turn as an artifact (the turn's record
    /// refers to it). Only with a journal: without one nothing refers to it.
    pub(super) async fn save_request(&self, turn: u32, request: &ModelRequest) -> String {
        self.save_request_as(&format!("request-{turn}.json"), request)
            .await
    }

    /// [`Agent::save_request`] under the artifact name `name`.
    pub(super) async fn save_request_as(&self, name: &str, request: &ModelRequest) -> String {
        let rel = format!("{}/{name}", self.artifacts.rel);
        let Some(journal) = &self.ports.journal else {
            return rel;
        };
        let json = self.config.redactor.json_pretty(request);
        match self.ports.artifacts.write(&rel, &json).await {
            Ok(()) => {
                let _ = journal.artifact(name, "request", json.len() as u64);
            }
            Err(error) => tracing::warn!(%error, "could not save the request"),
        }
        rel
    }

    /// `turn`: the turn whose text streams to the front end as it comes
    /// (`None` for a call whose text is not the model's answer: a
    /// compaction's summary).
    /// With `cut`, a reply that falls into a loop ends there and `cut`
    /// says so (`repetition.rs`). `so_far` counts what streams, for a
    /// call that never finishes (`unfinished.rs`).
    pub(super) async fn stream(
        &self,
        request: ModelRequest,
        turn: Option<u32>,
        cut: Option<Arc<AtomicBool>>,
        so_far: Arc<Streamed>,
    ) -> Result<ModelReply, ModelError> {
        let progress = Arc::clone(&self.ports.progress);
        let task = self.task.id.clone();
        let events = self
            .ports
            .model
            .call(request, self.cancel.clone())
            .inspect(move |event| {
                if let Ok(event) = event {
                    so_far.see(event);
                }
                match (event, turn) {
                    (
                        Ok(ModelEvent::Retrying {
                            attempt,
                            delay,
                            reason,
                        }),
                        _,
                    ) => {
                        let retry = TaskEvent::ModelRetry {
                            attempt: *attempt,
                            delay_ms: delay.as_millis() as u64,
                            reason: reason.clone(),
                        };
                        progress.event(&task, &retry);
                    }
                    (Ok(ModelEvent::TextDelta(text)), Some(turn)) if !text.is_empty() => {
                        let delta = TaskEvent::TextDelta {
                            turn,
                            text: text.clone(),
                        };
                        progress.event(&task, &delta);
                    }
                    _ => {}
                }
            });
        let events: EventStream = match cut {
            Some(cut) => Box::pin(repetition::cut_loops(events, cut)),
            None => Box::pin(events),
        };
        let timeout = self.tracker.budgets.model_timeout;
        tokio::select! {
            () = self.cancel.cancelled() => Err(ModelError::Cancelled),
            reply = tokio::time::timeout(timeout, rein_models::collect(events)) => match reply {
                Ok(reply) => reply,
                Err(_) => Err(ModelError::RequestTimeout { provider: "model", after: timeout }),
            },
        }
    }
}
