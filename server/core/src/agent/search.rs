//! Search with the verifier: after an attempt the verifier turned down
//! (or on every turn, by setting), several candidate fixes are sampled
//! from the same prompt state — the first is the ordinary next turn, the
//! others hotter and told in a line each how the earlier ones failed —
//! and each is checked in a private layer over the
//! workspace before any reaches it. The first that passes goes on as the
//! model's reply (one proposal, through the ordinary edit path, then the
//! real verifier on the live text); failed ones never enter the history.
//! A reply that changes nothing (an answer, a claim) cannot pass either:
//! the next is sampled; if every one only answered, the first goes on as
//! the turn's reply.
//! If none passes, the model is told in a few lines what was tried and
//! how each failed, and the loop goes on as before.
//!
//! A candidate is a reply whose only effects are file changes (files
//! written whole, `edit_file`, `write_file`, `create_file`); its files are
//! computed from the current text without touching the workspace, by the
//! rules the tools apply. A reply that reads, searches or runs is no
//! candidate: it goes on as an ordinary turn and the search ends.

use std::collections::BTreeMap;

use rein_models::{Message, Role};

use super::call_of::CallOf;
use super::minimise::Smaller;
use super::replies::{calls_of, is_finished, with_calls_from_text, without_writes_of};
use super::*;
use crate::config::search::SearchMode;
use crate::ports::{CandidateCheck, CandidateOutcome};
use crate::tools::TypedTool as _;
use crate::tools::{create_file::CreateFile, edit_file::EditFile, write_file::WriteFile};

/// The temperatures of a search's candidates after the first (which has
/// the turn's own): each hotter than the last, and one step more after a
/// candidate that repeated an earlier one.
const LADDER: [f64; 4] = [0.4, 0.7, 1.0, 1.2];

/// Each candidate's own sampler seed: seen on a seeded llama-server, two
/// candidates at one temperature were the same reply, token for token.
/// Fixed per `search_seed`, turn and number, so a search repeats itself
/// for the same prompt and setting (a round can be run again), and
/// differs from candidate to candidate, from search to search, and from
/// one `search_seed` to another (a request's seed overrides the server's
/// own `--seed`: without it two rounds at two server seeds sampled
/// the same candidates).
fn candidate_seed(base: u64, turn: u32, number: u32) -> u64 {
    base.wrapping_mul(1_000_003)
        .wrapping_add(u64::from(turn) * 1_000 + u64::from(number))
}

/// How a search ended.
pub(super) enum Searched {
    /// Go on with `reply`, no candidate, as the ordinary reply of `turn`.
    Reply { turn: u32, reply: ModelReply },
    /// A candidate passed its check: `reply` goes on as the ordinary
    /// reply of `turn`, its writes replaced by `smaller`'s where the
    /// check did not need all of its changes.
    Passed {
        turn: u32,
        reply: ModelReply,
        smaller: Option<Smaller>,
    },
    /// No candidate passed (the model was told), or the prompt changed
    /// under the search (compacted): the next turn starts from the
    /// history.
    Again,
}

/// What a sampled reply is as a candidate.
pub(super) enum Reading {
    /// Its files once applied, (path, text) sorted by path: only those
    /// it changes.
    Files(Vec<(String, String)>),
    /// It only changes files, but its changes cannot be made (why).
    Broken(String),
    /// It writes the files as they are now.
    Unchanged,
    /// It changes nothing and does nothing: an answer, or a claim of
    /// being done.
    Answer,
    /// It does more than change files (what).
    Not(String),
}

/// One candidate tried and turned down, for the summary the model gets.
struct Tried {
    number: u32,
    temperature: f64,
    files: Vec<String>,
    why: String,
}

