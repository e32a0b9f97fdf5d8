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

/** The notification's heading and message while the review is open. */
export function reviewNotice(p: ReviewParams): { title: string; message: string } {
    const why = plain(p.reason).trim();
    const what = plain(p.summary).trim();
    const message = why ? `Why: ${oneLine(why, 400)}` : `${oneLine(what, 200)}.`;
    return {
        title: `Rein proposes a change to ${p.path}`,
        message: `${message} Accept (✓) or reject (✗) it in the diff’s title bar, or from Rein’s status bar item.`,
    };
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
