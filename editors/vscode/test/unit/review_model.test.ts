import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { ReviewParams } from '../../src/protocol';
import { firstChangedLine, hunkItems, inert, isReviewParams, keptAnswer, reviewLenses, reviewNotice, reviewTitle } from '../../src/review_model';

const review = (more: Partial<ReviewParams> = {}): ReviewParams => ({
    taskId: 't-1',
    reviewId: 'rein-t-1-3',
    uri: 'file:///w/cart.py',
    path: 'src/cart.py',
    label: 'Rein: fix TestCart.test_total',
    summary: 'change src/cart.py: 2 lines changed',
    reason: 'total() sums the `qty` and ignores the prices.\nIt should sum price × quantity.',
    original: 'a\nb\nc\nd\ne\nf\n',
    proposed: 'a\nB\nc\nd\ne\nF1\nF2\n',
    hunks: [
        { originalStart: 1, originalLines: 1, proposedStart: 1, proposedLines: 1 },
        { originalStart: 5, originalLines: 1, proposedStart: 5, proposedLines: 2 },
    ],
    ...more,
});

test('the notification names the file and the edit, never the model’s reason (the diff shows it, once)', () => {
    assert.equal(reviewTitle(review()), "cart.py: Rein's proposed edit");
    const notice = reviewNotice(review());
    assert.equal(notice.title, 'Rein proposes a change to src/cart.py');
    assert.match(notice.message, /^2 lines changed\. Accept or reject it above the change/);
    assert.doesNotMatch(notice.message, /Why|prices/);
    // The second edit of a task says so.
    assert.match(reviewNotice(review(), 2).message, /^Edit 2 of this task: 2 lines changed\./);
});

test('the diff shows the actions in words, where the edit stands and the reason, above the change', () => {
    const lenses = reviewLenses(review(), 2);
    assert.deepEqual(
        lenses.map((l) => [l.line, l.title, l.action ?? null]),
        [
            [1, 'Rein: Edit 2 of this task, change 1 of 2', null],
            [1, '✓ Accept', 'accept'],
            [1, 'Keep Some…', 'choose'],
            [1, '✗ Reject…', 'reject'],
            [1, 'Accept All Remaining Edits of This Task', 'acceptRest'],
            [0, 'Why: total() sums the qty and ignores the prices. It should sum price × quantity.', null],
            [5, 'Rein: change 2 of 2', null],
        ],
    );
    // One change, the task's first edit, no reason: only the actions.
    const single = review({ reason: '', hunks: [{ originalStart: 1, originalLines: 1, proposedStart: 1, proposedLines: 1 }] });
    assert.deepEqual(
        reviewLenses(single).map((l) => l.title),
        ['✓ Accept', '✗ Reject…', 'Accept All Remaining Edits of This Task'],
    );
});

test('a hostile reason is inert and bounded in the lens, its tooltip and the notification', () => {
    const hostile =
        '\u001b[2J\u202eevil\u202c [run](command:workbench.action.terminal.sendSequence?%7B%7D) $(bug) <img src=x onerror=alert(1)>\r\n' +
        'x'.repeat(50_000);
    const lenses = reviewLenses(review({ reason: hostile, summary: `change\u0007 ${'y'.repeat(50_000)}`, path: 'a\u202e.py' }));
    const why = lenses.find((l) => l.title.startsWith('Why: '));
    assert.ok(why?.tooltip);
    for (const text of [why.title, why.tooltip]) {
        assert.doesNotMatch(text, /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
        // Codicon syntax does not render as an icon.
        assert.doesNotMatch(text, /\$\(/);
    }
    assert.ok(why.title.length <= 'Why: '.length + 160, `lens: ${why.title.length}`);
    assert.ok(why.tooltip.length <= 2000, `tooltip: ${why.tooltip.length}`);
    // A lens title is plain text: the link is shown as written, not run
    // (lenses render no Markdown); nothing runs a command but our actions.
    assert.deepEqual(
        lenses.filter((l) => l.action).map((l) => l.action),
        ['accept', 'choose', 'reject', 'acceptRest'],
    );
    const notice = reviewNotice(review({ reason: hostile, summary: `change\u0007 ${'y'.repeat(50_000)}`, path: 'a\u202e.py' }), 3);
    assert.ok(notice.message.length < 400, `notice: ${notice.message.length}`);
    assert.doesNotMatch(notice.title + notice.message, /[\u0007\u202e]/);
    assert.equal(inert('a\tb\nc $(x)', 80), 'a b c $\u200b(x)');
});

test('each hunk is an item that says where it is and what it does', () => {
    assert.deepEqual(hunkItems(review()), [
        { index: 0, label: 'Change 1 of 2: line 2', description: '− b  + B' },
        { index: 1, label: 'Change 2 of 2: line 6', description: '− f  + F1' },
    ]);
    const added = review({ original: 'a\n', proposed: 'a\nb\n', hunks: [{ originalStart: 1, originalLines: 0, proposedStart: 1, proposedLines: 1 }] });
    assert.equal(hunkItems(added)[0].label, 'Change 1 of 1: adds 1 line after line 1');
    assert.equal(firstChangedLine(review()), 1);
});

test('keeping every hunk accepts the edit; some keeps those; none is not an accept', () => {
    assert.deepEqual(keptAnswer(review(), [1, 0]), { decision: 'accept' });
    assert.deepEqual(keptAnswer(review(), [1, 1]), { decision: 'accept', hunks: [1] });
    assert.equal(keptAnswer(review(), []), undefined);
    assert.equal(keptAnswer(review(), [7, -1, 0.5]), undefined);
});

test('malformed review params are recognised', () => {
    assert.ok(isReviewParams(review()));
    assert.ok(isReviewParams(review({ original: null })));
    assert.ok(!isReviewParams(null));
    assert.ok(!isReviewParams({ ...review(), hunks: [{ originalStart: -1, originalLines: 0, proposedStart: 0, proposedLines: 0 }] }));
    assert.ok(!isReviewParams({ ...review(), proposed: 3 }));
});
