// The extension's commands (ids in `ctx.ts`). Each one turns a user action
// into one of the server's commands, or shows what the server reported.

import * as path from 'node:path';
import * as vscode from 'vscode';
import * as lc from 'vscode-languageclient/node';

import { commandIds } from './command_ids';
import { Ctx, UserError } from './ctx';
import { askInstruction } from './instruction';
import { oneLine, plain } from './plain_text';
import { inert } from './review_model';
import { isTerminal, serverCommands, type FixTestArgs, type RunTaskArgs, type TaskStarted, type TaskStatus } from './protocol';
import { AUTO_PROVIDER, KEYED_PROVIDERS } from './settings';
import { spentLine, waitingWords } from './status_text';
import type { TaskAction } from './task_book';
import { testPlace } from './test_item';
import { renderTrace, showTraceWebview, tracedTasks } from './trace';
import { linkFiles } from './trace_links';
import { undoTask } from './undo';

type Handler = (ctx: Ctx, ...args: unknown[]) => Promise<void>;

const handlers: Record<string, Handler> = {
    [commandIds.fixTestAtCursor]: fixTestAtCursor,
    [commandIds.fixTestItem]: fixTestItem,
    [commandIds.ask]: ask,
    [commandIds.cancelTask]: (ctx, id) => cancelTask(ctx, asId(id)),
    [commandIds.resumeTask]: (ctx, id) => resumeTask(ctx, asId(id)),
    [commandIds.undoTask]: (ctx, id) => undoTask(ctx, asId(id)),
    [commandIds.answer]: (ctx, id) => answer(ctx, asId(id)),
    [commandIds.showTrace]: (ctx, id) => showTrace(ctx, asId(id)),
    [commandIds.showEvidence]: (ctx, id) => showEvidence(ctx, asId(id)),
    [commandIds.showTask]: (ctx, id) => showTask(ctx, asId(id)),
    [commandIds.taskActions]: taskActions,
    [commandIds.setApiKey]: setApiKey,
    [commandIds.clearApiKey]: clearApiKey,
    [commandIds.showOutput]: async (ctx) => ctx.output.show(),
    [commandIds.restartServer]: (ctx) => ctx.restart(),
    [commandIds.reviewEdit]: (ctx, arg) => withReview(ctx, arg, (id) => ctx.reviews.show(id)),
    [commandIds.acceptEdit]: (ctx, arg) => withReview(ctx, arg, async (id) => ctx.reviews.accept(id)),
    [commandIds.rejectEdit]: (ctx, arg) => withReview(ctx, arg, async (id) => ctx.reviews.reject(id)),
    [commandIds.rejectEditWithFeedback]: (ctx, arg) =>
        withReview(ctx, arg, async (id) => {
            const file = ctx.reviews.all().find((r) => r.reviewId === id)?.path;
            const words = await vscode.window.showInputBox({
                title: file ? `Reject Rein’s edit to ${inert(file, 200)}` : 'Reject Rein’s edit',
                prompt: 'Why, or what should Rein do instead? Optional: Rein’s model reads it. Escape keeps the review open.',
                ignoreFocusOut: true,
            });
            if (words !== undefined) ctx.reviews.reject(id, words);
        }),
    [commandIds.acceptRemainingEdits]: (ctx, arg) => withReview(ctx, arg, async (id) => ctx.reviews.acceptRest(id)),
    [commandIds.chooseChanges]: (ctx, arg) => withReview(ctx, arg, (id) => ctx.reviews.choose(id)),
    [commandIds.openFile]: (ctx, file) => openWorkspaceFile(ctx, file),
    [commandIds.showNotifications]: async () => {
        await vscode.commands.executeCommand('notifications.showList');
    },
};

/** Opens a file of the workspace (a log the trace report links to). The
 * path comes from a web page: only a file inside the folder opens. */
async function openWorkspaceFile(ctx: Ctx, file: unknown): Promise<void> {
    const folder = ctx.workspaceFolder?.uri.fsPath;
    if (typeof file !== 'string' || !folder) return;
    const inside = path.relative(folder, file);
    if (inside === '' || inside.startsWith('..') || path.isAbsolute(inside)) {
        throw new UserError(`Rein opens only files in the workspace folder, not ${file}.`);
    }
    await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true });
}

