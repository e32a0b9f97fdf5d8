// The extension's state: the language client for the workspace folder,
// the tasks heard of, the status bar and the output channels. Commands and
// views get everything through a `Ctx`; `main.ts` only wires.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as vscode from 'vscode';
import * as lc from 'vscode-languageclient/node';

import { Answers } from './answer';
import { createClient } from './client';
import { commandIds } from './command_ids';
import { Config, SECTION } from './config';
import { findServer, SERVER_PATH_SETTING } from './discovery';
import { taskStatus, verification } from './lsp_ext';
import { fixesFor, isAnswer, isUnansweredReview, outcomeToast, reinSays } from './outcome_text';
import { RedactingLogChannel } from './output';
import { isTerminal, type TaskStatus, type Verification } from './protocol';
import { askInstruction } from './instruction';
import { oneLine, plain } from './plain_text';
import { reviewEdit, Reviews } from './review';
import { SecretSet } from './redact';
import { forLog, type Mapped } from './settings';
import { runSetUp } from './setup';
import { providerStatus, type ProviderStatus } from './setup_model';
import { StatusBar } from './status';
import { TaskBook } from './task_book';
import { TaskView } from './task_view';
import { verificationLines } from './verification_text';


/** Questions from the model start so (the server's `LspApprover::ask_user`). */
const QUESTION_PREFIX = 'Rein asks:';

export class Ctx implements vscode.Disposable {
    readonly book = new TaskBook();
    readonly output: RedactingLogChannel;
    /** Task outcomes and the verifier's evidence, for people to read. */
    readonly tasksChannel: vscode.OutputChannel;
    readonly status: StatusBar;
    /** Proposed edits the user is reviewing. */
    readonly reviews: Reviews;
    /** Verifications already written to the tasks channel. */
    private readonly evidenceWritten = new Set<string>();
    private client: lc.LanguageClient | undefined;
    private config: Config | undefined;
    private folder: vscode.WorkspaceFolder | undefined;
    private serverPath: string | undefined;
    /** What the server said of the provider (`rein/providerStatus`). */
    private provider: ProviderStatus | undefined;
    private readonly disposables: vscode.Disposable[] = [];
    /** Every API key this window has read or stored: redacted everywhere. */
    readonly secrets = new SecretSet();
    /** The answers of ended "Ask Rein…" tasks, as read-only Markdown. */
    readonly answers = new Answers();
    /** "Rein: Show Task": a task's report beside the editor, live. */
    readonly taskView: TaskView;

    constructor(readonly extension: vscode.ExtensionContext) {
        this.output = new RedactingLogChannel(vscode.window.createOutputChannel('Rein', { log: true }), this.secrets);
        this.tasksChannel = vscode.window.createOutputChannel('Rein Tasks');
        this.status = new StatusBar(commandIds.taskActions);
        this.reviews = new Reviews(
            this.output,
            () => this.reviewsChanged(),
            (p, outcome) => this.noteReview(p.path, p.taskId, outcome),
        );
        this.taskView = new TaskView({
            binary: () => this.serverPath,
            folder: () => this.folder?.uri.fsPath,
            title: (taskId) => oneLine(this.book.name(taskId), 60),
            openCommand: commandIds.openFile,
            redact: (text) => this.secrets.redact(text),
        });
        this.disposables.push(this.output, this.tasksChannel, this.status, this.reviews, this.answers.register(), this.taskView);
    }

    get workspaceFolder(): vscode.WorkspaceFolder | undefined {
        return this.folder;
    }

    get binary(): string | undefined {
        return this.serverPath;
    }

    settings(): Config {
        if (!this.config) throw new UserError('Rein needs a folder: open one first.');
        return this.config;
    }

    /** The running client, or an error that says what to do. */
    requireClient(): lc.LanguageClient {
        if (!this.client?.isRunning()) {
            throw new UserError(
                'Rein’s server is not running. See the “Rein” output for why, or run “Rein: Restart Server”.',
            );
        }
        return this.client;
    }

    /** Sends one of the server's commands (each takes one object argument). */
    async execute<T>(command: string, argument: object): Promise<T> {
        const client = this.requireClient();
        try {
            return (await client.sendRequest(lc.ExecuteCommandRequest.type, {
                command,
                arguments: [argument],
            })) as T;
        } catch (error) {
            // The server's messages say what is wrong and what to do.
            throw new UserError(error instanceof Error ? error.message : String(error));
        }
    }

