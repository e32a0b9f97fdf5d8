// "Ask Rein…": the answer, in full, as Markdown beside the editor — a
// read-only document of its own scheme (nothing to save, nothing rendered
// or run: the model's words are untrusted).

import * as vscode from 'vscode';

import { answerMarkdown } from './outcome_text';
import type { TaskStatus } from './protocol';

export const ANSWER_SCHEME = 'rein-answer';

export class Answers implements vscode.TextDocumentContentProvider {
    private readonly texts = new Map<string, string>();
    private readonly changed = new vscode.EventEmitter<vscode.Uri>();
    readonly onDidChange = this.changed.event;

    register(): vscode.Disposable {
        return vscode.Disposable.from(vscode.workspace.registerTextDocumentContentProvider(ANSWER_SCHEME, this), this.changed);
    }

    provideTextDocumentContent(uri: vscode.Uri): string {
        return this.texts.get(uri.path) ?? '';
    }

    /** Keeps the answer of an ended task; its document's address. */
    keep(s: TaskStatus, goal?: string): vscode.Uri {
        // The `.md` ending makes it Markdown; the id keeps answers apart.
        const uri = vscode.Uri.from({ scheme: ANSWER_SCHEME, path: `/${s.taskId.replace(/[^\w.-]/g, '_')}/answer.md` });
        this.texts.set(uri.path, answerMarkdown(s, goal));
        this.changed.fire(uri);
        return uri;
    }

    /** Opens the answer beside the current editor, without taking the focus. */
    async show(uri: vscode.Uri): Promise<void> {
        const doc = await vscode.workspace.openTextDocument(uri);
        await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
        await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true, preview: true });
    }
}
