// "Rein: Show Task": a task beside the editor, kept up to date while it
// runs — its steps, the model's words, each edit and the verification
// with what the tests printed. It is the trace report (`rein trace
// --html`, as "Show Trace"), rendered again as the task's status changes
// (at most every RERENDER_MS) and once more when it ends; the page keeps
// the reader's place (`task_view_page.ts`).

import * as vscode from 'vscode';

import { renderTrace } from './trace';
import { linkFiles } from './trace_links';
import { keepScroll } from './task_view_page';

const RERENDER_MS = 750;

export interface TaskViewHost {
    binary(): string | undefined;
    folder(): string | undefined;
    /** The task's goal, for the tab's title. */
    title(taskId: string): string;
    /** The command the report's links to logs run. */
    openCommand: string;
    /** Keys this window knows, taken out (the server redacts the trace
     * already; this is the window's own guard). */
    redact(text: string): string;
}

export class TaskView implements vscode.Disposable {
    private panel: vscode.WebviewPanel | undefined;
    private taskId: string | undefined;
    private timer: NodeJS.Timeout | undefined;
    private busy = false;
    private again = false;

    constructor(private readonly host: TaskViewHost) {}

    /** Shows `taskId`, scrolled to the report's section `anchor` if given. */
    async show(taskId: string, anchor?: string): Promise<void> {
        if (!this.panel) {
            this.panel = vscode.window.createWebviewPanel(
                'rein.task',
                'Rein',
                { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
                // The report is one self-contained page: its own scripts, no
                // network, no files; its links to logs run one command of ours.
                { enableScripts: true, localResourceRoots: [], enableCommandUris: [this.host.openCommand] },
            );
            this.panel.onDidDispose(() => {
                clearTimeout(this.timer);
                this.panel = undefined;
                this.taskId = undefined;
            });
        } else {
            this.panel.reveal(undefined, true);
        }
        this.taskId = taskId;
        this.panel.title = `Rein: ${this.host.title(taskId)}`;
        await this.render(anchor);
    }

    /** Whether the view shows `taskId`. */
    shows(taskId: string): boolean {
        return this.panel !== undefined && this.taskId === taskId;
    }

    /** Something about `taskId` changed: render again soon if it is shown. */
    changed(taskId: string): void {
        if (!this.shows(taskId) || this.timer) return;
        this.timer = setTimeout(() => {
            this.timer = undefined;
            void this.render();
        }, RERENDER_MS);
    }

    dispose(): void {
        clearTimeout(this.timer);
        this.panel?.dispose();
    }

    private async render(anchor?: string): Promise<void> {
        // One `rein trace` at a time; a change meanwhile renders once more.
        if (this.busy) {
            this.again = true;
            return;
        }
        const { panel, taskId } = this;
        const binary = this.host.binary();
        const folder = this.host.folder();
        if (!panel || !taskId || !binary || !folder) return;
        this.busy = true;
        try {
            const html = await renderTrace(binary, folder, taskId);
            if (this.panel === panel && this.taskId === taskId) {
                panel.webview.html = keepScroll(linkFiles(this.host.redact(html), folder, this.host.openCommand), anchor);
            }
        } catch (error) {
            // Before the task's first step there is no trace yet: say so and
            // wait for the next change.
            if (this.panel === panel) panel.webview.html = waiting(String((error as Error)?.message ?? error));
        } finally {
            this.busy = false;
        }
        if (this.again) {
            this.again = false;
            await this.render();
        }
    }
}

function waiting(detail: string): string {
    const text = detail.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').slice(0, 500);
    return `<!DOCTYPE html><html><body><p>The task has not written its first step yet.</p><p style="opacity:.7">${text}</p></body></html>`;
}