    async start(): Promise<void> {
        const folder = vscode.workspace.workspaceFolders?.[0];
        this.folder = folder;
        this.config = new Config(this.extension.secrets, folder, this.secrets);
        // Before anything can log: every stored key is known to the redactor.
        await this.config.loadSecrets();
        if (!folder) {
            this.status.setServer('stopped', 'no folder is open');
            return;
        }
        if ((vscode.workspace.workspaceFolders?.length ?? 0) > 1) {
            this.output.info(`Rein works on the first workspace folder, ${folder.uri.fsPath}.`);
        }
        this.status.setServer('starting');
        const found = await findServer({
            configured: this.config.serverPath(),
            pathEnv: process.env.PATH,
            home: os.homedir(),
            workspaceFolder: folder.uri.fsPath,
            extensionPath: this.extension.extensionPath,
            platform: process.platform,
            isExecutable,
        });
        if (!found.found) {
            this.status.setServer('stopped', found.message);
            this.output.error(found.message);
            void showError(found.message, LOCATE_BINARY, 'Open Settings').then(async (choice) => {
                if (choice === LOCATE_BINARY) await locateBinary();
                else if (choice) void vscode.commands.executeCommand('workbench.action.openSettings', SERVER_PATH_SETTING);
            });
            return;
        }
        this.serverPath = found.path;
        this.output.info(`Starting ${found.path} lsp (found via ${found.source}) in ${folder.uri.fsPath}`);
        const initial = await this.config.serverSettings();
        this.logSettings(initial);
        const client = createClient({
            folder,
            serverPath: found.path,
            config: this.config,
            output: this.output,
            initial,
            onTaskStarted: (taskId) => this.taskStarted(taskId),
            onTaskProgress: (taskId, progress) => {
                const first = progress.goal !== undefined && this.book.progress(taskId).goal === undefined;
                this.book.progressed(taskId, progress);
                if (first) this.tasksChannel.appendLine(this.secrets.redact(`[${stamp()}] ${plain(progress.goal ?? '')} (task ${taskId})`));
                this.showCurrent();
            },
            askInstruction,
            ensureSetUp: () => this.ensureSetUp(),
        });
        this.client = client;
        client.onDidChangeState((e) => {
            if (e.newState === lc.State.Running) this.status.setServer('ready');
            else if (e.newState === lc.State.Stopped) this.status.setServer('stopped', 'see the “Rein” output');
            // A server that stopped waits for no review.
            if (e.newState !== lc.State.Running) this.reviews.withdrawAll();
        });
        client.onRequest(reviewEdit, (params, token) => this.reviews.review(params, token));
        client.onNotification(taskStatus, (s) => this.onTaskStatus(s));
        client.onNotification(verification, (v) => this.onVerification(v));
        client.onNotification(lc.ShowMessageNotification.type, (m) => this.onShowMessage(m));
        try {
            await client.start();
            this.status.setServer('ready');
            void this.refreshProviderStatus();
        } catch (error) {
            const message = `Rein’s server did not start: ${error instanceof Error ? error.message : String(error)}`;
            this.output.error(message);
            this.status.setServer('stopped', message);
            void showError(message, 'Show Output').then((choice) => {
                if (choice) this.output.show();
            });
        }
    }

    /** Asks the server whether a task would find a model; the status bar
     * says "set up" until one would. Whether one is configured. */
    async refreshProviderStatus(): Promise<boolean> {
        const client = this.client;
        if (!client?.isRunning()) return false;
        try {
            this.provider = await client.sendRequest<ProviderStatus>(providerStatus);
        } catch (error) {
            // An older server: nothing to lead to.
            this.output.warn(`${providerStatus}: ${String(error)}`);
            this.provider = undefined;
        }
        this.status.setSetUp(this.provider && !this.provider.configured ? (this.provider.problem ?? 'no model provider') : undefined);
        return this.providerConfigured();
    }

    /** A provider is configured, or the server cannot say. */
    providerConfigured(): boolean {
        return this.provider?.configured ?? true;
    }

    /** Before a task: with no provider, the set-up first (the task goes
     * on only if it ends configured). */
    async ensureSetUp(): Promise<boolean> {
        if (this.providerConfigured()) return true;
        const choice = await vscode.window.showInformationMessage(
            `Rein needs a model before it can work: ${this.provider?.problem ?? 'none is configured'}.`,
            'Set Up…',
        );
        if (!choice) return false;
        return runSetUp(this);
    }

