// The extension's own review of a proposed edit (`rein/reviewEdit`): the
// real diff (the text as it is now → the proposal) in a diff editor, with
// the actions in words above the change (CodeLens: Accept, Keep Some…,
// Reject…, Accept All Remaining Edits of This Task), where the edit stands
// ("edit 2 of this task", "change 1 of 3") and the model's reason, shown
// there only; the same actions as icons in the diff's title bar and in the
// status bar menu. Nothing is applied here: the answer goes to the server,
// which applies what was accepted.
//
// The proposal (the diff's right side) can be edited before accepting: the
// review documents live in a small in-memory file system, the current side
// read-only. Accept then answers with the text as the user left it, and the
// server applies that and tells the model what the user changed.
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
import type { ReviewParams } from './protocol';
import type { EditedReviewAnswer as ReviewAnswer } from './review_answer';
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

export class Reviews implements vscode.Disposable, vscode.FileSystemProvider, vscode.CodeLensProvider {
    private readonly pending = new Map<string, Pending>();
    /** Reviews withdrawn or answered, by id: a late action on one is told so. */
    private readonly closed = new Map<string, string>();
    /** The two sides of each open review: the current text never
     * changes; the proposal holds what the user saved of their edits. */
    private readonly texts = new Map<string, { text: string; mtime: number; readonly: boolean }>();
    private readonly fileChanged = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
    readonly onDidChangeFile = this.fileChanged.event;
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
            vscode.workspace.registerFileSystemProvider(REVIEW_SCHEME, this, { isCaseSensitive: true }),
            this.fileChanged,
            // The proposed side of the diff (the original side has no lenses).
            vscode.languages.registerCodeLensProvider({ scheme: REVIEW_SCHEME }, this),
            this.lensesChanged,
        ];
    }

    // The review documents' file system: one file per side, nothing else.
    stat(uri: vscode.Uri): vscode.FileStat {
        const f = this.file(uri);
        return {
            type: vscode.FileType.File,
            ctime: 0,
            mtime: f.mtime,
            size: Buffer.byteLength(f.text),
            permissions: f.readonly ? vscode.FilePermission.Readonly : undefined,
        };
    }

    readFile(uri: vscode.Uri): Uint8Array {
        return Buffer.from(this.file(uri).text, 'utf8');
    }

    writeFile(uri: vscode.Uri, content: Uint8Array): void {
        const f = this.texts.get(uri.toString());
        // A review that closed meanwhile: its text no longer matters, and
        // an error here would only be a confusing "could not save".
        if (!f) return;
        if (f.readonly) throw vscode.FileSystemError.NoPermissions(uri);
        this.texts.set(uri.toString(), { ...f, text: Buffer.from(content).toString('utf8'), mtime: Date.now() });
    }

    watch(): vscode.Disposable {
        return new vscode.Disposable(() => {});
    }

    readDirectory(): [string, vscode.FileType][] {
        return [];
    }

    createDirectory(uri: vscode.Uri): void {
        throw vscode.FileSystemError.NoPermissions(uri);
    }

    delete(uri: vscode.Uri): void {
        throw vscode.FileSystemError.NoPermissions(uri);
    }

    rename(uri: vscode.Uri): void {
        throw vscode.FileSystemError.NoPermissions(uri);
    }

    private file(uri: vscode.Uri): { text: string; mtime: number; readonly: boolean } {
        const f = this.texts.get(uri.toString());
        if (!f) throw vscode.FileSystemError.FileNotFound(uri);
        return f;
    }

    /** The proposal as the user left it (their unsaved edits included). */
    private proposalNow(p: Pending): string {
        const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === p.proposed.toString());
        if (doc?.isDirty) return doc.getText();
        return this.texts.get(p.proposed.toString())?.text ?? p.params.proposed;
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
        // The path is the file's own (the breadcrumbs show it); which review
        // and which side ride in the query, out of the user's sight.
        const side = (which: string) =>
            vscode.Uri.from({
                scheme: REVIEW_SCHEME,
                path: `/${params.path}`,
                query: new URLSearchParams({ review: id, side: which }).toString(),
            });
        const original = side('current');
        const proposed = side('proposed');
        const now = Date.now();
        this.texts.set(original.toString(), { text: params.original ?? '', mtime: now, readonly: true });
        this.texts.set(proposed.toString(), { text: params.proposed, mtime: now, readonly: false });
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

    /** Accepts the edit: as proposed, or as the user edited it. */
    accept(id: string): void {
        const p = this.pending.get(id);
        if (!p) return this.tellClosed(id);
        const text = this.proposalNow(p);
        this.finish(id, text === p.params.proposed ? { decision: 'accept' } : { decision: 'accept', text });
    }

    /** Accepts the edit and every later one of its task, until it ends
     * (Neovim's `A`). Other reviews of that task already open are accepted
     * too: the user said "all remaining". */
    acceptRest(id: string): void {
        const p = this.pending.get(id);
        if (!p) return this.tellClosed(id);
        const task = p.params.taskId;
        this.acceptingRest.add(task);
        for (const other of this.all().filter((r) => r.taskId === task)) this.accept(other.reviewId);
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
        if (this.proposalNow(p) !== p.params.proposed) {
            // The hunks are Rein's proposal's: choosing among them would
            // silently drop what the user typed.
            void vscode.window.showInformationMessage(
                'Rein: you edited the proposal. Accept takes it as you left it; to keep only some of Rein’s changes, undo your edits first.',
            );
            return;
        }
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
        if (answer.text !== undefined) this.log.info(`You edited Rein's proposal to ${p.params.path} before accepting it; Rein applies your text`);
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
        // The texts go once the tabs are closed: an edited proposal is
        // saved first (into this file system, silently) so that closing it
        // asks nothing.
        void closeTabs(p.proposed)
            .catch((error) => this.log.warn(`Closing the review of ${p.params.path}: ${String(error)}`))
            .finally(() => {
                this.texts.delete(p.original.toString());
                this.texts.delete(p.proposed.toString());
            });
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
    if (answer.text !== undefined) return `accepted as you edited it: ${p.summary}`;
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

/** The review id in a review document's URI (`?review=<id>&side=…`). */
export function reviewIdOf(uri: vscode.Uri): string | undefined {
    return new URLSearchParams(uri.query).get('review') ?? undefined;
}

function activeReviewUri(): vscode.Uri | undefined {
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    if (tab?.input instanceof vscode.TabInputTextDiff) return tab.input.modified;
    return vscode.window.activeTextEditor?.document.uri;
}

async function closeTabs(proposed: vscode.Uri): Promise<void> {
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === proposed.toString());
    if (doc?.isDirty) await doc.save();
    const tabs = vscode.window.tabGroups.all
        .flatMap((g) => g.tabs)
        .filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString() === proposed.toString());
    if (tabs.length > 0) await vscode.window.tabGroups.close(tabs, true);
}
