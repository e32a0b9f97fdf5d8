import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { TaskState, TaskStatus } from '../../src/protocol';
import { formatCost, formatTokens, idleView, spentLine, statusView } from '../../src/status_text';

function status(state: TaskState, more: Partial<TaskStatus> = {}): TaskStatus {
    return { taskId: 't-1', state, turn: 3, maxTurns: 20, inputTokens: 12_000, outputTokens: 400, costUsd: 0.0312, ...more };
}

test('numbers read like the server’s progress line', () => {
    assert.equal(formatTokens(999), '999 tok');
    assert.equal(formatTokens(12_400), '12.4k tok');
    assert.equal(formatCost(0.0312), '$0.03');
    assert.equal(formatCost(2), '$2.00');
});

test('a running task shows a spinner with turn, tokens and cost', () => {
    const view = statusView(status('running'));
    assert.equal(view.text, '$(sync~spin) Rein: turn 3/20 · 12.4k tok · $0.03');
    assert.equal(view.severity, 'normal');
    assert.match(view.tooltip, /^Rein: task t-1\nrunning\n/);
    assert.match(view.tooltip, /\nClick for the task’s actions\.$/);
    // Named by its goal once the task said it, and then no id anywhere.
    const named = statusView(status('running'), { goal: 'Fix `test_total`' });
    assert.match(named.tooltip, /^Rein: Fix test_total\n/);
    assert.doesNotMatch(named.tooltip, /t-1/);
});

test('no cost before the model first replied: never a guessed $0.00', () => {
    const first = status('running', { turn: 0, inputTokens: 0, outputTokens: 0, costUsd: 0, unpricedCalls: 0 });
    assert.equal(spentLine(first), 'turn 1/20 · 0 tok');
    assert.equal(spentLine({ ...first, inputTokens: 3400, unpricedCalls: 1 }), 'turn 1/20 · 3.4k tok · cost unknown');
});

test('turn 0 of a running task reads as turn 1, as the server says it', () => {
    assert.equal(statusView(status('running', { turn: 0 })).text, '$(sync~spin) Rein: turn 1/20 · 12.4k tok · $0.03');
});

test('every state has its words, icon and severity', () => {
    const cases: [TaskState, string, string][] = [
        ['queued', '$(sync~spin) Rein: starting', 'normal'],
        ['verifying', '$(sync~spin) Rein: verifying · turn 3/20 · 12.4k tok · $0.03', 'normal'],
        ['waiting_user', '$(question) Rein: waiting for you', 'warning'],
        ['succeeded', '$(check) Rein: succeeded · 12.4k tok · $0.03', 'normal'],
        ['unverified', '$(warning) Rein: done, not verified', 'warning'],
        ['failed', '$(error) Rein: failed', 'error'],
        ['cancelled', '$(circle-slash) Rein: cancelled', 'normal'],
        ['budget_exhausted', '$(warning) Rein: budget exhausted', 'warning'],
    ];
    for (const [state, text, severity] of cases) {
        const view = statusView(status(state));
        assert.equal(view.text, text, state);
        assert.equal(view.severity, severity, state);
    }
});

test('the reason (a question, why it failed) is in the tooltip', () => {
    const view = statusView(status('waiting_user', { reason: 'Which currency should totals use?' }));
    assert.match(view.tooltip, /\nwaiting user: Which currency should totals use\?\n/);
    // Markdown from the server reads as plain text.
    const done = statusView(status('succeeded', { reason: 'fixed: `TestCart.test_total` passes in 4 turns' }));
    assert.match(done.tooltip, /succeeded: fixed: TestCart\.test_total passes in 4 turns/);
    assert.match(statusView(status('budget_exhausted')).tooltip, /budget exhausted/);
});

test('before any task: the server’s state', () => {
    assert.equal(idleView('starting').text, '$(sync~spin) Rein');
    assert.equal(idleView('ready').text, '$(hubot) Rein');
    const stopped = idleView('stopped', 'no rein binary');
    assert.equal(stopped.severity, 'error');
    assert.match(stopped.tooltip, /not running: no rein binary/);
});

