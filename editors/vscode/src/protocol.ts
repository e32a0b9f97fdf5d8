// The shapes of Rein's own LSP messages (the server's `ext.rs` and
// DESIGN.md §4), as plain types and constants. No `vscode` import, so
// the pure modules that use them run in unit tests outside VS Code.

export type TaskState =
    | 'queued'
    | 'running'
    | 'waiting_user'
    | 'verifying'
    | 'succeeded'
    | 'unverified'
    | 'failed'
    | 'cancelled'
    | 'budget_exhausted';

/** Why a task stopped (`rein_protocol::StopCause`, snake_case). */
export type StopCause =
    | 'verified'
    | 'already_met'
    | 'answered'
    | 'unproven'
    | 'refused'
    | 'model_failed'
    | 'context_full'
    | 'stuck'
    | 'gave_up'
    | 'budget'
    | 'cancelled'
    | 'rejected'
    | 'waiting_for_user'
    | 'unanswered_review'
    | 'internal';

/** What a task waits for the user to do, in the middle of its run. */
export interface WaitingFor {
    kind: 'review' | 'approval' | 'answer';
    /** What it is about: a path, a command. */
    detail: string;
}

/** `rein/taskStatus`, sent on every state change of a task. */
export interface TaskStatus {
    taskId: string;
    state: TaskState;
    reason?: string | null;
    turn: number;
    maxTurns: number;
    inputTokens: number;
    outputTokens: number;
    /** What the priced calls cost. */
    costUsd: number;
    /** Calls with no known price: the real cost is unknown (or more). */
    unpricedCalls?: number;
    /** With `state: 'waiting_user'` while a review, an approval or an
     * answer is pending; absent once the task goes on (or when it stopped
     * for the user, after a crash). */
    waitingFor?: WaitingFor | null;
    /** On the final status: why the task stopped (the server's
     * `StopCause`), for what the notification offers. */
    cause?: StopCause | null;
    /** On the final status: the model's last words (untrusted text). */
    summary?: string | null;
    /** While it runs: what it does now, in the user's words ("running
     * tests", "waiting for you · review cart.py"). Untrusted (it names the
     * model's arguments), one clean line: shown as plain text. */
    step?: string | null;
    /** The model's latest line as it streams: untrusted, one clean line
     * of at most 160 characters, redacted. Plain text, never Markdown. */
    said?: string | null;
}

/** `rein/reviewEdit` (server → client): a change to review. Lines are
 * 0-based. `original: null` is a new file. */
export interface ReviewParams {
    taskId: string;
    reviewId: string;
    uri: string;
    path: string;
    label: string;
    summary: string;
    /** The model's reason, in its words (untrusted text, may be empty). */
    reason: string;
    original: string | null;
    proposed: string;
    hunks: ReviewHunk[];
}

export interface ReviewHunk {
    originalStart: number;
    originalLines: number;
    proposedStart: number;
    proposedLines: number;
}

/** The answer to `rein/reviewEdit`. */
export interface ReviewAnswer {
    decision: 'accept' | 'reject';
    /** With `accept`: the hunks kept, by index (absent: all). */
    hunks?: number[];
    /** With `reject`: what the user said, for the model. */
    comment?: string;
}

export interface EvidenceFile {
    path: string;
    contentHash: string;
}

/** One check the verifier ran. */
export interface Evidence {
    check: string;
    command: string;
    exitCode: number | null;
    durationMs: number;
    files: EvidenceFile[];
    logPath?: string | null;
    failures: string[];
}

/** `rein/verification`, sent when the model claimed to be done. */
export interface Verification {
    taskId: string;
    passed: boolean;
    detail: string;
    evidence: Evidence[];
}

/** `rein/saveDocuments`: the server asks us to save these buffers. */
export interface SaveDocumentsParams {
    uris: string[];
}

export interface SaveDocumentsResult {
    saved: string[];
    notSaved: { uri: string; reason: string }[];
}

export interface Position {
    line: number;
    character: number;
}

export interface Range {
    start: Position;
    end: Position;
}

/** The server's `workspace/executeCommand` commands (one object argument each). */
export const serverCommands = {
    fixTest: 'rein.fixTest',
    runTask: 'rein.runTask',
    cancelTask: 'rein.cancelTask',
    resumeTask: 'rein.resumeTask',
    answer: 'rein.answer',
    trustWorkspace: 'rein.trustWorkspace',
    undoTask: 'rein.undoTask',
} as const;

/**
 * The key of `initializationOptions` where the editor states its own
 * workspace trust (VS Code's Workspace Trust). The server takes it from
 * `initialize` only, never from `workspace/configuration`, which a
 * repository's `.vscode/settings.json` could fill.
 */
export const WORKSPACE_TRUSTED_KEY = 'workspaceTrusted';

export interface FixTestArgs {
    uri: string;
    position: Position;
    testName: string;
}

export interface RunTaskArgs {
    instruction: string;
    uri?: string;
    range?: Range;
}

/** What `rein.fixTest`, `rein.runTask` and `rein.resumeTask` answer. */
export interface TaskStarted {
    taskId: string;
}

const terminal: ReadonlySet<TaskState> = new Set<TaskState>([
    'succeeded',
    'unverified',
    'failed',
    'cancelled',
    'budget_exhausted',
]);

/** Whether a task in this state is over (nothing more will happen to it). */
export function isTerminal(state: TaskState): boolean {
    return terminal.has(state);
}
