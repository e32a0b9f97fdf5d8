import assert from 'node:assert/strict';
import { test } from 'node:test';

import { verificationLines } from '../../src/verification_text';

test('the evidence reads like `rein demo` prints it', () => {
    const lines = verificationLines({
        taskId: 't-1',
        passed: true,
        detail: 'test_total passes',
        evidence: [
            {
                check: 'target test',
                command: 'python3 -m unittest tests.test_cart.TestCart.test_total',
                exitCode: 0,
                durationMs: 1234,
                files: [{ path: 'cart.py', contentHash: '0123456789abcdef0123' }],
                logPath: '.rein/artifacts/t-1/test-1.log',
                failures: [],
            },
            { check: 'suite', command: 'x', exitCode: null, durationMs: 10, files: [], logPath: null, failures: ['test_a'] },
        ],
    });
    assert.deepEqual(lines, [
        '✔ verification passed (task t-1): test_total passes',
        '  check     target test',
        '  command   python3 -m unittest tests.test_cart.TestCart.test_total',
        '  result    exit code 0 in 1.2 s',
        '  file      cart.py @ 0123456789ab',
        '  log       .rein/artifacts/t-1/test-1.log',
        '  check     suite',
        '  command   x',
        '  result    no exit code (killed or timed out) in 0.0 s',
        '  failing   test_a',
    ]);
});