/** Runs `act` on a review: the one the argument names (a review
 * document's URI from the title bar, a task id from the status menu), the
 * active diff's, the only one, or the user's pick. */
async function withReview(ctx: Ctx, arg: unknown, act: (reviewId: string) => Promise<void>): Promise<void> {
    let id: string | undefined;
    if (arg instanceof vscode.Uri) id = ctx.reviews.current(arg);
    else if (typeof arg === 'string') id = ctx.reviews.forTask(arg)?.reviewId;
    else if (isReviewRef(arg)) id = arg.reviewId;
    id ??= ctx.reviews.current();
    if (!id) {
        const all = ctx.reviews.all();
        if (all.length === 0) throw new UserError('Rein has no edit waiting for your review.');
        const picked = await vscode.window.showQuickPick(
            all.map((r) => ({ label: r.path, description: plain(r.label), id: r.reviewId })),
            { title: 'Which of Rein’s proposed edits?' },
        );
        id = picked?.id;
    }
    if (id) await act(id);
}

/** A lens's argument: `{ reviewId }`. */
function isReviewRef(arg: unknown): arg is { reviewId: string } {
    return typeof arg === 'object' && arg !== null && typeof (arg as { reviewId?: unknown }).reviewId === 'string';
}

export function registerCommands(ctx: Ctx): vscode.Disposable[] {
    return Object.entries(handlers).map(([id, handler]) =>
        vscode.commands.registerCommand(id, async (...args: unknown[]) => {
            try {
                await handler(ctx, ...args);
            } catch (error) {
                // Every failure ends as a message the user can act on; none
                // is left as an unhandled rejection.
                const message = error instanceof Error ? error.message : String(error);
                if (!(error instanceof UserError)) ctx.output.error(`${id}: ${message}`);
                void vscode.window.showErrorMessage(`Rein: ${message}`);
            }
        }),
    );
}

function asId(value: unknown): string | undefined {
    return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Asks the server for the code actions at the cursor and runs its
 * "Fix test … with Rein" (the same action the light bulb offers). */
async function fixTestAtCursor(ctx: Ctx): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) throw new UserError('Open a test file and put the cursor inside a failing test first.');
    await fixTestAt(ctx, editor.document, editor.selection);
}

/** "Fix with Rein" on a test of the Testing view (any extension's): the
 * test's file opens at the test, then as "Fix Test at Cursor". */
async function fixTestItem(ctx: Ctx, arg: unknown): Promise<void> {
    const place = testPlace(arg);
    if (typeof place === 'string') throw new UserError(place);
    if (!(place.uri instanceof vscode.Uri)) throw new UserError('This test has no file Rein can open.');
    const document = await vscode.workspace.openTextDocument(place.uri);
    const line = Math.min(place.line, Math.max(0, document.lineCount - 1));
    const at = document.validatePosition(new vscode.Position(line, place.character));
    const editor = await vscode.window.showTextDocument(document, { selection: new vscode.Range(at, at) });
    await fixTestAt(ctx, editor.document, editor.selection);
}

async function fixTestAt(ctx: Ctx, document: vscode.TextDocument, selection: vscode.Range): Promise<void> {
    const client = ctx.requireClient();
    const c2p = client.code2ProtocolConverter;
    const actions = await client.sendRequest(lc.CodeActionRequest.type, {
        textDocument: c2p.asTextDocumentIdentifier(document),
        range: c2p.asRange(selection),
        context: { diagnostics: [], triggerKind: lc.CodeActionTriggerKind.Invoked },
    });
    const fix = (actions ?? [])
        .map((a) => (lc.Command.is(a) ? a : a.command))
        .find((c): c is lc.Command => c?.command === serverCommands.fixTest);
    if (!fix?.arguments?.[0]) {
        throw new UserError(
            'There is no test at the cursor that Rein can fix. Put the cursor inside a test ' +
                '(Python def test_…, Rust #[test] fn, JS/TS it(…)/test(…), Go func TestX) in a file of the workspace folder.',
        );
    }
    const started = await ctx.execute<TaskStarted>(serverCommands.fixTest, fix.arguments[0] as FixTestArgs);
    ctx.taskStarted(started.taskId);
}