impl Agent {
    /// Whether this turn is a search: by the setting (`always`, or
    /// `on_failure` after a turned-down attempt), where it can run.
    pub(super) fn search_now(&mut self) -> bool {
        let armed = std::mem::take(&mut self.search_armed);
        let wanted = match self.config.search.mode {
            SearchMode::Off => false,
            SearchMode::OnFailure => armed,
            SearchMode::Always => true,
        };
        let searching = wanted && self.can_search();
        if !searching {
            self.search_hot = false;
        }
        searching
    }

    /// After an attempt the verifier turned down: the next turn searches
    /// (`on_failure`).
    pub(super) fn arm_search(&mut self) {
        self.search_armed = self.config.search.mode == SearchMode::OnFailure;
    }

    /// After a reply that wrote the files back unchanged: the next turn
    /// searches (`on_failure`), its first candidate already hotter than
    /// the greedy answer that changed nothing (seen with a 1.5B model:
    /// the same copy again at temperature 0, a minute and a half each on
    /// two cores).
    pub(super) fn arm_search_hot(&mut self) {
        self.arm_search();
        self.search_hot = self.search_armed;
    }

    /// The loop guard would end the task (the model gave up, or kept
    /// claiming with nothing changed), yet turns and time are left: once
    /// per task, one last search in its place, hot from its first
    /// candidate, from the task told afresh with `did_not_work`. Seen in
    /// the held-out rounds of 2026-12-07: 10 of 17 failures ended there
    /// after 140–251 s of 300, with turns left; most of those tasks were
    /// fixed by a search in another round. `false`: the stop stands (search off or
    /// unavailable, already spent, or a budget spent), and after the user
    /// turned the change down: then the model stops because the user said
    /// no, and the task ends so (the demo's rejected edit).
    pub(super) async fn last_search(&mut self, why: &str, did_not_work: &str) -> bool {
        if self.last_search_spent
            || self.user_rejected
            || self.config.search.mode == SearchMode::Off
            || self.tracker.check().is_some()
            || !self.can_search()
        {
            return false;
        }
        self.last_search_spent = true;
        self.event(TaskEvent::Guard {
            call_id: None,
            guard: "last_search".into(),
            message: format!(
                "{why}: one last search before Rein stops ({} candidate(s), hotter from the first)",
                self.config.search.candidates.max(1)
            ),
        });
        if !self.start_afresh(did_not_work).await {
            self.history.push(Item::user(format!(
                "{did_not_work}\n{}",
                prompt::TRY_SOMETHING_ELSE
            )));
        }
        self.search_armed = true;
        self.search_hot = true;
        true
    }

    /// Never in the naive loop (the baseline the harness is measured
    /// against), nor for a task without a target test; and only where a
    /// candidate's files can be laid over the workspace in a private
    /// layer (else said once).
    fn can_search(&mut self) -> bool {
        if self.config.harness.is_naive()
            || !self
                .task
                .acceptance
                .iter()
                .any(|a| matches!(a, crate::task::Acceptance::TestPasses { .. }))
        {
            return false;
        }
        if self.ports.exec.lays_files() {
            return true;
        }
        if !self.search_unavailable_said {
            self.search_unavailable_said = true;
            self.event(TaskEvent::Context {
                transformation: "search_unavailable".into(),
                detail: "the search with the verifier is off: the commands' sandbox here has no private layers to check a candidate fix in".into(),
            });
        }
        false
    }

