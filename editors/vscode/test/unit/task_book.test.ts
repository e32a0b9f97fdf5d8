import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { TaskState, TaskStatus } from '../../src/protocol';
import { TaskBook } from '../../src/task_book';

const s = (taskId: string, state: TaskState, reason?: string): TaskStatus => ({
    taskId,
    state,
    reason,
    turn: 1,
    maxTurns: 20,
    inputTokens: 0,
    outputTokens: 0,
    costUsd: 0,
});

test('the status bar shows the task still going, else the latest', () => {
    const book = new TaskBook();
    book.update(s('a', 'running'));
    book.update(s('b', 'succeeded'));
    assert.equal(book.current()?.taskId, 'a');
    book.update(s('a', 'failed'));
    assert.equal(book.current()?.taskId, 'a', 'the latest heard of');
    book.update(s('b', 'succeeded'));
    assert.equal(book.current()?.taskId, 'b');
});

test('a state change is news; more tokens in the same state are not', () => {
    const book = new TaskBook();
    assert.equal(book.update(s('a', 'running')), true);
    assert.equal(book.update({ ...s('a', 'running'), inputTokens: 50 }), false);
    assert.equal(book.get('a')?.inputTokens, 50);
    assert.equal(book.update(s('a', 'succeeded')), true);
});

test('an ended task does not come back to life from a stale status', () => {
    const book = new TaskBook();
    book.update(s('a', 'succeeded'));
    assert.equal(book.update(s('a', 'running')), false);
    assert.equal(book.get('a')?.state, 'succeeded');
});

test('a task we started is queued until its first status', () => {
    const book = new TaskBook();
    book.started('a');
    assert.equal(book.current()?.state, 'queued');
    book.update(s('a', 'running'));
    book.started('a');
    assert.equal(book.current()?.state, 'running', 'started() never overwrites');
});

test('the actions offered follow the state', () => {
    const book = new TaskBook();
    book.update(s('run', 'running'));
    book.update(s('ask', 'waiting_user', 'Which currency?'));
    book.update(s('done', 'succeeded'));
    book.verified({ taskId: 'done', passed: true, detail: 'ok', evidence: [] });
    assert.deepEqual(book.actions('run'), ['cancel', 'trace']);
    assert.deepEqual(book.actions('ask'), ['answer', 'resume', 'cancel', 'trace']);
    assert.deepEqual(book.actions('done'), ['trace', 'evidence']);
    assert.deepEqual(book.actions('unknown'), ['trace']);
    assert.deepEqual(
        book.waiting().map((t) => t.taskId),
        ['ask'],
    );
    assert.deepEqual(
        book.active().map((t) => t.taskId),
        ['ask', 'run'],
    );
});

test('what a task waits for decides what the menu offers', () => {
    const book = new TaskBook();
    book.update({ ...s('a', 'waiting_user'), waitingFor: { kind: 'review', detail: 'cart.py' } });
    assert.deepEqual(book.actions('a'), ['review', 'cancel', 'trace']);
    // A review pending is not a question to answer.
    assert.deepEqual(book.waiting(), []);
    book.update({ ...s('a', 'waiting_user'), waitingFor: { kind: 'answer', detail: 'Which currency?' } });
    assert.deepEqual(book.actions('a'), ['answer', 'cancel', 'trace']);
    assert.deepEqual(book.waiting().map((t) => t.taskId), ['a']);
    book.update({ ...s('a', 'waiting_user'), waitingFor: { kind: 'approval', detail: '“make”' } });
    assert.deepEqual(book.actions('a'), ['approval', 'cancel', 'trace']);
    // Stopped after a crash: no waitingFor, both ways on are offered.
    book.update(s('b', 'waiting_user'));
    assert.deepEqual(book.actions('b'), ['answer', 'resume', 'cancel', 'trace']);
});

test('a change of what the task waits for is news; the final summary is kept', () => {
    const book = new TaskBook();
    book.update(s('a', 'waiting_user'));
    assert.equal(book.update({ ...s('a', 'waiting_user'), waitingFor: { kind: 'review', detail: 'x' } }), true);
    book.update({ ...s('a', 'succeeded'), summary: 'Fixed total().' });
    book.update(s('a', 'succeeded'));
    assert.equal(book.get('a')?.summary, 'Fixed total().');
});

test('a task is named by its goal once known', () => {
    const book = new TaskBook();
    book.started('a');
    assert.equal(book.name('a'), 'task a');
    book.progressed('a', { goal: 'Fix test_total' });
    assert.equal(book.name('a'), 'Fix test_total');
});

test('the model’s latest line is kept for a status that has none', () => {
    const book = new TaskBook();
    book.update({ ...s('a', 'running'), step: 'thinking', said: 'Let me read cart.py.' });
    book.update({ ...s('a', 'running'), step: 'reading cart.py' });
    assert.equal(book.get('a')?.said, 'Let me read cart.py.');
    assert.equal(book.get('a')?.step, 'reading cart.py');
    book.update({ ...s('a', 'running'), step: 'thinking', said: 'Found it.' });
    assert.equal(book.get('a')?.said, 'Found it.');
});