/** "Ask Rein…": an instruction, about the selection if there is one. */
async function ask(ctx: Ctx): Promise<void> {
    const client = ctx.requireClient();
    const instruction = await askInstruction();
    if (instruction === undefined) return;
    const args: RunTaskArgs = { instruction };
    const editor = vscode.window.activeTextEditor;
    const folder = ctx.workspaceFolder;
    if (editor && folder && vscode.workspace.getWorkspaceFolder(editor.document.uri)?.uri.toString() === folder.uri.toString()) {
        args.uri = client.code2ProtocolConverter.asUri(editor.document.uri);
        if (!editor.selection.isEmpty) args.range = client.code2ProtocolConverter.asRange(editor.selection);
    }
    const started = await ctx.execute<TaskStarted>(serverCommands.runTask, args);
    ctx.taskStarted(started.taskId);
}

async function cancelTask(ctx: Ctx, id?: string): Promise<void> {
    const taskId = id ?? (await pickTask(ctx, ctx.book.active(), 'No Rein task is running.', 'Cancel which task?'));
    if (!taskId) return;
    const { cancelled } = await ctx.execute<{ cancelled: boolean }>(serverCommands.cancelTask, { taskId });
    if (!cancelled) void vscode.window.showInformationMessage(`Rein: ${ctx.book.name(taskId)} is not running (it may just have ended).`);
}

async function resumeTask(ctx: Ctx, id?: string): Promise<void> {
    let taskId = id;
    if (!taskId) {
        const waiting = ctx.book.active();
        const typeIt = 'Enter a task id…';
        const picked = await vscode.window.showQuickPick([...waiting.map((s) => item(s, ctx.book.name(s.taskId))), { label: typeIt, taskId: '' }], {
            title: 'Resume which Rein task?',
            placeHolder: 'A task stopped by a crash or waiting for you',
        });
        if (!picked) return;
        taskId =
            picked.label === typeIt
                ? await vscode.window.showInputBox({ title: 'Resume a Rein task', prompt: 'The task id (as the trace shows it)' })
                : picked.taskId;
        if (!taskId) return;
    }
    const started = await ctx.execute<TaskStarted>(serverCommands.resumeTask, { taskId });
    ctx.taskStarted(started.taskId);
}

/** Answers a question the model asked (the task is `waiting_user`). */
async function answer(ctx: Ctx, id?: string): Promise<void> {
    const candidates = ctx.book.waiting().length > 0 ? ctx.book.waiting() : ctx.book.active();
    const taskId = id ?? (await pickTask(ctx, candidates, 'No Rein task is waiting for an answer.', 'Answer which task?'));
    if (!taskId) return;
    const reason = ctx.book.get(taskId)?.reason;
    const question = reason ? plain(reason) : undefined;
    const text = await vscode.window.showInputBox({
        title: 'Answer Rein',
        prompt: question ?? 'Rein asked a question (see the notification).',
        ignoreFocusOut: true,
        validateInput: (t) => (t.trim() === '' ? 'Type an answer.' : undefined),
    });
    if (text === undefined) return;
    await ctx.execute(serverCommands.answer, { taskId, text });
}

async function showTrace(ctx: Ctx, id?: string): Promise<void> {
    const folder = ctx.workspaceFolder;
    const binary = ctx.binary;
    if (!folder || !binary) throw new UserError('Rein’s server is not set up for this window; see the “Rein” output.');
    let taskId = id;
    if (!taskId) {
        const known = ctx.book.all();
        const onDisk = (await tracedTasks(folder.uri.fsPath)).filter((t) => !ctx.book.get(t));
        const items = [...known.map((s) => item(s, ctx.book.name(s.taskId))), ...onDisk.map((t) => ({ label: t, description: 'from an earlier session', taskId: t }))];
        if (items.length === 0) throw new UserError('No Rein task has a trace in this folder yet.');
        taskId = (await vscode.window.showQuickPick(items, { title: 'Show the trace of which task?' }))?.taskId;
        if (!taskId) return;
    }
    const html = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: `Rein: writing the trace of ${taskId}` },
        () => renderTrace(binary, folder.uri.fsPath, taskId),
    );
    showTraceWebview(taskId, linkFiles(html, folder.uri.fsPath, commandIds.openFile), commandIds.openFile);
}

