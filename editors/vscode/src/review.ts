// The extension's own review of a proposed edit (`rein/reviewEdit`): the
// real diff (the text as it is now → the proposal) in a diff editor, with
// the actions in words above the change (CodeLens: Accept, Keep Some…,
// Reject…, Accept All Remaining Edits of This Task), where the edit stands
// ("edit 2 of this task", "change 1 of 3") and the model's reason, shown
// there only; the same actions as icons in the diff's title bar and in the
// status bar menu. Nothing is applied here: the answer goes to the server,
// which applies what was accepted.
//
// "Accept all remaining edits of this task" (Neovim's `A`) answers the
// task's later reviews at once, without a diff; each is said in the status
// bar and the tasks channel, and the choice ends with the task.
//
// A review the server withdraws (`$/cancelRequest`: the task was cancelled
// or ended, the wait timed out, the file changed under it) closes itself;
// an Accept that comes after that changes nothing, and the user is told.

import * as vscode from 'vscode';
import * as lc from 'vscode-languageclient/node';

import { commandIds } from './command_ids';
import { oneLine } from './plain_text';
import type { ReviewAnswer, ReviewParams } from './protocol';
import {
    firstChangedLine,
    hunkItems,
    inert,
    isReviewParams,
    keptAnswer,
    REVIEW_SCHEME,
    reviewLenses,
    reviewNotice,
    reviewTitle,
} from './review_model';

export const reviewEdit = new lc.RequestType<ReviewParams, ReviewAnswer, void>('rein/reviewEdit');

interface Pending {
    params: ReviewParams;
    original: vscode.Uri;
    proposed: vscode.Uri;
    /** Which of its task's edits this is (1: the first). */
    ordinal: number;
    answer: (answer: ReviewAnswer) => void;
    /** Ends the notification. */
    done: () => void;
}

export class Reviews implements vscode.Disposable, vscode.TextDocumentContentProvider, vscode.CodeLensProvider {
    private readonly pending = new Map<string, Pending>();
    /** Reviews withdrawn or answered, by id: a late action on one is told so. */
    private readonly closed = new Map<string, string>();
    /** The two sides of each open review (they never change). */
    private readonly texts = new Map<string, string>();
    private readonly disposables: vscode.Disposable[];
    /** How many edits each running task has put to review so far. */
    private readonly counts = new Map<string, number>();
    /** Tasks whose remaining edits the user accepted in advance. */
    private readonly acceptingRest = new Set<string>();
    private readonly lensesChanged = new vscode.EventEmitter<void>();
    readonly onDidChangeCodeLenses = this.lensesChanged.event;

