import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseServerLine } from '../../src/server_log';

test('a tracing line becomes its level and text', () => {
    assert.deepEqual(parseServerLine('2026-11-30T08:11:38.304558Z  INFO rein::server: workspace root root=/tmp'), {
        level: 'info',
        text: 'rein::server: workspace root root=/tmp',
    });
    assert.equal(parseServerLine('2026-11-30T08:11:38.304558Z  WARN rein: x').level, 'warn');
    assert.equal(parseServerLine('2026-11-30T08:11:38.304558Z DEBUG rein: x').level, 'debug');
});

test('anything else (a panic) stays an error', () => {
    assert.deepEqual(parseServerLine("thread 'main' panicked at src/main.rs:1:1"), {
        level: 'error',
        text: "thread 'main' panicked at src/main.rs:1:1",
    });
});
