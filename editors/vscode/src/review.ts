// The extension's own review of a proposed edit (`rein/reviewEdit`): the
// real diff (the text as it is now → the proposal) in a diff editor, the
// model's reason in a notification that stays while the review is open,
// Accept / Reject / Choose Changes in the diff's title bar and in the
// status bar menu. Nothing is applied here: the answer goes to the server,
// which applies what was accepted.
//
// A review the server withdraws (`$/cancelRequest`: the task was cancelled
// or ended, the wait timed out, the file changed under it) closes itself;
// an Accept that comes after that changes nothing, and the user is told.

import * as vscode from 'vscode';
import * as lc from 'vscode-languageclient/node';

import { oneLine } from './plain_text';
import type { ReviewAnswer, ReviewParams } from './protocol';
import { firstChangedLine, hunkItems, isReviewParams, keptAnswer, REVIEW_SCHEME, reviewNotice, reviewTitle } from './review_model';

export const reviewEdit = new lc.RequestType<ReviewParams, ReviewAnswer, void>('rein/reviewEdit');

interface Pending {
    params: ReviewParams;
    original: vscode.Uri;
    proposed: vscode.Uri;
    /** The model's reason, next to the change. */
    why?: vscode.CommentThread;
    answer: (answer: ReviewAnswer) => void;
    /** Ends the notification. */
    done: () => void;
}

export class Reviews implements vscode.Disposable, vscode.TextDocumentContentProvider {
    private readonly pending = new Map<string, Pending>();
    /** Reviews withdrawn or answered, by id: a late action on one is told so. */
    private readonly closed = new Map<string, string>();
    /** The two sides of each open review (they never change). */
    private readonly texts = new Map<string, string>();
    private readonly disposables: vscode.Disposable[];
    /** Puts the model's reason next to the change, as a comment. */
    private readonly comments = vscode.comments.createCommentController('rein.review', 'Rein');

    constructor(
        private readonly log: vscode.LogOutputChannel,
        /** Called when a review opens or closes (the status bar shows it). */
        private readonly onChange: () => void,
        /** Called with what became of a review, for the tasks channel. */
        private readonly onOutcome: (p: ReviewParams, outcome: string) => void = () => {},
    ) {
        this.disposables = [
            vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, this),
            this.comments,
        ];
    }

    provideTextDocumentContent(uri: vscode.Uri): string {
        return this.texts.get(uri.toString()) ?? '';
    }

    /** Handles `rein/reviewEdit`: resolves with the user's answer. */
    review(raw: unknown, token: vscode.CancellationToken): Promise<ReviewAnswer> {
        if (!isReviewParams(raw)) {
            this.log.error(`rein/reviewEdit with unreadable params: ${oneLine(JSON.stringify(raw) ?? '', 300)}`);
            return Promise.resolve({ decision: 'reject', comment: 'the editor could not read the proposal' });
        }
        const params = raw;
        const id = params.reviewId;
        const side = (which: string) =>
            vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${encodeURIComponent(id)}/${which}/${params.path}` });
        const original = side('current');
        const proposed = side('proposed');
        this.texts.set(original.toString(), params.original ?? '');
        this.texts.set(proposed.toString(), params.proposed);
        return new Promise<ReviewAnswer>((resolve) => {
            let done = () => {};
            const ended = new Promise<void>((r) => (done = r));
            this.pending.set(id, { params, original, proposed, answer: resolve, done, why: this.why(params, proposed) });
            token.onCancellationRequested(() => this.withdraw(id));
            const notice = reviewNotice(params);
            void vscode.window.withProgress(
                { location: vscode.ProgressLocation.Notification, title: notice.title },
                async (progress) => {
                    progress.report({ message: notice.message });
                    await ended;
                },
            );
            this.onChange();
            void this.show(id).catch((error) => this.log.error(`Showing Rein's proposed edit: ${String(error)}`));
        });
    }

    /** The model's reason as a comment on the first change, rendered as
     * Markdown (untrusted: no HTML, no command links). */
    private why(p: ReviewParams, proposed: vscode.Uri): vscode.CommentThread | undefined {
        const reason = p.reason.trim();
        if (!reason) return undefined;
        const body = new vscode.MarkdownString(reason);
        body.isTrusted = false;
        body.supportHtml = false;
        const line = firstChangedLine(p);
        const thread = this.comments.createCommentThread(proposed, new vscode.Range(line, 0, line, 0), [
            { body, mode: vscode.CommentMode.Preview, author: { name: 'Rein' }, label: p.summary },
        ]);
        thread.label = 'Why this change';
        thread.canReply = false;
        thread.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
        return thread;
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
        p.why?.dispose();
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
