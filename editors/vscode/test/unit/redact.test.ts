import assert from 'node:assert/strict';
import { test } from 'node:test';
import type * as vscode from 'vscode';

import { RedactingLogChannel } from '../../src/output';
import { REDACTED, redact, SecretSet } from '../../src/redact';

const KEY = 'sk-ant-api03-abc"def\\ghi-0123';

test('every occurrence is replaced, raw and JSON-escaped', () => {
    const traced = JSON.stringify({ initializationOptions: { apiKey: KEY } });
    assert.ok(traced.includes('abc\\"def'), 'the trace form escapes');
    assert.ok(!redact(traced, [KEY]).includes('abc'), redact(traced, [KEY]));
    assert.equal(redact(`${KEY} and ${KEY}`, [KEY]), `${REDACTED} and ${REDACTED}`);
});

test('short strings are not treated as secrets', () => {
    assert.equal(redact('a b c', ['a']), 'a b c');
});

/** A LogOutputChannel that records what reaches it. */
function recorder(): { channel: vscode.LogOutputChannel; lines: string[] } {
    const lines: string[] = [];
    const record = (...parts: unknown[]) => lines.push(parts.map(String).join(' '));
    const channel = {
        name: 'Rein',
        logLevel: 1,
        onDidChangeLogLevel: () => ({ dispose() {} }),
        trace: record,
        debug: record,
        info: record,
        warn: record,
        error: record,
        append: record,
        appendLine: record,
        replace: record,
        clear() {},
        show() {},
        hide() {},
        dispose() {},
    } as unknown as vscode.LogOutputChannel;
    return { channel, lines };
}

test('the output channel never receives a known key, whichever method writes', () => {
    const { channel, lines } = recorder();
    const secrets = new SecretSet();
    secrets.add(KEY);
    const out = new RedactingLogChannel(channel, secrets);
    out.trace(`Sending request 'initialize'. Params: ${JSON.stringify({ apiKey: KEY })}`);
    out.info('settings', { apiKey: KEY });
    out.warn(KEY);
    out.error(new Error(`bad key ${KEY}`));
    out.append(KEY);
    out.appendLine(`[server] ${KEY}`);
    out.replace(KEY);
    assert.equal(lines.length, 7);
    for (const line of lines) {
        assert.ok(!line.includes('abc'), line);
        assert.ok(line.includes(REDACTED), line);
    }
});

test('a key stored later is redacted from then on', () => {
    const { channel, lines } = recorder();
    const secrets = new SecretSet();
    const out = new RedactingLogChannel(channel, secrets);
    secrets.add('sk-new-key-456789');
    out.info('key sk-new-key-456789');
    assert.deepEqual(lines, [`key ${REDACTED}`]);
});