    /// The search of one turn, from `request` (the ordinary turn's).
    pub(super) async fn search(
        &mut self,
        first_turn: u32,
        request: ModelRequest,
        estimated: u64,
    ) -> Result<Searched, Stop> {
        let of = self.config.search.candidates.max(1);
        let base = request.temperature.unwrap_or(0.0);
        let hot = std::mem::take(&mut self.search_hot);
        // The search's request; a candidate told of earlier ones is saved
        // beside it.
        let first_ref = self.save_request(first_turn, &request).await;
        let mut tried: Vec<Tried> = Vec::new();
        let mut seen: Vec<(u32, Vec<(String, String)>)> = Vec::new();
        // The first reply that only answered, and how many did.
        let mut answer: Option<ModelReply> = None;
        let mut answers = 0;
        let mut step = 0;
        let cap = self.candidate_cap().await;
        for number in 1..=of {
            if self.cancel.is_cancelled() {
                return Err(Stop::new(
                    StopCause::Cancelled,
                    self.config.cancel_reason.text(),
                ));
            }
            // The whole search is `first_turn`: the turns budget was
            // checked when it started; tokens, cost and time for each.
            if let Some(exhausted) = self.tracker.check_spending() {
                return Err(Stop::new(StopCause::Budget, exhausted.reason));
            }
            let turn = first_turn;
            let temperature = if number == 1 && !hot {
                base
            } else {
                let t = LADDER[step.min(LADDER.len() - 1)].max(base);
                step += 1;
                t
            };
            if number > 1 {
                self.event(TaskEvent::Activity {
                    text: format!("trying candidate fix {number} of {of}"),
                });
            }
            let mut sample = request.clone();
            if let Some(cap) = cap {
                sample.max_output_tokens = sample.max_output_tokens.min(cap);
            }
            sample.temperature = Some(temperature);
            sample.seed = Some(candidate_seed(self.config.search.seed, first_turn, number));
            let request_ref = if tried.is_empty() {
                first_ref.clone()
            } else {
                told_of(&mut sample, &tried);
                self.save_request_as(&format!("request-{turn}-{number}.json"), &sample)
                    .await
            };
            let Some(reply) = self
                .call_saved(
                    turn,
                    sample,
                    estimated,
                    &request_ref,
                    CallOf::Candidate { first: number == 1 },
                )
                .await?
            else {
                // Compacted, or asked again without a required call: a
                // new prompt state, searched from the start.
                self.arm_search();
                return Ok(Searched::Again);
            };
            let candidate =
                |outcome, detail: String, files: &[String], check_ms| TaskEvent::Candidate {
                    turn,
                    number,
                    of,
                    temperature,
                    outcome,
                    detail,
                    files: files.to_vec(),
                    check_ms,
                };
            // Cut at the cap: no fix, and no reason to end the search.
            if let Some(cap) = cap
                && reply.stop == StopReason::MaxTokens
            {
                let why = format!(
                    "it ran past {cap} tokens, longer than the files it could change, and was cut there"
                );
                self.event(candidate(CandidateOutcome::Failed, why.clone(), &[], 0));
                tried.push(Tried {
                    number,
                    temperature,
                    files: Vec::new(),
                    why,
                });
                continue;
            }
            let files = match self.read_candidate(&reply).await {
                Reading::Not(what) => {
                    self.event(candidate(CandidateOutcome::NotACandidate, what, &[], 0));
                    return Ok(Searched::Reply { turn, reply });
                }
                // Seen with a 1.5B model after a turned-down attempt: the
                // first candidate, at 0.4, said "I'm sorry for the
                // confusion" and the search ended there, three times in
                // one task. An answer that changes nothing cannot pass the
                // test that just failed: the next is sampled, hotter.
                // After the user turned a change down, an answer is for
                // the user (the demo: "You rejected the edit…"), not a
                // failed fix: the turn's reply, as without a search.
                Reading::Answer if self.user_rejected => {
                    self.event(candidate(
                        CandidateOutcome::NotACandidate,
                        "an answer after the user turned the change down".into(),
                        &[],
                        0,
                    ));
                    return Ok(Searched::Reply { turn, reply });
                }
                Reading::Answer => {
                    let why = "no change: an answer or a claim".to_owned();
                    self.event(candidate(CandidateOutcome::Failed, why.clone(), &[], 0));
                    step += 1;
                    answers += 1;
                    answer.get_or_insert(reply);
                    tried.push(Tried {
                        number,
                        temperature,
                        files: Vec::new(),
                        why,
                    });
                    continue;
                }
                Reading::Unchanged => {
                    let why = "the files as they are now: nothing changed".to_owned();
                    self.event(candidate(
                        CandidateOutcome::SameAsBefore,
                        why.clone(),
                        &[],
                        0,
                    ));
                    step += 1;
                    tried.push(Tried {
                        number,
                        temperature,
                        files: Vec::new(),
                        why,
                    });
                    continue;
                }
                Reading::Broken(why) => {
                    self.event(candidate(CandidateOutcome::Failed, why.clone(), &[], 0));
                    tried.push(Tried {
                        number,
                        temperature,
                        files: Vec::new(),
                        why,
                    });
                    continue;
                }
                Reading::Files(files) => files,
            };
            let paths: Vec<String> = files.iter().map(|(p, _)| p.clone()).collect();
            if let Some((earlier, _)) = seen.iter().find(|(_, f)| *f == files) {
                let why = format!("the same change as candidate {earlier}");
                self.event(candidate(
                    CandidateOutcome::SameAsBefore,
                    why.clone(),
                    &paths,
                    0,
                ));
                step += 1;
                tried.push(Tried {
                    number,
                    temperature,
                    files: paths,
                    why,
                });
                continue;
            }
            seen.push((number, files.clone()));
            self.event(TaskEvent::Activity {
                text: format!("checking candidate fix {number} of {of}"),
            });
            let started = Instant::now();
            let check = self.check_candidate(&files).await?;
            let check_ms = started.elapsed().as_millis() as u64;
            let Some(CandidateCheck { passed, gap, .. }) = check else {
                // The verifier cannot check it: an ordinary turn.
                self.event(candidate(
                    CandidateOutcome::NotACandidate,
                    "the verifier cannot check a candidate for this task".into(),
                    &paths,
                    check_ms,
                ));
                return Ok(Searched::Reply { turn, reply });
            };
            if passed {
                let started = Instant::now();
                let smaller = self.smallest_passing(&files).await?;
                let check_ms = check_ms + started.elapsed().as_millis() as u64;
                let detail = match &smaller {
                    None => "its check passed: proposed as the model's reply".to_owned(),
                    Some(smaller) => format!(
                        "its check passed: proposed as the model's reply without {} change(s) the check did not need ({})",
                        smaller.left_out.len(),
                        smaller.left_out.join("; ")
                    ),
                };
                self.event(candidate(
                    CandidateOutcome::Passed,
                    detail,
                    &paths,
                    check_ms,
                ));
                return Ok(Searched::Passed {
                    turn,
                    reply,
                    smaller,
                });
            }
            // It quotes test output, and goes to the model.
            let why = one_line(&self.config.redactor.redact(&gap));
            self.event(candidate(
                CandidateOutcome::Failed,
                why.clone(),
                &paths,
                check_ms,
            ));
            tried.push(Tried {
                number,
                temperature,
                files: paths,
                why,
            });
            // What the spending so far was survives a crash (the history
            // is the same: candidates never enter it).
            self.checkpoint(turn, CheckpointPhase::AfterTools)?;
            let time = self.tracker.time_budget();
            if time.is_over() {
                return Err(Stop::new(
                    StopCause::Budget,
                    format!(
                        "the time budget ({}) ran out while Rein checked candidate fixes",
                        time.label()
                    ),
                ));
            }
        }
        // Only answers: the first goes on as the turn's reply, as if
        // there had been no search (a claim is checked, a model that gave
        // up is seen by the loop guard).
        if answers == tried.len()
            && let Some(reply) = answer
        {
            return Ok(Searched::Reply {
                turn: first_turn,
                reply,
            });
        }
        let summary = summary(&tried);
        self.event(TaskEvent::Context {
            transformation: "search_summary".into(),
            detail: format!(
                "{} candidate(s), none passed; the model is told how each failed",
                tried.len()
            ),
        });
        self.history.push(Item::user(summary));
        Ok(Searched::Again)
    }

