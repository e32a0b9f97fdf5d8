//! In-memory implementations of the loop's ports, for tests and dry runs:
//! a workspace of versioned buffers (where "the user" can type between a
//! read and an edit), a scripted command runner, a scripted approver and a
//! recording progress sink.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use grep_matcher::Matcher;
use tokio_util::sync::CancellationToken;

use crate::exec::{CommandResult, CommandSpec, Exec, ExecError};
use crate::ports::{
    ApprovalDecision, Approver, Artifacts, CommandApproval, ProgressSink, TaskEvent,
};
use crate::task::TaskId;
use crate::workspace::{
    CreateRequest, EditOutcome, EditRequest, FileRead, Fitted, Listing, ReadVersion, SearchHit,
    SearchResult, Workspace, WorkspaceError,
};

/// What the user does with a proposed change.
pub type EditReview = Box<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// A workspace held in memory: each file is an "open buffer" with an LSP-
/// style version that goes up with every change.
pub struct MemoryWorkspace {
    root: PathBuf,
    files: Mutex<BTreeMap<String, (String, i32)>>,
    /// Called with the path of each change that needs confirmation:
    /// `Err(reason)` rejects it. Default: accept.
    review: Mutex<EditReview>,
    /// Set: every change that needs confirmation goes unanswered for this
    /// long (the review timed out), before `review` is asked.
    unanswered: Mutex<Option<std::time::Duration>>,
    proposals: Mutex<Vec<String>>,
    flushes: AtomicU32,
}

impl MemoryWorkspace {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            files: Mutex::new(BTreeMap::new()),
            review: Mutex::new(Box::new(|_| Ok(()))),
            unanswered: Mutex::new(None),
            proposals: Mutex::new(Vec::new()),
            flushes: AtomicU32::new(0),
        }
    }

    pub fn with_file(self, path: &str, text: &str) -> Self {
        self.set(path, text);
        self
    }

    /// Sets a file's text as the user would, bumping its version.
    pub fn set(&self, path: &str, text: &str) {
        if let Ok(mut files) = self.files.lock() {
            let version = files.get(path).map_or(1, |(_, v)| v + 1);
            files.insert(path.to_owned(), (text.to_owned(), version));
        }
    }

    pub fn text(&self, path: &str) -> Option<String> {
        self.files.lock().ok()?.get(path).map(|(t, _)| t.clone())
    }

    /// Every path that holds a file, sorted.
    pub fn paths(&self) -> Vec<String> {
        self.files
            .lock()
            .map(|f| f.keys().cloned().collect())
            .unwrap_or_default()
    }

    pub fn version(&self, path: &str) -> Option<i32> {
        self.files.lock().ok()?.get(path).map(|(_, v)| *v)
    }

    /// Decides what the user does with each proposed change.
    pub fn review_with(&self, review: impl Fn(&str) -> Result<(), String> + Send + Sync + 'static) {
        if let Ok(mut r) = self.review.lock() {
            *r = Box::new(review);
        }
    }

    /// Leaves the review of every change unanswered (`None`: answered by
    /// `review_with` again), as if the user were away for `waited`.
    pub fn leave_reviews_unanswered(&self, waited: Option<std::time::Duration>) {
        if let Ok(mut u) = self.unanswered.lock() {
            *u = waited;
        }
    }

    /// Paths of the changes proposed, in order.
    pub fn proposals(&self) -> Vec<String> {
        self.proposals.lock().map(|p| p.clone()).unwrap_or_default()
    }

    pub fn flushes(&self) -> u32 {
        self.flushes.load(Ordering::SeqCst)
    }

    fn version_of(text: &str, version: i32) -> ReadVersion {
        ReadVersion {
            buffer_version: Some(version),
            hash: rein_text::ContentHash::of_str(text),
        }
    }

    fn review(&self, path: &str, needs_confirmation: bool) -> Result<(), EditOutcome> {
        if let Ok(mut p) = self.proposals.lock() {
            p.push(path.to_owned());
        }
        if !needs_confirmation {
            return Ok(());
        }
        if let Some(waited) = self.unanswered.lock().ok().and_then(|u| *u) {
            return Err(EditOutcome::NoAnswer { waited });
        }
        self.review
            .lock()
            .map_err(|_| "review unavailable".to_owned())
            .and_then(|r| r(path))
            .map_err(|reason| EditOutcome::Rejected { reason })
    }

    fn suggestions(&self, path: &str) -> Vec<String> {
        let files = self
            .files
            .lock()
            .map(|f| f.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default();
        let mut scored: Vec<(f64, String)> = files
            .into_iter()
            .map(|f| (strsim::normalized_levenshtein(&f, path), f))
            .filter(|(s, _)| *s > 0.5)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.into_iter().take(3).map(|(_, f)| f).collect()
    }
}

