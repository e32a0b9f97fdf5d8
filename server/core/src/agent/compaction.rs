//! Compaction: the old part of the history summarized by the model, the
//! recent part kept.

use super::unfinished::Streamed;
use super::*;

impl Agent {
    /// Writes `items`, about to leave the history, to the task's artifacts
    /// (redacted) and starts a new history epoch; the archive's path, or
    /// `None` if it could not be written.
    pub(super) async fn archive_history(&mut self, items: &[Item], before: &str) -> Option<String> {
        self.compactions += 1;
        let archive = format!("{}/history-{}.json", self.artifacts.rel, self.compactions);
        let archived = self.config.redactor.json_pretty(items);
        match self.ports.artifacts.write(&archive, &archived).await {
            Ok(()) => Some(archive),
            Err(e) => {
                tracing::warn!(error = %e, "could not archive history before {before}");
                None
            }
        }
    }

    /// Summarizes the older part of the history with the model. Returns
    /// whether anything was compacted.
    pub(super) async fn compact(&mut self, turn: u32) -> Result<bool, Stop> {
        if self.config.harness.is_naive() {
            return Ok(false);
        }
        let Some(cut) = self.context.compaction_cut(&self.history) else {
            return Ok(false);
        };
        let old: Vec<Item> = self.history.items[1..cut].to_vec();
        let tokens_before: u64 = self.history.items.iter().map(Item::tokens).sum();
        let Some(archive) = self.archive_history(&old, "compaction").await else {
            return Ok(false);
        };
        self.event(TaskEvent::Activity {
            text: "compacting the context".into(),
        });
        crate::failpoint::hit("compaction");
        let asked = prompt::compaction_request(&self.task, &transcript(&old));
        let estimated = rein_models::tokens::count_text(prompt::COMPACTION_SYSTEM)
            .saturating_add(rein_models::tokens::count_text(&asked));
        let request = ModelRequest {
            model: self.ports.model.model().to_owned(),
            system: vec![prompt::COMPACTION_SYSTEM.to_owned()],
            messages: vec![rein_models::Message::user(asked)],
            tools: Vec::new(),
            // A summary, within what the model may write at all.
            max_output_tokens: self.context.config.max_output_tokens.min(4_096),
            temperature: None,
            seed: None,
            tool_choice: Default::default(),
            cache: rein_models::CachePlan::default(),
        };
        // The summary is a model call like any other: it ends when the
        // task's time does.
        let time_left = self.tracker.time_left();
        let started = std::time::Instant::now();
        let so_far = Arc::new(Streamed::default());
        let reply = tokio::select! {
            reply = self.stream(request, None, None, Arc::clone(&so_far)) => reply,
            () = tokio::time::sleep(time_left) => {
                self.record_unfinished_call(None, estimated, &so_far, "cut at the task's time", started);
                return Err(self.out_of_time_answering());
            }
        };
        let reply = match reply {
            Ok(reply) => reply,
            Err(ModelError::Cancelled) => {
                self.record_unfinished_call(None, estimated, &so_far, "cancelled", started);
                return Err(Stop::new(
                    StopCause::Cancelled,
                    self.config.cancel_reason.text(),
                ));
            }
            Err(e) => {
                if so_far.tokens() > 0 {
                    self.record_unfinished_call(None, estimated, &so_far, "broken off", started);
                }
                tracing::warn!(error = %e, "compaction call failed");
                return Ok(false);
            }
        };
        let cost = self
            .config
            .prices
            .cost_usd(self.ports.model.model(), &reply.usage);
        self.tracker.record_usage(&reply.usage, cost);
        let summary = reply.text();
        if summary.trim().is_empty() {
            return Ok(false);
        }
        let text = prompt::summary_item(summary.trim(), &archive);
        let tokens = rein_models::tokens::count_text(&text);
        self.history.items.splice(
            1..cut,
            [Item::Summary {
                text,
                archive: archive.clone(),
                tokens,
            }],
        );
        let tokens_after: u64 = self.history.items.iter().map(Item::tokens).sum();
        self.event(TaskEvent::Compaction {
            summarized_items: old.len(),
            tokens_before,
            tokens_after,
            archive,
            usage: reply.usage,
            cost_usd: cost,
        });
        let _ = turn;
        Ok(true)
    }
}
