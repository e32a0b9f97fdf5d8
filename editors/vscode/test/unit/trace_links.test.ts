import assert from 'node:assert/strict';
import { test } from 'node:test';

import { linkFiles } from '../../src/trace_links';

const open = 'rein.vscode.openFile';

test('links to logs in the workspace run the open command with the path', () => {
    const html = '<a href="file:///home/dev/my%20shop/.rein/artifacts/t-1/run%201.log">run 1.log</a>';
    const out = linkFiles(html, '/home/dev/my shop', open);
    const args = encodeURIComponent(JSON.stringify(['/home/dev/my shop/.rein/artifacts/t-1/run 1.log']));
    assert.equal(out, `<a href="command:${open}?${args}" title=".rein/artifacts/t-1/run 1.log">run 1.log</a>`);
});

test('links outside the workspace, or odd ones, are left alone', () => {
    for (const html of [
        '<a href="file:///etc/passwd">x</a>',
        '<a href="file:///home/dev/my%20shop/../other/x.log">x</a>',
        '<a href="javascript:alert(1)">x</a>',
        '<a href="#summary">Summary</a>',
        '<a href="file://%zz">x</a>',
    ]) {
        assert.equal(linkFiles(html, '/home/dev/my shop', open), html, html);
    }
});

test('an escaped quote in a path cannot break out of the attribute', () => {
    const html = '<a href="file:///w/%22%3E%3Cscript%3E.log">x</a>';
    const out = linkFiles(html, '/w', open);
    assert.ok(!out.includes('<script'), out);
    assert.ok(out.includes('title="&quot;&gt;&lt;script&gt;.log"'), out);
});