fn in_dir(path: &str, dir: &str) -> bool {
    dir.is_empty()
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

fn glob_matches(glob: Option<&str>, path: &str) -> bool {
    let Some(glob) = glob else { return true };
    let pattern = if glob.contains('/') {
        glob.to_owned()
    } else {
        format!("**/{glob}")
    };
    globset::GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher().is_match(path))
        .unwrap_or(false)
}

#[async_trait]
impl Workspace for MemoryWorkspace {
    fn root(&self) -> &Path {
        &self.root
    }

    async fn read_file(&self, path: &str) -> Result<FileRead, WorkspaceError> {
        let found = self.files.lock().ok().and_then(|f| f.get(path).cloned());
        match found {
            Some((text, version)) => Ok(FileRead {
                path: path.to_owned(),
                version: Self::version_of(&text, version),
                text,
            }),
            None => Err(WorkspaceError::NotFound {
                path: path.to_owned(),
                suggestions: self.suggestions(path),
            }),
        }
    }

    async fn list_files(
        &self,
        dir: &str,
        glob: Option<&str>,
        limit: usize,
    ) -> Result<Listing, WorkspaceError> {
        let files = self
            .files
            .lock()
            .map(|f| f.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default();
        let matching: Vec<String> = files
            .into_iter()
            .filter(|p| in_dir(p, dir) && !p.starts_with(".rein/") && glob_matches(glob, p))
            .collect();
        let truncated = matching.len().saturating_sub(limit);
        Ok(Listing {
            paths: matching.into_iter().take(limit).collect(),
            truncated,
        })
    }

    async fn search(
        &self,
        pattern: &str,
        dir: &str,
        glob: Option<&str>,
        limit: usize,
    ) -> Result<SearchResult, WorkspaceError> {
        let matcher =
            grep_regex::RegexMatcher::new(pattern).map_err(|e| WorkspaceError::BadPattern {
                pattern: pattern.to_owned(),
                reason: e.to_string(),
            })?;
        let files = self.files.lock().map(|f| f.clone()).unwrap_or_default();
        let mut hits = Vec::new();
        for (path, (text, _)) in files
            .iter()
            .filter(|(p, _)| in_dir(p, dir) && glob_matches(glob, p))
        {
            for (n, line) in text.lines().enumerate() {
                if matcher.is_match(line.as_bytes()).unwrap_or(false) {
                    hits.push(SearchHit {
                        path: path.clone(),
                        line: n as u64 + 1,
                        text: line.to_owned(),
                    });
                }
            }
        }
        let truncated = hits.len().saturating_sub(limit);
        hits.truncate(limit);
        Ok(SearchResult { hits, truncated })
    }

    async fn edit_file(&self, request: EditRequest) -> Result<EditOutcome, WorkspaceError> {
        let current = self.read_file(&request.path).await?;
        let Fitted {
            applied,
            rebased_from,
        } = match request.fit(&current.text, &current.version, &request.path) {
            Ok(fitted) => fitted,
            Err(unfit) => return unfit.answer(),
        };
        if let Err(outcome) = self.review(&request.path, request.needs_confirmation) {
            return Ok(outcome);
        }
        self.set(&request.path, &applied.text);
        let version = self.read_file(&request.path).await?.version;
        Ok(EditOutcome::Applied {
            version,
            rebased_from,
        })
    }

    async fn create_file(&self, request: CreateRequest) -> Result<EditOutcome, WorkspaceError> {
        if self.text(&request.path).is_some() {
            return Err(WorkspaceError::AlreadyExists { path: request.path });
        }
        if let Err(outcome) = self.review(&request.path, request.needs_confirmation) {
            return Ok(outcome);
        }
        self.set(&request.path, &request.content);
        Ok(EditOutcome::Applied {
            version: self.read_file(&request.path).await?.version,
            rebased_from: None,
        })
    }

    async fn flush_to_disk(&self) -> Result<(), WorkspaceError> {
        self.flushes.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    async fn remove_file(
        &self,
        path: &str,
        expected: &ReadVersion,
    ) -> Result<EditOutcome, WorkspaceError> {
        let current = self.read_file(path).await?;
        if current.version.hash != expected.hash {
            return Ok(EditOutcome::Stale {
                current: current.version,
            });
        }
        if let Ok(mut files) = self.files.lock() {
            files.remove(path);
        }
        Ok(EditOutcome::Applied {
            version: ReadVersion::of_disk(""),
            rebased_from: None,
        })
    }
}

#[async_trait]
impl Artifacts for MemoryWorkspace {
    async fn write(&self, rel_path: &str, content: &str) -> Result<(), String> {
        self.set(rel_path, content);
        Ok(())
    }

    async fn write_bytes(&self, rel_path: &str, bytes: &[u8]) -> Result<(), String> {
        // Kept as text (lossily) so tests can look at it like any file.
        self.set(rel_path, &String::from_utf8_lossy(bytes));
        Ok(())
    }
}

/// Runs nothing: each command's result comes from a function of its spec.
pub struct ScriptedExec {
    script: Box<dyn Fn(&CommandSpec) -> CommandResult + Send + Sync>,
    commands: Mutex<Vec<String>>,
    /// Takes commands with a [`crate::exec::Layer`] (the script sees it in
    /// the spec).
    lays_files: bool,
}

impl ScriptedExec {
    pub fn new(script: impl Fn(&CommandSpec) -> CommandResult + Send + Sync + 'static) -> Self {
        Self {
            script: Box::new(script),
            commands: Mutex::new(Vec::new()),
            lays_files: false,
        }
    }

    /// Honours [`CommandSpec::layer`], as the sandbox does where it has
    /// private layers: the script is given the spec with its layer.
    pub fn laying_files(mut self) -> Self {
        self.lays_files = true;
        self
    }

    /// The commands run so far.
    pub fn commands(&self) -> Vec<String> {
        self.commands.lock().map(|c| c.clone()).unwrap_or_default()
    }
}

#[async_trait]
impl Exec for ScriptedExec {
    async fn run(
        &self,
        spec: CommandSpec,
        cancel: CancellationToken,
    ) -> Result<CommandResult, ExecError> {
        if let Ok(mut c) = self.commands.lock() {
            c.push(spec.command.clone());
        }
        if cancel.is_cancelled() {
            return Ok(CommandResult {
                cancelled: true,
                log_path: spec.log_path,
                ..CommandResult::default()
            });
        }
        if spec.layer.is_some() && !self.lays_files {
            return Err(ExecError::Spawn {
                command: spec.command,
                reason: "no private layer here".into(),
            });
        }
        let mut result = (self.script)(&spec);
        result.log_path = spec.log_path;
        Ok(result)
    }

    fn lays_files(&self) -> bool {
        self.lays_files
    }
}

/// A passing or failing result, as a test runner would report it.
pub fn command_result(exit_code: i32, output: &str, failures: &[&str]) -> CommandResult {
    let tail: Vec<String> = output.lines().map(str::to_owned).collect();
    CommandResult {
        exit_code: Some(exit_code),
        total_lines: tail.len() as u64,
        total_bytes: output.len() as u64,
        tail,
        failures: failures.iter().map(|f| (*f).to_owned()).collect(),
        tally: crate::testing::tally::Tally::of(output),
        passes: crate::testing::passes::Passes::of(output),
        duration: std::time::Duration::from_millis(120),
        ..CommandResult::default()
    }
}

/// Answers approvals and questions from queues; records what was asked.
#[derive(Default)]
pub struct ScriptedApprover {
    decisions: Mutex<VecDeque<ApprovalDecision>>,
    answers: Mutex<VecDeque<String>>,
    asked: Mutex<Vec<String>>,
    /// Cancelled as a command is asked about: the user stops the task
    /// while (or just after) answering.
    cancel_on_ask: Option<tokio_util::sync::CancellationToken>,
}

impl ScriptedApprover {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn decide(self, decision: ApprovalDecision) -> Self {
        if let Ok(mut d) = self.decisions.lock() {
            d.push_back(decision);
        }
        self
    }

    pub fn answer(self, answer: &str) -> Self {
        if let Ok(mut a) = self.answers.lock() {
            a.push_back(answer.to_owned());
        }
        self
    }

    /// Cancels `token` when a command is asked about, then answers as
    /// scripted.
    pub fn cancel_on_ask(mut self, token: tokio_util::sync::CancellationToken) -> Self {
        self.cancel_on_ask = Some(token);
        self
    }

    /// Commands and questions put to the user, in order.
    pub fn asked(&self) -> Vec<String> {
        self.asked.lock().map(|a| a.clone()).unwrap_or_default()
    }
}

#[async_trait]
impl Approver for ScriptedApprover {
    /// With nothing scripted, the user says no.
    async fn approve_command(&self, request: &CommandApproval) -> ApprovalDecision {
        if let Ok(mut a) = self.asked.lock() {
            a.push(format!("run: {}", request.command));
        }
        if let Some(token) = &self.cancel_on_ask {
            token.cancel();
        }
        self.decisions
            .lock()
            .ok()
            .and_then(|mut d| d.pop_front())
            .unwrap_or(ApprovalDecision::Deny)
    }

    async fn ask_user(&self, _task: &TaskId, question: &str) -> Option<String> {
        if let Ok(mut a) = self.asked.lock() {
            a.push(format!("ask: {question}"));
        }
        self.answers.lock().ok().and_then(|mut a| a.pop_front())
    }
}

/// Keeps every event.
#[derive(Default)]
pub struct RecordingProgress {
    events: Mutex<Vec<TaskEvent>>,
}

impl RecordingProgress {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub fn events(&self) -> Vec<TaskEvent> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }
}

impl ProgressSink for RecordingProgress {
    fn event(&self, _task: &TaskId, event: &TaskEvent) {
        if let Ok(mut e) = self.events.lock() {
            e.push(event.clone());
        }
    }
}