    async stop(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        this.reviews.withdrawAll();
        if (client) {
            try {
                await client.stop();
            } catch (error) {
                this.output.warn(`Stopping the server: ${String(error)}`);
            }
            await client.dispose().catch(() => undefined);
        }
    }

    async restart(): Promise<void> {
        await this.stop();
        this.book.clear();
        this.status.setTask(undefined);
        await this.start();
    }

    /** Settings or keys changed: the server reads them again (it asks with
     * `workspace/configuration`), or restarts if the binary changed. */
    async configurationChanged(e?: vscode.ConfigurationChangeEvent): Promise<void> {
        if (e && !e.affectsConfiguration(SECTION)) return;
        if (e?.affectsConfiguration(SERVER_PATH_SETTING) || !this.client) {
            await this.restart();
            return;
        }
        if (!this.config) return;
        const mapped = await this.config.serverSettings();
        this.logSettings(mapped);
        if (this.client.isRunning()) {
            await this.client.sendNotification(lc.DidChangeConfigurationNotification.type, { settings: null });
        }
        await this.refreshProviderStatus();
    }

    private logSettings(mapped: Mapped): void {
        // Never the key itself: `forLog` replaces it with a marker.
        this.output.info(`Settings for the server: ${JSON.stringify(forLog(mapped.settings))}`);
        for (const problem of mapped.problems) {
            this.output.warn(problem.message);
            void vscode.window.showWarningMessage(`Rein: ${problem.message}.`);
        }
    }

    /** A task we (or a code action) started; its first status may come later. */
    taskStarted(taskId: string): void {
        this.book.started(taskId);
        this.showCurrent();
    }

    private showCurrent(): void {
        const current = this.book.current();
        this.status.setTask(current, current ? this.book.progress(current.taskId) : {});
    }

    private onTaskStatus(s: TaskStatus): void {
        const news = this.book.update(s);
        this.showCurrent();
        this.taskView.changed(s.taskId);
        if (!news) return;
        const what = s.waitingFor ? `waiting for you (${s.waitingFor.kind}: ${s.waitingFor.detail})` : s.state.replace(/_/g, ' ');
        const lines = [`[${stamp()}] ${this.book.name(s.taskId)}: ${what}${s.reason ? ` — ${plain(s.reason)}` : ''}`];
        if (isTerminal(s.state) && s.summary) lines.push(`  Rein’s summary: ${plain(s.summary)}`);
        this.tasksChannel.appendLine(this.secrets.redact(lines.join('\n')));
        if (isTerminal(s.state)) {
            // Its reviews are over too (the server withdraws them; this is
            // in case that message was lost with a dying server).
            for (const r of this.reviews.all().filter((r) => r.taskId === s.taskId)) this.reviews.withdrawReview(r.reviewId);
            // "Accept all remaining edits" ends with the task.
            this.reviews.taskEnded(s.taskId);
            void this.announceOutcome(s);
        } else if (isUnansweredReview(s)) {
            void this.offerResume(s);
        }
    }

    /** A review nobody answered: the task waits; one click shows it again. */
    private async offerResume(s: TaskStatus): Promise<void> {
        const choice = await vscode.window.showWarningMessage(reinSays(plain(s.reason ?? '')), 'Resume Task');
        if (choice === 'Resume Task') await vscode.commands.executeCommand(commandIds.resumeTask, s.taskId);
    }

    private reviewsChanged(): void {
        const all = this.reviews.all();
        void vscode.commands.executeCommand('setContext', 'rein.reviewing', all.length > 0);
        void vscode.commands.executeCommand('setContext', 'rein.reviewHasHunks', all.some((r) => r.hunks.length > 1));
    }

    /** Writes a review's outcome to the tasks channel. */
    noteReview(path: string, taskId: string, what: string): void {
        this.tasksChannel.appendLine(this.secrets.redact(`[${stamp()}] ${this.book.name(taskId)}: the edit to ${path} — ${what}`));
    }