/** The evidence, rendered: the task's report at its verification (each
 * check, its command, exit code, the files it ran on and what the tests
 * printed); the plain lines stay in the "Rein Tasks" channel. */
async function showEvidence(ctx: Ctx, id?: string): Promise<void> {
    const taskId = id ?? ctx.book.current()?.taskId;
    const v = taskId ? ctx.book.verification(taskId) : undefined;
    if (!taskId || !v) throw new UserError('Rein has not verified that task: there is no evidence to show.');
    // Written when it arrived; written again only if it was not.
    ctx.writeEvidence(v);
    await ctx.taskView.show(taskId, 'verification');
}

/** "Rein: Show Task": the current task (or one picked) beside the editor,
 * kept up to date while it runs. */
async function showTask(ctx: Ctx, id?: string): Promise<void> {
    let taskId = id ?? ctx.book.current()?.taskId;
    if (!taskId) {
        const known = ctx.book.all();
        if (known.length === 0) throw new UserError('No Rein task in this window yet: start one (Fix Test at Cursor, Ask Rein…).');
        taskId = (await vscode.window.showQuickPick(known.map((s) => item(s, ctx.book.name(s.taskId))), { title: 'Show which task?' }))?.taskId;
        if (!taskId) return;
    }
    if (!ctx.workspaceFolder || !ctx.binary) throw new UserError('Rein’s server is not set up for this window; see the “Rein” output.');
    await ctx.taskView.show(taskId);
}

/** The status bar's menu: the current task (its goal, where it stands,
 * its outcome and summary), what can be done with it, and the general
 * commands. */
async function taskActions(ctx: Ctx): Promise<void> {
    const current = ctx.book.current();
    const labels: Record<TaskAction, string> = {
        review: '$(eye) Review the proposed edit',
        approval: '$(bell) Show the question (allow or deny a command)',
        answer: '$(comment) Answer the question…',
        cancel: '$(circle-slash) Cancel the task',
        resume: '$(debug-continue) Resume the task',
        trace: '$(list-tree) Show the task (its steps, live)',
        evidence: '$(checklist) Show the verification evidence',
    };
    const run: Record<TaskAction, string> = {
        review: commandIds.reviewEdit,
        approval: commandIds.showNotifications,
        answer: commandIds.answer,
        cancel: commandIds.cancelTask,
        resume: commandIds.resumeTask,
        trace: commandIds.showTask,
        evidence: commandIds.showEvidence,
    };
    type Item = vscode.QuickPickItem & { command?: string; arg?: string };
    const items: Item[] = [];
    if (current) {
        items.push({ label: oneLine(ctx.book.name(current.taskId), 80), kind: vscode.QuickPickItemKind.Separator });
        items.push(outcomeItem(current));
        for (const action of ctx.book.actions(current.taskId)) {
            items.push({ label: labels[action], command: run[action], arg: current.taskId });
            if (action === 'review') {
                items.push(
                    { label: '$(check) Accept the proposed edit', command: commandIds.acceptEdit, arg: current.taskId },
                    { label: '$(close) Reject the proposed edit…', command: commandIds.rejectEditWithFeedback, arg: current.taskId },
                    {
                        label: '$(check-all) Accept all remaining edits of this task',
                        command: commandIds.acceptRemainingEdits,
                        arg: current.taskId,
                    },
                );
            }
        }
        if (isTerminal(current.state)) {
            items.push({ label: '$(discard) Undo Rein’s changes (keeps yours)', command: commandIds.undoTask, arg: current.taskId });
        }
        items.push({ label: 'Rein', kind: vscode.QuickPickItemKind.Separator });
    }
    items.push(
        { label: '$(beaker) Fix Test at Cursor', command: commandIds.fixTestAtCursor },
        { label: '$(sparkle) Ask Rein…', command: commandIds.ask },
        { label: '$(output) Show Output', command: commandIds.showOutput },
        { label: '$(debug-restart) Restart Server', command: commandIds.restartServer },
    );
    const picked = await vscode.window.showQuickPick(items, {
        title: current ? `Rein: ${oneLine(ctx.book.name(current.taskId), 80)}` : 'Rein',
        placeHolder: 'What to do',
    });
    if (picked?.command) await vscode.commands.executeCommand(picked.command, picked.arg);
}

