import assert from 'node:assert/strict';
import { test } from 'node:test';

import { testPlace } from '../../src/test_item';

test('a test item from the Testing view gives its file and the start of its range', () => {
    const uri = { scheme: 'file', path: '/p/tests/test_cart.py' };
    assert.deepEqual(testPlace({ uri, range: { start: { line: 6, character: 4 } } }), { uri, line: 6, character: 4 });
});

test('a failure message carries its test', () => {
    const uri = { scheme: 'file', path: '/p/tests/test_cart.py' };
    assert.deepEqual(testPlace({ test: { uri, range: { start: { line: 9, character: 0 } } }, message: {} }), {
        uri,
        line: 9,
        character: 0,
    });
});

test('a test without a range starts at the top of its file', () => {
    const uri = { scheme: 'file', path: '/p/t.py' };
    assert.deepEqual(testPlace({ uri }), { uri, line: 0, character: 0 });
});

test('a hostile or odd argument is refused or clamped, never thrown on', () => {
    assert.match(String(testPlace(undefined)), /not a test/);
    assert.match(String(testPlace('tests/x.py')), /not a test/);
    assert.match(String(testPlace({ id: 'suite' })), /no file/);
    const uri = { scheme: 'file', path: '/p/t.py' };
    assert.deepEqual(testPlace({ uri, range: { start: { line: -3, character: 1.5 } } }), { uri, line: 0, character: 0 });
    assert.deepEqual(testPlace({ uri, range: { start: { line: '7' } } }), { uri, line: 0, character: 0 });
});
