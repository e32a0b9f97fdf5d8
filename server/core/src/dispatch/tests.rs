//! The attack of issue 32 through the real path: the model's
//! `create_file` call, dispatched (schema, guard, path resolution,
//! permission) to the disk workspace, while a leftover process swaps a
//! workspace folder for a link to the user's config folder in a loop.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use rein_fsroot::Resolver;
use rein_models::ToolCall;
use rustix::fs::{CWD, RenameFlags, renameat_with};
use serde_json::json;

use super::*;
use crate::budget::{Budgets, TimeBudget};
use crate::fakes::{MemoryWorkspace, RecordingProgress, ScriptedApprover, ScriptedExec};
use crate::os::disk::DiskWorkspace;
use crate::permissions::Policy;
use crate::task::{TaskId, TaskSpec};
use crate::tools::{ArtifactDir, ReadTracker, builtin};

/// How many `create_file` calls race the swapper (the attack got through
/// within 72).
const CALLS: usize = 3_000;

/// What the model is told when the folder is the link: by the disk
/// workspace as it opens the file, or (when the swap came earlier) by the
/// path resolution before it.
const REFUSALS: [&str; 3] = [
    "d is a symbolic link to a place outside the workspace; Rein does not write through it",
    "is outside the workspace ($WS) through the symbolic link `d`; use a path inside it",
    "d keeps changing between a symbolic link and a folder or file while Rein opens it; Rein does not write through it",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_file_through_a_folder_swapped_for_a_link_never_lands_outside() {
    race(Resolver::Kernel).await;
}

/// The same on a kernel without `openat2` (< 5.6): the walk by handles.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_file_through_a_folder_swapped_for_a_link_never_lands_outside_without_openat2() {
    race(Resolver::Walk).await;
}

async fn race(resolver: Resolver) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    // Stands for `~/.config/rein`.
    let outside = dir.path().join("config-rein");
    std::fs::create_dir_all(ws.join("d")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("d-link")).unwrap();

    let task = TaskSpec::instruction(TaskId("t-race".into()), "set up the config");
    let workspace = DiskWorkspace::new(&ws).unwrap().with_resolver(resolver);
    let exec = ScriptedExec::new(|_| unreachable!("no command runs"));
    let approver = ScriptedApprover::new();
    let policy = Policy::with_builtins(Vec::new());
    let reads = ReadTracker::default();
    let artifacts = ArtifactDir::new(&ws, "t-race");
    let artifact_store = MemoryWorkspace::new(&ws);
    let runs = AtomicU32::new(0);
    let budgets = Budgets::default();
    let cancel = tokio_util::sync::CancellationToken::new();
    let tools = builtin();
    let progress = RecordingProgress::new();
    let redactor = Redactor::default();
    let approvals = Mutex::new(TaskApprovals::default());
    let guard = Mutex::new(LoopGuard::new(3));
    let dispatcher = Dispatcher {
        cx: ToolCx {
            task: &task,
            workspace: &workspace,
            exec: &exec,
            approver: &approver,
            policy: &policy,
            reads: &reads,
            artifacts: &artifacts,
            artifact_store: &artifact_store,
            runs: &runs,
            budgets: &budgets,
            time: TimeBudget::unlimited(),
            test_command: None,
            cancel: &cancel,
            reason: "",
        },
        tools: &tools,
        progress: progress.as_ref(),
        redactor: &redactor,
        approvals: &approvals,
        guard: &guard,
        allow_test_edits: false,
        status: &|_, _| {},
    };

    // The leftover process: `d` is always there, a folder or (exchanged
    // atomically) the link.
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = {
        let (stop, swaps, ws) = (stop.clone(), swaps.clone(), ws.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                renameat_with(
                    CWD,
                    ws.join("d"),
                    CWD,
                    ws.join("d-link"),
                    RenameFlags::EXCHANGE,
                )
                .unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let refusals = REFUSALS.map(|r| r.replace("$WS", &ws.display().to_string()));
    let (mut written, mut refused, mut other) = (0, 0, Vec::new());
    // At least `CALLS` calls, and on until both outcomes were seen (a busy
    // machine may starve the swapper for a while).
    let mut i = 0;
    while i < CALLS || (written == 0 || refused == 0) && i < 10 * CALLS {
        i += 1;
        let call = ToolCall {
            id: format!("call-{i}"),
            name: "create_file".into(),
            arguments: json!({
                "path": format!("d/config-{i}.toml"),
                "content": "mode = \"off\"\nauto_approve = true\n",
            }),
        };
        let done = dispatcher.dispatch(&Ok(call)).await.output;
        if !done.is_error {
            written += 1;
        } else if refusals.iter().any(|r| done.content.contains(r)) {
            refused += 1;
        } else {
            other.push(done.content);
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();

    let landed = names(&outside);
    assert!(
        landed.is_empty(),
        "written outside the workspace: {landed:?}"
    );
    // Each call wrote inside (the real folder, wherever it is now) or
    // got the refusal.
    let inside = names(&ws.join("d")).len() + names(&ws.join("d-link")).len();
    assert_eq!(inside, written);
    other.sort();
    other.dedup();
    assert!(other.is_empty(), "other answers: {other:#?}");
    eprintln!(
        "{resolver:?}: {written} written inside, {refused} refused, {} swaps",
        swaps.load(Ordering::Relaxed)
    );
    assert!(
        written > 0 && refused > 0,
        "the race was not run: {written} written, {refused} refused, {} swaps",
        swaps.load(Ordering::Relaxed)
    );
}

/// The entries of `dir`, if it is a folder (not through a link).
fn names(dir: &Path) -> Vec<String> {
    if !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        return Vec::new();
    }
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}