/** Where the task stands, as the menu's first row (not a command). */
function outcomeItem(s: TaskStatus): vscode.QuickPickItem {
    const icon: Record<TaskStatus['state'], string> = {
        queued: 'sync',
        running: 'sync',
        verifying: 'sync',
        waiting_user: 'bell',
        succeeded: 'check',
        unverified: 'warning',
        failed: 'error',
        cancelled: 'circle-slash',
        budget_exhausted: 'warning',
    };
    const state = s.waitingFor ? `waiting for you to ${waitingWords(s.waitingFor)}` : s.state.replace(/_/g, ' ');
    const reason = s.reason ? `: ${oneLine(plain(s.reason), 160)}` : '';
    return {
        label: `$(${icon[s.state]}) ${state}${reason}`,
        description: spentLine(s),
        detail: s.summary ? oneLine(plain(s.summary), 300) : undefined,
    };
}

/** Stores an API key in SecretStorage (never in settings) and tells the
 * server to read its settings again. */
async function setApiKey(ctx: Ctx): Promise<void> {
    const config = ctx.settings();
    let provider = config.provider();
    // The key is for the configured provider (even `scripted`, whose fake
    // server checks that a key is sent, as the real APIs do).
    if (provider === AUTO_PROVIDER) {
        const picked = await vscode.window.showQuickPick(
            [
                { label: 'Anthropic', provider: 'anthropic' },
                { label: 'OpenAI', description: 'or an OpenAI-compatible server that needs a key', provider: 'openai' },
            ],
            { title: 'Rein: which provider is the key for?' },
        );
        if (!picked) return;
        provider = picked.provider;
        // A key alone does not say which API to call.
        await vscode.workspace.getConfiguration('rein').update('provider', provider, vscode.ConfigurationTarget.Global);
    }
    const key = await vscode.window.showInputBox({
        title: `Rein: API key for ${provider}`,
        prompt: 'Stored in VS Code’s secret storage, never in settings or logs.',
        password: true,
        ignoreFocusOut: true,
        validateInput: (k) => (k.trim() === '' ? 'Paste the key (or press Escape).' : undefined),
    });
    if (key === undefined) return;
    await config.storeKey(provider, key.trim());
    await ctx.configurationChanged();
    void vscode.window.showInformationMessage(`Rein: the ${provider} API key is stored.`);
}

async function clearApiKey(ctx: Ctx): Promise<void> {
    const config = ctx.settings();
    const configured = config.provider();
    const providers = new Set<string>([...KEYED_PROVIDERS, ...(configured === AUTO_PROVIDER ? [] : [configured])]);
    const picked = await vscode.window.showQuickPick([...providers], { title: 'Rein: forget the API key of…' });
    if (!picked) return;
    await config.deleteKey(picked);
    await ctx.configurationChanged();
    void vscode.window.showInformationMessage(`Rein: the ${picked} API key is forgotten.`);
}

function item(s: TaskStatus, name = s.taskId): vscode.QuickPickItem & { taskId: string } {
    return {
        label: oneLine(plain(name), 80),
        description: `${s.state.replace(/_/g, ' ')} · ${spentLine(s)} · ${s.taskId}`,
        detail: s.reason ? oneLine(plain(s.reason), 200) : undefined,
        taskId: s.taskId,
    };
}

/** The only candidate, or the user's pick; a message when there is none. */
async function pickTask(ctx: Ctx, candidates: TaskStatus[], none: string, title: string): Promise<string | undefined> {
    const live = candidates.filter((s) => !isTerminal(s.state));
    if (live.length === 0) throw new UserError(none);
    if (live.length === 1) return live[0].taskId;
    return (await vscode.window.showQuickPick(live.map((s) => item(s, ctx.book.name(s.taskId))), { title }))?.taskId;
}