    private async announceOutcome(s: TaskStatus): Promise<void> {
        // An answer is shown in full, beside the editor, at once; the
        // notification only says it came.
        const answer = isAnswer(s) ? this.answers.keep(s, this.book.progress(s.taskId).goal) : undefined;
        if (answer) await this.answers.show(answer);
        const toast = outcomeToast(s);
        if (!toast) return;
        const fixes = fixesFor(s);
        // Outcomes must not pile up: one that needs nothing from the user
        // (a success, an answer shown beside the editor) or that the task
        // view already shows closes itself; the status bar keeps it, and
        // its menu has the evidence, the trace and undo.
        if (fixes.length === 0 && (toast.level === 'info' || this.taskView.shows(s.taskId))) {
            await passingNotification(toast.text);
            return;
        }
        const actions = [
            ...fixes,
            ...(answer ? ['Show Answer'] : []),
            'Show Trace',
            ...(this.book.verification(s.taskId) ? ['Show Evidence'] : []),
        ];
        const show = toast.level === 'info' ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
        const choice = await show(toast.text, ...actions);
        if (choice === 'Set Up…') await vscode.commands.executeCommand(commandIds.setUp);
        if (choice === 'Show Log') this.output.show();
        if (choice === 'Raise the Budget…') await vscode.commands.executeCommand('workbench.action.openSettings', 'rein.max');
        if (choice === 'Show Answer' && answer) await this.answers.show(answer);
        if (choice === 'Show Trace') await vscode.commands.executeCommand(commandIds.showTrace, s.taskId);
        if (choice === 'Show Evidence') await vscode.commands.executeCommand(commandIds.showEvidence, s.taskId);
    }

    private onVerification(v: Verification): void {
        this.book.verified(v);
        this.taskView.changed(v.taskId);
        this.writeEvidence(v);
    }

    /** The verifier's evidence in the tasks channel, once per verification. */
    writeEvidence(v: Verification): void {
        const key = JSON.stringify(v);
        if (this.evidenceWritten.has(key)) return;
        this.evidenceWritten.add(key);
        for (const line of verificationLines(v)) this.tasksChannel.appendLine(this.secrets.redact(line));
    }

    /** `window/showMessage`, as the language client shows it, except that a
     * question from the model gets an "Answer…" button. */
    private async onShowMessage(m: lc.ShowMessageParams): Promise<void> {
        const question = m.message.startsWith(QUESTION_PREFIX);
        const show =
            m.type === lc.MessageType.Error
                ? vscode.window.showErrorMessage
                : m.type === lc.MessageType.Warning
                  ? vscode.window.showWarningMessage
                  : vscode.window.showInformationMessage;
        const choice = await show(plain(m.message), ...(question ? ['Answer…'] : []));
        if (choice === 'Answer…') await vscode.commands.executeCommand(commandIds.answer);
    }

    dispose(): void {
        void this.stop();
        for (const d of this.disposables) d.dispose();
    }
}

/** How long an outcome that needs nothing from the user stays on screen. */
const PASSING_NOTIFICATION_MS = 12_000;

/** A notification that closes itself (VS Code's message toasts cannot be
 * closed by an extension; a finished progress notification can). */
function passingNotification(text: string): Thenable<void> {
    return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: text }, async (progress) => {
        progress.report({ increment: 100 });
        await new Promise((resolve) => setTimeout(resolve, PASSING_NOTIFICATION_MS));
    });
}

function stamp(): string {
    return new Date().toISOString();
}

/** An error whose message is for the user as it stands. */
export class UserError extends Error {}

const LOCATE_BINARY = 'Locate Binary…';

/** Asks for the `rein` program and sets `rein.server.path` to it (the
 * setting's change restarts the server). */
async function locateBinary(): Promise<void> {
    const picked = await vscode.window.showOpenDialog({
        title: 'Locate the rein program (Rein’s server)',
        openLabel: 'Use This Binary',
        canSelectFiles: true,
        canSelectFolders: false,
        canSelectMany: false,
    });
    const file = picked?.[0];
    if (!file) return;
    await vscode.workspace
        .getConfiguration()
        .update(SERVER_PATH_SETTING, file.fsPath, vscode.ConfigurationTarget.Global);
}

function showError(message: string, ...actions: string[]): Thenable<string | undefined> {
    return vscode.window.showErrorMessage(reinSays(message), ...actions);
}

async function isExecutable(file: string): Promise<boolean> {
    try {
        const stat = await fs.promises.stat(file);
        if (!stat.isFile()) return false;
        if (process.platform !== 'win32') await fs.promises.access(file, fs.constants.X_OK);
        return true;
    } catch {
        return false;
    }
}