    /// The most a candidate may write in the whole format: the files the
    /// model has read, whole, and room for a few lines about them. Seen
    /// with a 1.5B model: a candidate rewrote a 20-line file's docstring
    /// line by line with a comment on each, 2,009 tokens, until the task's
    /// time ran out (two and a half minutes on two cores). `None` in the
    /// tools format, whose replies are calls.
    async fn candidate_cap(&self) -> Option<u32> {
        if !self.config.whole_files() {
            return None;
        }
        let mut tokens: u64 = 0;
        for (path, _) in self.reads.all() {
            if let Ok(file) = self.ports.workspace.read_file(&path).await {
                tokens = tokens.saturating_add(rein_models::tokens::count_text(&file.text));
            }
        }
        let cap = tokens.saturating_mul(5) / 4 + CAP_SLACK_TOKENS;
        Some(u32::try_from(cap).unwrap_or(u32::MAX))
    }

    /// The verifier's check of a candidate's files, until the task is
    /// cancelled.
    pub(super) async fn check_candidate(
        &self,
        files: &[(String, String)],
    ) -> Result<Option<CandidateCheck>, Stop> {
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
        tokio::select! {
            () = self.cancel.cancelled() => Err(Stop::new(StopCause::Cancelled, self.config.cancel_reason.text())),
            check = self.ports.verifier.check_candidate(cx, files) => Ok(check),
        }
    }

