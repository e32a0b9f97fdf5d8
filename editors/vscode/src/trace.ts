// "Rein: Show Trace": `rein trace <task> --html <file> --workspace <folder>`
// writes the task's self-contained report, which opens in a webview.

import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';

/** `rein trace` reads one JSONL file; a large one takes a moment, not minutes. */
const TRACE_TIMEOUT_MS = 120_000;

/** Task ids that have a trace in the folder, most recent first. */
export async function tracedTasks(folder: string): Promise<string[]> {
    const dir = path.join(folder, '.rein', 'traces');
    let names: string[];
    try {
        names = await fs.promises.readdir(dir);
    } catch {
        return [];
    }
    const traced = await Promise.all(
        names
            .filter((n) => n.endsWith('.jsonl'))
            .map(async (n) => ({ id: n.slice(0, -'.jsonl'.length), mtime: (await fs.promises.stat(path.join(dir, n))).mtimeMs })),
    );
    return traced.sort((a, b) => b.mtime - a.mtime).map((t) => t.id);
}

/** Writes the HTML report of a task and returns its text. */
export async function renderTrace(binary: string, folder: string, taskId: string): Promise<string> {
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'rein-trace-'));
    const file = path.join(dir, 'report.html');
    try {
        await new Promise<void>((resolve, reject) => {
            execFile(
                binary,
                ['trace', taskId, '--html', file, '--workspace', folder],
                { cwd: folder, timeout: TRACE_TIMEOUT_MS, env: { ...process.env, NO_COLOR: '1' } },
                (error, _stdout, stderr) => {
                    if (error) reject(new Error(stderr.trim() || error.message));
                    else resolve();
                },
            );
        });
        return await fs.promises.readFile(file, 'utf8');
    } finally {
        await fs.promises.rm(dir, { recursive: true, force: true });
    }
}

export function showTraceWebview(taskId: string, html: string, openCommand: string): vscode.WebviewPanel {
    const panel = vscode.window.createWebviewPanel(
        'rein.trace',
        `Rein trace ${taskId}`,
        vscode.ViewColumn.Active,
        // The report is one self-contained page: its own script (the chart),
        // no network, no files; its links to logs run one command of ours.
        { enableScripts: true, localResourceRoots: [], enableCommandUris: [openCommand] },
    );
    panel.webview.html = html;
    return panel;
}
