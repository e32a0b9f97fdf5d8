// The pure half of the extension's review of a proposed edit
// (`rein/reviewEdit`): what the review says, the hunks as the user picks
// among them, and the answer a choice makes. Unit-tested; review.ts shows
// it in VS Code.

import { oneLine, plain } from './plain_text';
import type { ReviewAnswer, ReviewHunk, ReviewParams } from './protocol';

export const REVIEW_SCHEME = 'rein-review';

/** The diff editor's title: `cart.py: Rein's proposed edit`. */
export function reviewTitle(p: ReviewParams): string {
    return `${basename(p.path)}: Rein's proposed edit`;
}

/** The notification's heading and message while the review is open. The
 * model's reason is not repeated here: the diff shows it, once, above the
 * change (see `reviewLenses`). `ordinal` is which of its task's edits this
 * is (1 for the first). */
export function reviewNotice(p: ReviewParams, ordinal = 1): { title: string; message: string } {
    // "change cart.py: 1 line changed" under "… a change to cart.py" says
    // the file twice.
    const what = inert(plain(p.summary), 200).replace(/^change \S+: /, '');
    const which = ordinal > 1 ? `Edit ${ordinal} of this task: ` : '';
    return {
        title: `Rein proposes a change to ${inert(p.path, 200)}`,
        message: `${which}${what}. Accept or reject it above the change in the diff (you may edit the proposal first), or from Rein’s status bar item.`,
    };
}

/** Text from the model or the server made inert for a one-line label:
 * control and bidirectional-override characters dropped (they could hide
 * or reorder what the user reads), whitespace folded, `$(name)` icon
 * syntax broken up (CodeLens titles render it), cut at `max` characters. */
export function inert(text: string, max: number): string {
    const bare = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '');
    // A 50 kB reason is cut early: only `max` characters are ever shown.
    const head = bare.length > max * 4 ? bare.slice(0, max * 4) : bare;
    return oneLine(head.replace(/\$\(/g, '$\u200b('), max);
}

/** One CodeLens of a review: a line of the proposed text, its title, and
 * the action it runs (none: a label). */
export interface ReviewLens {
    line: number;
    title: string;
    action?: 'accept' | 'choose' | 'reject' | 'acceptRest';
    tooltip?: string;
}

/** The longest reason shown in the lens (the rest is in its tooltip). */
const WHY_IN_LENS = 160;
/** The longest reason in the tooltip: the model's text is bounded. */
const WHY_IN_TOOLTIP = 2000;

/** What the diff shows above the change: where this edit stands ("edit 2
 * of this task", "change 1 of 3"), the actions as words, and the model's
 * reason (the one place it is shown); then "change i of n" above each
 * later change. `ordinal` is which of its task's edits this is. */
export function reviewLenses(p: ReviewParams, ordinal = 1): ReviewLens[] {
    const first = firstChangedLine(p);
    const n = p.hunks.length;
    const lenses: ReviewLens[] = [];
    const where = [ordinal > 1 ? `Edit ${ordinal} of this task` : '', n > 1 ? `change 1 of ${n}` : ''].filter(Boolean).join(', ');
    if (where) lenses.push({ line: first, title: `Rein: ${where}` });
    lenses.push({ line: first, title: '✓ Accept', action: 'accept', tooltip: `Apply Rein’s change to ${inert(p.path, 200)}` });
    if (n > 1) lenses.push({ line: first, title: 'Keep Some…', action: 'choose', tooltip: `Choose which of the ${n} changes to keep` });
    lenses.push({ line: first, title: '✗ Reject…', action: 'reject', tooltip: 'Reject it, saying why if you like (Rein’s model reads it)' });
    lenses.push({
        line: first,
        title: 'Accept All Remaining Edits of This Task',
        action: 'acceptRest',
        tooltip: 'Accept this edit, and apply the task’s later edits without asking, until it ends',
    });
    const why = plain(p.reason).trim();
    // A row of its own above the line before the change (lenses on one
    // line share a row, where the actions would push it out of a narrow
    // side-by-side diff); above the change itself when that is line 1.
    const whyLine = first > 0 ? first - 1 : first;
    if (why) lenses.push({ line: whyLine, title: `Why: ${inert(why, WHY_IN_LENS)}`, tooltip: inert(why, WHY_IN_TOOLTIP) });
    p.hunks.forEach((h, i) => {
        if (i > 0 && h.proposedStart !== first) lenses.push({ line: h.proposedStart, title: `Rein: change ${i + 1} of ${n}` });
    });
    return lenses;
}

export interface HunkItem {
    index: number;
    label: string;
    description: string;
}

/** The hunks as quick pick items: where each is and what it does. */
export function hunkItems(p: ReviewParams): HunkItem[] {
    const original = (p.original ?? '').split('\n');
    const proposed = p.proposed.split('\n');
    return p.hunks.map((h, index) => ({
        index,
        label: `Change ${index + 1} of ${p.hunks.length}: ${lineSpan(h)}`,
        description: hunkGist(h, original, proposed),
    }));
}

function lineSpan(h: ReviewHunk): string {
    const first = h.originalStart + 1;
    if (h.originalLines === 0) return `adds ${h.proposedLines} line${h.proposedLines === 1 ? '' : 's'} after line ${h.originalStart}`;
    if (h.originalLines === 1) return `line ${first}`;
    return `lines ${first}–${first + h.originalLines - 1}`;
}

/** `− return sum(q)  + return sum(p * q)`: the first line out and in. */
function hunkGist(h: ReviewHunk, original: string[], proposed: string[]): string {
    const out = h.originalLines > 0 ? original[h.originalStart] : undefined;
    const inn = h.proposedLines > 0 ? proposed[h.proposedStart] : undefined;
    const parts = [];
    if (out !== undefined) parts.push(`− ${oneLine(out, 60)}`);
    if (inn !== undefined) parts.push(`+ ${oneLine(inn, 60)}`);
    return parts.join('  ');
}

/** The answer for the hunks the user kept; `undefined` when none is kept
 * (that is a rejection, which the user must confirm as such). */
export function keptAnswer(p: ReviewParams, kept: readonly number[]): ReviewAnswer | undefined {
    const valid = [...new Set(kept)].filter((i) => Number.isInteger(i) && i >= 0 && i < p.hunks.length).sort((a, b) => a - b);
    if (valid.length === 0) return undefined;
    if (valid.length === p.hunks.length) return { decision: 'accept' };
    return { decision: 'accept', hunks: valid };
}

/** The 0-based line of the proposed text where the first change is. */
export function firstChangedLine(p: ReviewParams): number {
    return p.hunks[0]?.proposedStart ?? 0;
}

/** Whether a value from the server looks like review params (it is our
 * server, but a malformed request must not break the window). */
export function isReviewParams(v: unknown): v is ReviewParams {
    const p = v as Partial<ReviewParams> | null;
    return (
        typeof p === 'object' &&
        p !== null &&
        typeof p.taskId === 'string' &&
        typeof p.reviewId === 'string' &&
        typeof p.uri === 'string' &&
        typeof p.path === 'string' &&
        typeof p.proposed === 'string' &&
        (p.original === null || typeof p.original === 'string') &&
        typeof p.reason === 'string' &&
        typeof p.summary === 'string' &&
        Array.isArray(p.hunks) &&
        p.hunks.every(
            (h) =>
                typeof h === 'object' &&
                h !== null &&
                [h.originalStart, h.originalLines, h.proposedStart, h.proposedLines].every((n) => Number.isInteger(n) && n >= 0),
        )
    );
}

function basename(path: string): string {
    return path.split('/').pop() || path;
}