    constructor(
        private readonly log: vscode.LogOutputChannel,
        /** Called when a review opens or closes (the status bar shows it). */
        private readonly onChange: () => void,
        /** Called with what became of a review, for the tasks channel. */
        private readonly onOutcome: (p: ReviewParams, outcome: string) => void = () => {},
    ) {
        this.disposables = [
            vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, this),
            // The proposed side of the diff (the original side has no lenses).
            vscode.languages.registerCodeLensProvider({ scheme: REVIEW_SCHEME }, this),
            this.lensesChanged,
        ];
    }

    provideTextDocumentContent(uri: vscode.Uri): string {
        return this.texts.get(uri.toString()) ?? '';
    }

    /** The actions, where the edit stands and why, above the change. */
    provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
        const id = reviewIdOf(document.uri);
        const p = id === undefined ? undefined : this.pending.get(id);
        if (!p || p.proposed.toString() !== document.uri.toString()) return [];
        const last = Math.max(0, document.lineCount - 1);
        return reviewLenses(p.params, p.ordinal).map((lens) => {
            const range = new vscode.Range(Math.min(lens.line, last), 0, Math.min(lens.line, last), 0);
            // A lens without a command id is drawn as a plain label.
            const command = lens.action ? lensCommands[lens.action] : '';
            return new vscode.CodeLens(range, {
                title: lens.title,
                command,
                tooltip: lens.tooltip,
                arguments: lens.action ? [{ reviewId: p.params.reviewId }] : undefined,
            });
        });
    }

    /** Handles `rein/reviewEdit`: resolves with the user's answer. */
    review(raw: unknown, token: vscode.CancellationToken): Promise<ReviewAnswer> {
        if (!isReviewParams(raw)) {
            this.log.error(`rein/reviewEdit with unreadable params: ${oneLine(JSON.stringify(raw) ?? '', 300)}`);
            return Promise.resolve({ decision: 'reject', comment: 'the editor could not read the proposal' });
        }
        const params = raw;
        const id = params.reviewId;
        const ordinal = (this.counts.get(params.taskId) ?? 0) + 1;
        this.counts.set(params.taskId, ordinal);
        if (this.acceptingRest.has(params.taskId)) return Promise.resolve(this.acceptedInAdvance(params, ordinal));
        const side = (which: string) =>
            vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${encodeURIComponent(id)}/${which}/${params.path}` });
        const original = side('current');
        const proposed = side('proposed');
        this.texts.set(original.toString(), params.original ?? '');
        this.texts.set(proposed.toString(), params.proposed);
        return new Promise<ReviewAnswer>((resolve) => {
            let done = () => {};
            const ended = new Promise<void>((r) => (done = r));
            this.pending.set(id, { params, original, proposed, ordinal, answer: resolve, done });
            token.onCancellationRequested(() => this.withdraw(id));
            const notice = reviewNotice(params, ordinal);
            void vscode.window.withProgress(
                { location: vscode.ProgressLocation.Notification, title: notice.title },
                async (progress) => {
                    progress.report({ message: notice.message });
                    await ended;
                },
            );
            this.onChange();
            this.lensesChanged.fire();
            void this.show(id).catch((error) => this.log.error(`Showing Rein's proposed edit: ${String(error)}`));
        });
    }

    /** A review of a task whose remaining edits the user accepted: no
     * diff, only a word in the status bar and the tasks channel. */
    private acceptedInAdvance(p: ReviewParams, ordinal: number): ReviewAnswer {
        const what = `Rein applied edit ${ordinal} of its task to ${inert(p.path, 200)} (you accepted all of the task’s remaining edits)`;
        this.log.info(what);
        this.onOutcome(p, 'accepted without review (you accepted all remaining edits of this task)');
        // Gone by itself after a while: these are news, not questions.
        vscode.window.setStatusBarMessage(`$(check) ${what}`, 10_000);
        return { decision: 'accept' };
    }

    /** The pending reviews, oldest first. */
    all(): ReviewParams[] {
        return [...this.pending.values()].map((p) => p.params);
    }

    forTask(taskId: string): ReviewParams | undefined {
        return this.all().find((p) => p.taskId === taskId);
    }

    /** Opens (again) the diff of a pending review. */
    async show(id: string): Promise<void> {
        const p = this.pending.get(id);
        if (!p) return this.tellClosed(id);
        const line = firstChangedLine(p.params);
        await vscode.commands.executeCommand('vscode.diff', p.original, p.proposed, reviewTitle(p.params), {
            preview: false,
            selection: new vscode.Range(line, 0, line, 0),
        } satisfies vscode.TextDocumentShowOptions);
    }

    /** Accepts the whole edit. */
    accept(id: string): void {
        this.finish(id, { decision: 'accept' });
    }

    /** Accepts the edit and every later one of its task, until it ends
     * (Neovim's `A`). Other reviews of that task already open are accepted
     * too: the user said "all remaining". */
    acceptRest(id: string): void {
        const p = this.pending.get(id);
        if (!p) return this.tellClosed(id);
        const task = p.params.taskId;
        this.acceptingRest.add(task);
        for (const other of this.all().filter((r) => r.taskId === task)) this.finish(other.reviewId, { decision: 'accept' });
        // Said where it does not pile up: each later edit is said there too.
        vscode.window.setStatusBarMessage('$(check-all) Rein applies the rest of this task’s edits without asking, until it ends', 10_000);
    }

    /** The task ended: its "accept all" and its edit count end with it. */
    taskEnded(taskId: string): void {
        this.acceptingRest.delete(taskId);
        this.counts.delete(taskId);
    }

    /** Whether the user accepted all remaining edits of `taskId`. */
    acceptsRestOf(taskId: string): boolean {
        return this.acceptingRest.has(taskId);
    }

    /** Rejects it, with what the user said (for the model), if anything. */
    reject(id: string, comment?: string): void {
        const words = comment?.trim();
        this.finish(id, words ? { decision: 'reject', comment: words } : { decision: 'reject' });
    }

    /** Lets the user keep some of the changes. */
    async choose(id: string): Promise<void> {
        const p = this.pending.get(id);
        if (!p) return this.tellClosed(id);
        const items = hunkItems(p.params).map((h) => ({ ...h, picked: true }));
        const picked = await vscode.window.showQuickPick(items, {
            title: `Keep which of Rein's changes to ${p.params.path}?`,
            placeHolder: 'Untick the changes to leave out, then press Enter',
            canPickMany: true,
            ignoreFocusOut: true,
        });
        if (!picked) return;
        const answer = keptAnswer(p.params, picked.map((i) => i.index));
        if (answer) return this.finish(id, answer);
        // Applying nothing is a rejection: it must never happen by accident.
        const reject = 'Reject the Edit';
        const choice = await vscode.window.showWarningMessage(
            `No change is kept: reject Rein's edit to ${p.params.path}?`,
            { modal: true },
            reject,
        );
        if (choice === reject) this.reject(id);
    }

    /** The review of the active diff editor, else the only one pending. */
    current(uri?: vscode.Uri): string | undefined {
        const active = uri ?? activeReviewUri();
        if (active?.scheme === REVIEW_SCHEME) return reviewIdOf(active);
        const all = this.all();
        return all.length === 1 ? all[0].reviewId : undefined;
    }

    /** The server gave up on every review (it stopped). */
    withdrawAll(): void {
        for (const id of [...this.pending.keys()]) this.withdraw(id);
    }

    /** The task ended: its review is over whatever the server said. */
    withdrawReview(id: string): void {
        this.withdraw(id);
    }

    private withdraw(id: string): void {
        const p = this.pending.get(id);
        if (!p) return;
        this.log.info(`Rein withdrew its proposed edit to ${p.params.path} (${id})`);
        this.onOutcome(p.params, 'withdrawn by Rein');
        // A withdrawn edit is shown again as the same edit (the file changed
        // under it, or nobody answered and the task resumes): not counted.
        const n = this.counts.get(p.params.taskId);
        if (n !== undefined) this.counts.set(p.params.taskId, Math.max(0, n - 1));
        this.close(id, p, 'Rein withdrew that proposal');
    }

    private finish(id: string, answer: ReviewAnswer): void {
        const p = this.pending.get(id);
        if (!p) return this.tellClosed(id);
        p.answer(answer);
        this.onOutcome(p.params, outcomeWords(p.params, answer));
        this.close(id, p, `That proposal was already ${answer.decision === 'accept' ? 'accepted' : 'rejected'}`);
        if (answer.decision === 'accept') {
            // Where the change lands: the user sees the file, not the test.
            const line = firstChangedLine(p.params);
            void vscode.window
                .showTextDocument(vscode.Uri.parse(p.params.uri), { preview: false, selection: new vscode.Range(line, 0, line, 0) })
                .then(undefined, (error) => this.log.warn(`Opening ${p.params.path}: ${String(error)}`));
        }
    }

    private close(id: string, p: Pending, why: string): void {
        this.pending.delete(id);
        this.closed.set(id, `${why}; nothing more was changed.`);
        p.done();
        this.lensesChanged.fire();
        void closeTabs(p.proposed);
        this.texts.delete(p.original.toString());
        this.texts.delete(p.proposed.toString());
        this.onChange();
    }

    private tellClosed(id: string): void {
        const why = this.closed.get(id) ?? 'Rein is not waiting for that review any more; nothing was changed.';
        void vscode.window.showInformationMessage(`Rein: ${why}`);
    }

    dispose(): void {
        this.withdrawAll();
        for (const d of this.disposables) d.dispose();
    }
}