    /// What `reply` is as a candidate: read as an ordinary turn reads it
    /// (calls written as text, files written whole), without its events,
    /// and its changes made on the current text by the tools' own rules.
    async fn read_candidate(&self, reply: &ModelReply) -> Reading {
        if !is_finished(&reply.stop) {
            return Reading::Not(format!(
                "a reply that ended with {}",
                stop_name(&reply.stop)
            ));
        }
        if let Some(bad) = reply.bad_calls.first() {
            return Reading::Not(format!("a call to {} that cannot run", bad.name));
        }
        let mut reply = reply.clone();
        let mut written_wrong = false;
        if calls_of(&reply).is_empty() {
            match text_calls::find(&reply.text(), &self.config.tools) {
                text_calls::Found::Nothing => {}
                // In the whole format the file is the answer, even beside
                // a call written wrong, as an ordinary turn reads it (seen
                // with a 1.5B model: `write_file` as JSON in a fence, its
                // content in triple quotes, ended the search three times).
                text_calls::Found::Unusable(_) if self.config.whole_files() => {
                    written_wrong = true;
                }
                text_calls::Found::Unusable(_) => {
                    return Reading::Not("a tool call written wrong".into());
                }
                text_calls::Found::Calls { calls, prose } => {
                    with_calls_from_text(&mut reply, prose, calls, "candidate_text_");
                }
            }
        }
        if self.config.whole_files() {
            let read: Vec<String> = self.reads.all().into_iter().map(|(p, _)| p).collect();
            let mut found =
                whole_files::writes(&reply.text(), self.ports.workspace.as_ref(), &read).await;
            let test_written = self.take_test_writes(&mut found.calls);
            if !found.calls.is_empty() {
                let paths: Vec<String> = found
                    .calls
                    .iter()
                    .filter_map(|c| c.arguments["path"].as_str().map(str::to_owned))
                    .collect();
                without_writes_of(&mut reply, &paths);
                with_calls_from_text(&mut reply, found.prose, found.calls, "candidate_file_");
            } else if calls_of(&reply).is_empty() {
                if let Some(test) = test_written {
                    let under_test = self.likely_under_test().await;
                    return Reading::Broken(super::turn::test_file_nudge(
                        &test,
                        under_test.as_deref(),
                    ));
                }
                if !found.fragments.is_empty() {
                    return Reading::Broken(super::turn::fragment_nudge(&found.fragments));
                }
                if !found.unchanged.is_empty() {
                    return Reading::Unchanged;
                }
                if found.unplaced > 0 {
                    return Reading::Broken(
                        "its code block names no file, so it changes nothing".into(),
                    );
                }
            }
        }
        let calls: Vec<ToolCall> = calls_of(&reply).into_iter().flatten().collect();
        if calls.is_empty() && written_wrong {
            return Reading::Broken("a tool call written wrong, and no file written whole".into());
        }
        if calls.is_empty() {
            return Reading::Answer;
        }
        if let Some(other) = calls.iter().find(|c| {
            ![EditFile::NAME, WriteFile::NAME, CreateFile::NAME].contains(&c.name.as_str())
        }) {
            return Reading::Not(format!("it calls {}", other.name));
        }
        self.changes_of(&calls).await
    }