test('a review or an approval pending is its own state, not a spinner', () => {
    const review = statusView(status('waiting_user', { waitingFor: { kind: 'review', detail: 'cart.py' } }), {
        activity: 'turn 3/20 · proposing an edit to cart.py · 8.6k tok · $0.03',
    });
    assert.equal(review.text, '$(eye) Rein: waiting for you · review cart.py');
    assert.equal(review.severity, 'warning');
    assert.match(review.tooltip, /Waiting for you to review the edit to cart\.py\./);
    assert.doesNotMatch(review.tooltip, /proposing an edit/);
    const approval = statusView(status('waiting_user', { waitingFor: { kind: 'approval', detail: '“make”' } }));
    assert.equal(approval.text, '$(shield) Rein: waiting for you · allow a command?');
    assert.match(approval.tooltip, /allow or deny “make”/);
});

test('an unknown cost is never shown as $0.00', () => {
    assert.equal(formatCost(0, 3), 'cost unknown');
    assert.equal(formatCost(0.0312, 1), '≥ $0.03');
    assert.equal(formatCost(0, 0), '$0.00');
    const view = statusView(status('succeeded', { costUsd: 0, unpricedCalls: 4 }));
    assert.equal(view.text, '$(check) Rein: succeeded · 12.4k tok · cost unknown');
    assert.match(view.tooltip, /cost unknown/);
    assert.doesNotMatch(view.tooltip, /\$0\.00/);
});

test('a running task shows what it does now, not counters', () => {
    const view = statusView(status('running', { turn: 2, step: 'running tests', said: 'Let me run the failing test first.' }), {
        goal: 'Fix `test_total`',
    });
    assert.equal(view.text, '$(sync~spin) Rein: running tests · turn 2/20');
    assert.doesNotMatch(view.text, /t-1|tok|\$0/);
    // The tooltip: the goal, the step, the model's line, the numbers.
    assert.equal(
        view.tooltip,
        [
            'Rein: Fix test_total',
            'running',
            'Now: running tests',
            'The model: Let me run the failing test first.',
            'turn 2/20 · 12.4k tok · $0.03',
            'Click for the task’s actions.',
        ].join('\n'),
    );
    const thinking = statusView(status('running', { step: 'thinking' }));
    assert.equal(thinking.text, '$(sync~spin) Rein: thinking · turn 3/20');
    const verifying = statusView(status('verifying', { step: 'verifying' }));
    assert.equal(verifying.text, '$(sync~spin) Rein: verifying · turn 3/20');
});

test('a wait shows the server’s step', () => {
    const review = statusView(
        status('waiting_user', { waitingFor: { kind: 'review', detail: 'cart.py' }, step: 'waiting for you · review cart.py' }),
    );
    assert.equal(review.text, '$(eye) Rein: waiting for you · review cart.py');
    const approval = statusView(
        status('waiting_user', { waitingFor: { kind: 'approval', detail: '“make”' }, step: 'waiting for you · allow “make”' }),
    );
    assert.equal(approval.text, '$(shield) Rein: waiting for you · allow “make”');
    const answer = statusView(
        status('waiting_user', { waitingFor: { kind: 'answer', detail: 'Which?' }, step: 'waiting for you · answer the question' }),
    );
    assert.equal(answer.text, '$(question) Rein: waiting for you · answer the question');
});

test('the model’s words and the step are plain, clean, bounded text', () => {
    const view = statusView(
        status('running', {
            step: 'editing $(bug)\u202e.py\u001b[2K' + 'x'.repeat(200),
            said: '[run](command:rein.cancelTask) **bold** `code`\u202egnp.exe\u0007 $(zap)' + ' more'.repeat(100),
        }),
    );
    // No icon drawn from server text, no control or bidi character, cut short.
    assert.match(view.text, /^\$\(sync~spin\) Rein: editing \\\$\(bug\)\.py\[2Kx+… · turn 3\/20$/);
    assert.doesNotMatch(view.text + view.tooltip, /[\u0000-\u0009\u000b-\u001f\u007f\u202e]/u);
    const said = view.tooltip.split('\n').find((l) => l.startsWith('The model: ')) ?? '';
    // Shown as written: a string tooltip renders no Markdown and no links.
    // Code spans lose their backticks, as the model's words do everywhere here.
    assert.ok(said.startsWith('The model: [run](command:rein.cancelTask) **bold** codegnp.exe $(zap) more'), said);
    assert.ok(said.length <= 'The model: '.length + 200, `${said.length}`);
    assert.ok(said.endsWith('…'));
});

test('a server that sends no step shows the numbers, as before', () => {
    assert.equal(statusView(status('running')).text, '$(sync~spin) Rein: turn 3/20 · 12.4k tok · $0.03');
    assert.match(statusView(status('running'), { activity: 'turn 3/20 · running tests · 12.4k tok · $0.03' }).tooltip, /\nNow: turn 3\/20 · running tests/);
});