/** "accepted: change cart.py: 1 line changed", "rejected (use Decimal)". */
function outcomeWords(p: ReviewParams, answer: ReviewAnswer): string {
    if (answer.decision === 'reject') return answer.comment ? `rejected (${oneLine(answer.comment, 200)})` : 'rejected';
    if (answer.hunks) return `accepted ${answer.hunks.length} of ${p.hunks.length} changes`;
    return `accepted: ${p.summary}`;
}

/** The command each lens action runs (argument: `{ reviewId }`). */
const lensCommands = {
    accept: commandIds.acceptEdit,
    choose: commandIds.chooseChanges,
    reject: commandIds.rejectEditWithFeedback,
    acceptRest: commandIds.acceptRemainingEdits,
} as const;

/** The review id in a review document's URI (`/<id>/<side>/<path>`). */
export function reviewIdOf(uri: vscode.Uri): string | undefined {
    const first = uri.path.split('/')[1];
    return first ? decodeURIComponent(first) : undefined;
}

function activeReviewUri(): vscode.Uri | undefined {
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    if (tab?.input instanceof vscode.TabInputTextDiff) return tab.input.modified;
    return vscode.window.activeTextEditor?.document.uri;
}

async function closeTabs(proposed: vscode.Uri): Promise<void> {
    const tabs = vscode.window.tabGroups.all
        .flatMap((g) => g.tabs)
        .filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === proposed.toString());
    if (tabs.length > 0) await vscode.window.tabGroups.close(tabs, true);
}
