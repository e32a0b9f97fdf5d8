// Output channels that never print an API key. The language client writes
// the server's stderr and, when tracing, every LSP message (including the
// `initialize` options and `workspace/configuration` answers that carry
// the key) to its channels; VS Code also saves channels to its log folder.
// So every channel the extension owns is one of these.

import type * as vscode from 'vscode';

import { SecretSet } from './redact';

export class RedactingLogChannel implements vscode.LogOutputChannel {
    constructor(
        private readonly inner: vscode.LogOutputChannel,
        private readonly secrets: SecretSet,
    ) {}

    get name(): string {
        return this.inner.name;
    }

    get logLevel(): vscode.LogLevel {
        return this.inner.logLevel;
    }

    get onDidChangeLogLevel(): vscode.Event<vscode.LogLevel> {
        return this.inner.onDidChangeLogLevel;
    }

    trace(message: string, ...args: unknown[]): void {
        this.inner.trace(this.clean(message, args));
    }

    debug(message: string, ...args: unknown[]): void {
        this.inner.debug(this.clean(message, args));
    }

    info(message: string, ...args: unknown[]): void {
        this.inner.info(this.clean(message, args));
    }

    warn(message: string, ...args: unknown[]): void {
        this.inner.warn(this.clean(message, args));
    }

    error(error: string | Error, ...args: unknown[]): void {
        const message = typeof error === 'string' ? error : (error.stack ?? error.message);
        this.inner.error(this.clean(message, args));
    }

    append(value: string): void {
        this.inner.append(this.secrets.redact(value));
    }

    appendLine(value: string): void {
        this.inner.appendLine(this.secrets.redact(value));
    }

    replace(value: string): void {
        this.inner.replace(this.secrets.redact(value));
    }

    clear(): void {
        this.inner.clear();
    }

    show(preserveFocus?: boolean): void;
    show(column?: vscode.ViewColumn, preserveFocus?: boolean): void;
    show(a?: boolean | vscode.ViewColumn, b?: boolean): void {
        // The column form is deprecated; the focus flag is what matters.
        this.inner.show(typeof a === 'boolean' ? a : b);
    }

    hide(): void {
        this.inner.hide();
    }

    dispose(): void {
        this.inner.dispose();
    }

    /** The message and its arguments as one redacted string (VS Code would
     * format the arguments itself, out of our reach). */
    private clean(message: string, args: unknown[]): string {
        const parts = [message, ...args.map(stringify)];
        return this.secrets.redact(parts.join(' '));
    }
}

function stringify(value: unknown): string {
    if (typeof value === 'string') return value;
    if (value instanceof Error) return value.stack ?? value.message;
    try {
        return JSON.stringify(value);
    } catch {
        return String(value);
    }
}
