// The trace report's links to files, made to work in a webview. Pure (no
// `vscode`), unit-tested.

import * as path from 'node:path';

/** A webview cannot follow a `file:` link: the report's links to files in
 * the workspace (its logs) become links that run `openCommand` with the
 * path. Links elsewhere stay as they are (the path is shown as text). */
export function linkFiles(html: string, folder: string, openCommand: string): string {
    return html.replace(/href="(file:\/\/[^"]*)"/g, (whole, escaped: string) => {
        let file: string;
        try {
            file = decodeURIComponent(new URL(unescapeHtml(escaped)).pathname);
        } catch {
            return whole;
        }
        const inside = path.relative(folder, file);
        if (inside === '' || inside.startsWith('..') || path.isAbsolute(inside)) return whole;
        const args = encodeURIComponent(JSON.stringify([file]));
        return `href="command:${openCommand}?${args}" title="${escapeHtml(inside)}"`;
    });
}

function unescapeHtml(s: string): string {
    return s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

function escapeHtml(s: string): string {
    return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
