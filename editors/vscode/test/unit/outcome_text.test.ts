import assert from 'node:assert/strict';
import { test } from 'node:test';

import { answerMarkdown, fixesFor, isAnswer, isUnansweredReview, outcomeToast, reinSays } from '../../src/outcome_text';
import type { TaskState, TaskStatus } from '../../src/protocol';
import { statusView } from '../../src/status_text';

function status(state: TaskState, more: Partial<TaskStatus> = {}): TaskStatus {
    return { taskId: 't-1', state, turn: 1, maxTurns: 20, inputTokens: 3000, outputTokens: 200, costUsd: 0, unpricedCalls: 1, ...more };
}

const ANSWER = "total() sums `price * qty` over the items.\n\n- It ignores discounts.\n[run](command:rein.cancelTask) <script>alert(1)</script>";
const answered = status('succeeded', {
    reason: "answered in 1 turn (the answer is the model's; there was nothing to check)",
    summary: ANSWER,
});

test('an answer is shown as one, not as a verdict', () => {
    assert.ok(isAnswer(answered));
    const toast = outcomeToast(answered);
    assert.equal(toast?.level, 'info');
    // No link survives into the notification (it would render one).
    assert.equal(toast?.text, 'Rein answered: total() sums price * qty over the items. - It ignores discounts. run <script>alert(1)</script>');
    assert.doesNotMatch(toast?.text ?? '', /acceptance checks|turns/);
    assert.equal(statusView(answered).text, '$(check) Rein: answered · 3.2k tok · cost unknown');
});

test('the answer document holds the whole answer, as it is, after the question', () => {
    const long = { ...answered, summary: `${'word '.repeat(3000)}end` };
    assert.ok(answerMarkdown(long, 'Explain total()').includes('word word end'));
    assert.equal(
        answerMarkdown(answered, 'Explain total()\nbriefly'),
        [
            '# Rein’s answer',
            '',
            '> Explain total()',
            '> briefly',
            '',
            ANSWER,
            '',
            '---',
            '',
            '_The model’s words: there was nothing for Rein to check them against._',
            '',
        ].join('\n'),
    );
});

test('a rejection ends in the user’s words, not as a failure', () => {
    const s = status('cancelled', { reason: 'You rejected the change; Rein stopped.' });
    assert.deepEqual(outcomeToast(s), { level: 'info', text: 'Rein: You rejected the change; Rein stopped.' });
    assert.equal(statusView(s).text, '$(circle-slash) Rein: you rejected the change');
    assert.equal(statusView(s).severity, 'normal');
    // A plain cancel says nothing more.
    assert.equal(outcomeToast(status('cancelled', { reason: 'cancelled by the user' })), undefined);
});

test('an already passing test is not called a success', () => {
    const s = status('succeeded', { turn: 0, reason: 'already passing: `test_total` passes; nothing to change', unpricedCalls: 0 });
    assert.equal(statusView(s).text, '$(check) Rein: already passing · 3.2k tok · $0.00');
    assert.equal(outcomeToast(s)?.text, 'Rein: already passing: test_total passes; nothing to change');
});

test('Rein is named once', () => {
    assert.equal(reinSays('Rein could not start the task: no key'), 'Rein could not start the task: no key');
    assert.equal(reinSays('no key'), 'Rein: no key');
    assert.equal(reinSays('Reinforcement'), 'Rein: Reinforcement');
});

test('a review nobody answered waits to be resumed, and is no failure', () => {
    const s = status('waiting_user', {
        reason: 'No answer from you in 10 minutes; the review of app.py is still open — resume the task to see it again',
    });
    assert.ok(isUnansweredReview(s));
    assert.equal(outcomeToast(s), undefined);
    assert.equal(statusView(s).text, '$(question) Rein: waiting for you');
    // A review still open is not this.
    assert.ok(!isUnansweredReview({ ...s, waitingFor: { kind: 'review', detail: 'app.py' } }));
    // The typed cause decides, whatever the words say.
    assert.ok(isUnansweredReview({ ...s, cause: 'unanswered_review', reason: 'Keine Antwort' }));
    assert.ok(!isUnansweredReview({ ...s, cause: 'waiting_for_user' }));
});

test('a task that ended for a reason the user can fix offers the fix', () => {
    const ended = (state: TaskStatus['state'], cause: TaskStatus['cause']): TaskStatus => ({
        taskId: 't-1',
        state,
        turn: 1,
        maxTurns: 20,
        inputTokens: 0,
        outputTokens: 0,
        costUsd: 0,
        cause,
    });
    assert.deepEqual(fixesFor(ended('failed', 'model_failed')), ['Set Up…', 'Show Log']);
    assert.deepEqual(fixesFor(ended('budget_exhausted', 'budget')), ['Raise the Budget…']);
    assert.deepEqual(fixesFor(ended('failed', 'internal')), ['Show Log']);
    assert.deepEqual(fixesFor(ended('failed', 'gave_up')), []);
    assert.deepEqual(fixesFor(ended('succeeded', 'verified')), []);
    // An older server says no cause: nothing is guessed from the words.
    assert.deepEqual(fixesFor(ended('failed', undefined)), []);
});
