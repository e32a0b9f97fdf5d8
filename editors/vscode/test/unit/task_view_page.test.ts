import assert from 'node:assert/strict';
import { test } from 'node:test';

import { keepScroll } from '../../src/task_view_page';

const page = '<!DOCTYPE html><html><body><section id="verification">v</section><script>chart()</script></body></html>';

test('the script goes last in the body, after the report’s own', () => {
    const html = keepScroll(page);
    assert.ok(html.indexOf('chart()') < html.indexOf('acquireVsCodeApi'));
    assert.ok(html.endsWith('</body></html>'));
    assert.match(html, /const anchor = "";/);
});

test('an anchor is one of the report’s ids, never script', () => {
    assert.match(keepScroll(page, 'verification'), /const anchor = "verification";/);
    for (const hostile of ['"; alert(1); "', '</script><script>alert(1)', 'x y', 'Verification']) {
        assert.match(keepScroll(page, hostile), /const anchor = "";/, hostile);
    }
});

test('a page without a body still gets the script', () => {
    assert.ok(keepScroll('<p>x</p>').startsWith('<p>x</p><script>'));
});
