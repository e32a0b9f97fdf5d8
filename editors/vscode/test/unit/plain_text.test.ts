import assert from 'node:assert/strict';
import { test } from 'node:test';

import { oneLine, plain } from '../../src/plain_text';

test('code spans lose their backticks; the rest stays as it is', () => {
    assert.equal(plain('fixed: `TestCart.test_total` passes in 4 turns'), 'fixed: TestCart.test_total passes in 4 turns');
    assert.equal(plain('`a` and `b`'), 'a and b');
    assert.equal(plain('`` a`b ``'), 'a`b');
    assert.equal(plain('a lone ` backtick'), 'a lone ` backtick');
    assert.equal(plain('no markdown here'), 'no markdown here');
    assert.equal(plain('`x`'), 'x');
});

test('one line, bounded', () => {
    assert.equal(oneLine('a\n b\tc', 10), 'a b c');
    assert.equal(oneLine('abcdefghijkl', 6), 'abcde…');
});
