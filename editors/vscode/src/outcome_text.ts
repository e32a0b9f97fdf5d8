// How a task's end reads to the user, from its final `rein/taskStatus`:
// the server's reason is the data; the words here only tell apart what a
// state alone does not say (an answer, an already-passing test, a task the
// user stopped by rejecting its change). Pure, unit-tested.

import { oneLine, plain } from './plain_text';
import type { StopCause, TaskStatus } from './protocol';

/** What a task that ends after the user turned its change down says (the server's words). */
const REJECTED = 'You rejected the change';

/** Whether the task ended for `cause`: the server's typed cause decides;
 * the reason's words only for a server that sends no cause. */
function endedFor(s: TaskStatus, cause: StopCause, words: (reason: string) => boolean): boolean {
    if (s.cause) return s.cause === cause;
    return words(s.reason ?? '');
}

/** An instruction or question that ended with the model's answer (no checks ran). */
export function isAnswer(s: TaskStatus): boolean {
    return s.state === 'succeeded' && !!s.summary?.trim() && endedFor(s, 'answered', (r) => /^answered\b/.test(r));
}

/** A test that passed before anything changed. */
export function isAlreadyPassing(s: TaskStatus): boolean {
    return s.state === 'succeeded' && endedFor(s, 'already_met', (r) => /^already passing\b/.test(r));
}

/** The user rejected the change and Rein stopped. */
export function isRejected(s: TaskStatus): boolean {
    return s.state === 'cancelled' && endedFor(s, 'rejected', (r) => r.startsWith(REJECTED));
}

/** A task that stopped because nobody answered its review (the cause
 * `unanswered_review`; an older server's words: "No answer from you in
 * 10 minutes; …"): not a rejection, it waits to be resumed. */
export function isUnansweredReview(s: TaskStatus): boolean {
    return (
        s.state === 'waiting_user' &&
        !s.waitingFor &&
        endedFor(s, 'unanswered_review', (r) => r.startsWith('No answer from you'))
    );
}

/** `Rein: …` once: a message that already starts with Rein is not prefixed again. */
export function reinSays(message: string): string {
    return /^Rein\b/.test(message) ? message : `Rein: ${message}`;
}

/** A notification renders `[label](target)` as a link, a command link
 * too: text from the model (its answer, its last words quoted in a
 * reason) keeps only the label. */
export function noLinks(text: string): string {
    return text.replace(/\[([^\]]*)\]\(([^)]*)\)/g, '$1');
}

export interface OutcomeToast {
    level: 'info' | 'warning';
    text: string;
}

/** The notification at a task's end, or none (a plain cancel, a task that never started). */
export function outcomeToast(s: TaskStatus): OutcomeToast | undefined {
    const reason = noLinks(plain(s.reason ?? s.state.replace(/_/g, ' ')));
    if (isAnswer(s)) return { level: 'info', text: `Rein answered: ${oneLine(noLinks(plain(s.summary ?? '')), 120)}` };
    switch (s.state) {
        case 'succeeded':
            return { level: 'info', text: reinSays(reason) };
        case 'cancelled':
            return isRejected(s) ? { level: 'info', text: reinSays(reason) } : undefined;
        case 'unverified':
            // Done, but Rein could not see the test pass: not a success.
            return { level: 'warning', text: `Rein: not verified: ${reason}` };
        case 'failed':
            // One that never started: the server already said why (showMessage).
            if (s.maxTurns === 0) return undefined;
            return { level: 'warning', text: `Rein: the task failed: ${reason}` };
        case 'budget_exhausted':
            return { level: 'warning', text: `Rein: the task ran out of budget: ${reason}` };
        default:
            return undefined;
    }
}

/** What fixes the cause of a task's end, as the notification's buttons:
 * a model that failed (a rejected key, a server not running, an unknown
 * model) leads to set-up and the server's log; a budget to the settings
 * that raise it; Rein's own failure to its log. */
export type Fix = 'Set Up…' | 'Show Log' | 'Raise the Budget…';

export function fixesFor(s: TaskStatus): Fix[] {
    switch (s.cause) {
        case 'model_failed':
            return ['Set Up…', 'Show Log'];
        case 'budget':
            return ['Raise the Budget…'];
        case 'internal':
            return ['Show Log'];
        default:
            return [];
    }
}

/** The answer as a Markdown document: the question, then the model's
 * words as they are. Shown as source text in a read-only editor, so
 * nothing in it runs (no HTML, no command links). */
export function answerMarkdown(s: TaskStatus, goal?: string): string {
    const lines = ['# Rein’s answer', ''];
    if (goal) lines.push(...goal.split('\n').map((l) => `> ${l}`), '');
    lines.push((s.summary ?? '').trim(), '', '---', '', '_The model’s words: there was nothing for Rein to check them against._', '');
    return lines.join('\n');
}