    /// The files `calls` (edits only) would leave, from the text as it is
    /// now, by the rules the tools apply when they run.
    pub(super) async fn changes_of(&self, calls: &[ToolCall]) -> Reading {
        let root = self.ports.workspace.root();
        // path → (text now, text after)
        let mut files: BTreeMap<String, (Option<String>, String)> = BTreeMap::new();
        for call in calls {
            let Some(tool) = self.config.tools.get(&call.name) else {
                return Reading::Not(format!("it calls {}", call.name));
            };
            let Some(named) = tool.predicted_edit(&call.arguments, None) else {
                return Reading::Broken(format!("its {} call has no path", call.name));
            };
            let path = match crate::paths::resolve(root, &named.path) {
                Ok(path) => path,
                Err(e) => return Reading::Broken(format!("{}: {e}", call.name)),
            };
            let now = match files.get(&path) {
                Some((_, after)) => Some(after.clone()),
                None => self
                    .ports
                    .workspace
                    .read_file(&path)
                    .await
                    .ok()
                    .map(|f| f.text),
            };
            if call.name != CreateFile::NAME && self.reads.get(&path).is_none() {
                return Reading::Broken(format!("{} of {path}, which was never read", call.name));
            }
            if call.name == CreateFile::NAME && now.is_some() {
                return Reading::Broken(format!("create_file of {path}, which exists"));
            }
            let after = tool
                .predicted_edit(&call.arguments, now.as_deref())
                .and_then(|p| p.after);
            let Some(after) = after else {
                return Reading::Broken(match call.name.as_str() {
                    "edit_file" => format!("its edit_file's old_text is not in {path} once"),
                    name => format!("its {name} of {path} cannot be made"),
                });
            };
            if call.name == WriteFile::NAME
                && let Some(why) = now
                    .as_deref()
                    .and_then(|now| crate::tools::write_file::not_whole(&path, now, &after))
            {
                return Reading::Broken(first_line(&why));
            }
            let before = files
                .remove(&path)
                .map_or_else(|| now.clone(), |(before, _)| before);
            files.insert(path, (before, after));
        }
        let changed: Vec<(String, String)> = files
            .into_iter()
            .filter(|(_, (before, after))| before.as_deref() != Some(after.as_str()))
            .map(|(path, (_, after))| (path, after))
            .collect();
        if changed.is_empty() {
            return Reading::Unchanged;
        }
        if let Some(why) = self.changes_the_test(&changed).await {
            return Reading::Broken(why);
        }
        Reading::Files(changed)
    }

    /// A fix-test candidate that changes the target test (as `edit_file`
    /// would refuse it, unless test edits are allowed).
    async fn changes_the_test(&self, changed: &[(String, String)]) -> Option<String> {
        let TaskKind::FixTest { path, name } = &self.task.kind else {
            return None;
        };
        if self.config.allow_test_edits {
            return None;
        }
        let (_, after) = changed.iter().find(|(p, _)| p == path)?;
        let lang = crate::testfind::lang_for_path(path)?;
        let now = self.ports.workspace.read_file(path).await.ok()?;
        let before = crate::testfind::test_lines(&now.text, lang, name);
        (before.is_some() && before != crate::testfind::test_lines(after, lang, name))
            .then(|| format!("it changes the test `{name}` in {path}"))
    }
}

