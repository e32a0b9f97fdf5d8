import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { ReviewParams } from '../../src/protocol';
import { firstChangedLine, hunkItems, isReviewParams, keptAnswer, reviewNotice, reviewTitle } from '../../src/review_model';

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

test('the review names the file and gives the model’s reason as plain text', () => {
    assert.equal(reviewTitle(review()), "cart.py: Rein's proposed edit");
    const notice = reviewNotice(review());
    assert.equal(notice.title, 'Rein proposes a change to src/cart.py');
    assert.match(notice.message, /^Why: total\(\) sums the qty and ignores the prices\. It should sum price × quantity\. Accept/);
    // Without a reason, what the change is.
    assert.match(reviewNotice(review({ reason: ' ' })).message, /^change src\/cart\.py: 2 lines changed\. Accept/);
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