/// Room in a candidate's output beyond the files it may rewrite: the
/// path lines, fences and a few sentences.
const CAP_SLACK_TOKENS: u64 = 400;

/// How much of a failed check one line keeps.
const LINE_CHARS: usize = 200;

/// A gap in one line: its first line and its last telling one (the
/// error), without the log's path.
fn one_line(gap: &str) -> String {
    let lines: Vec<&str> = gap
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("full log:"))
        .collect();
    let line = match (lines.first(), lines.last()) {
        (Some(first), Some(last)) if first != last => format!("{first} {last}"),
        (Some(first), _) => (*first).to_owned(),
        _ => "it did not pass".to_owned(),
    };
    if line.chars().count() > LINE_CHARS {
        format!("{}…", line.chars().take(LINE_CHARS).collect::<String>())
    } else {
        line
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_owned()
}

/// A later candidate's request: the same prompt state (its prefix still
/// cached), then how each earlier candidate failed, so that each is a
/// step of a search guided by the verifier, not the same draw again (seen
/// with a 1.5B model: four candidates at 0.4 to 1.2 each wrote the file
/// back unchanged, the same 204 tokens).
fn told_of(request: &mut ModelRequest, tried: &[Tried]) {
    let note = Part::text(summary(tried));
    match request.messages.last_mut() {
        Some(last) if last.role == Role::User => last.parts.push(note),
        _ => request.messages.push(Message {
            role: Role::User,
            parts: vec![note],
        }),
    }
}

/// What the model is told when no candidate passed: each in a line, not
/// its text (the history stays as it was). A later candidate is told the
/// same of those before it.
fn summary(tried: &[Tried]) -> String {
    let mut text = format!(
        "Rein sampled {} attempt(s) from this point and checked each in a scratch copy of the project (your files never saw them); none made the test pass:",
        tried.len()
    );
    for t in tried {
        let files = if t.files.is_empty() {
            String::new()
        } else {
            format!(" changed {};", t.files.join(", "))
        };
        text.push_str(&format!(
            "\n- attempt {} (temperature {}):{files} {}",
            t.number, t.temperature, t.why
        ));
    }
    text.push_str("\nDo not repeat these. Find what they missed, then write a different fix.");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gap_becomes_one_line_with_its_error() {
        let gap = "`test_total` still fails (exit 1):\n  File \"tests/test_cart.py\", line 8, in test_total\n    self.assertEqual(total(items), 30)\nAssertionError: 2 != 30\nfull log: .rein/artifacts/t/candidate-2.log";
        expect_test::expect!["`test_total` still fails (exit 1): AssertionError: 2 != 30"]
            .assert_eq(&one_line(gap));
        assert_eq!(one_line(""), "it did not pass");
        assert!(one_line(&"x".repeat(500)).chars().count() <= LINE_CHARS + 1);
    }

    #[test]
    fn the_summary_names_each_attempt_and_how_it_failed() {
        let tried = [
            Tried {
                number: 1,
                temperature: 0.0,
                files: vec!["cart.py".into()],
                why: "`test_total` still fails (exit 1): AssertionError: 2 != 30".into(),
            },
            Tried {
                number: 2,
                temperature: 0.7,
                files: vec!["cart.py".into()],
                why: "the same change as candidate 1".into(),
            },
        ];
        expect_test::expect![[r#"
            Rein sampled 2 attempt(s) from this point and checked each in a scratch copy of the project (your files never saw them); none made the test pass:
            - attempt 1 (temperature 0): changed cart.py; `test_total` still fails (exit 1): AssertionError: 2 != 30
            - attempt 2 (temperature 0.7): changed cart.py; the same change as candidate 1
            Do not repeat these. Find what they missed, then write a different fix."#]]
        .assert_eq(&summary(&tried));
    }
}
