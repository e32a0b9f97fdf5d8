// The extension's commands (ids in `ctx.ts`). Each one turns a user action
// into one of the server's commands, or shows what the server reported.

import * as vscode from 'vscode';
import * as lc from 'vscode-languageclient/node';

import { commandIds } from './command_ids';
import { Ctx, UserError } from './ctx';
import { askInstruction } from './instruction';
import { isTerminal, serverCommands, type FixTestArgs, type RunTaskArgs, type TaskStarted, type TaskStatus } from './protocol';
import { AUTO_PROVIDER, KEYED_PROVIDERS } from './settings';
import { spentLine } from './status_text';
import type { TaskAction } from './task_book';
import { renderTrace, showTraceWebview, tracedTasks } from './trace';
import { verificationLines } from './verification_text';

type Handler = (ctx: Ctx, ...args: unknown[]) => Promise<void>;

const handlers: Record<string, Handler> = {
    [commandIds.fixTestAtCursor]: fixTestAtCursor,
    [commandIds.ask]: ask,
    [commandIds.cancelTask]: (ctx, id) => cancelTask(ctx, asId(id)),
    [commandIds.resumeTask]: (ctx, id) => resumeTask(ctx, asId(id)),
    [commandIds.answer]: (ctx, id) => answer(ctx, asId(id)),
    [commandIds.showTrace]: (ctx, id) => showTrace(ctx, asId(id)),
    [commandIds.showEvidence]: (ctx, id) => showEvidence(ctx, asId(id)),
    [commandIds.taskActions]: taskActions,
    [commandIds.setApiKey]: setApiKey,
    [commandIds.clearApiKey]: clearApiKey,
    [commandIds.showOutput]: async (ctx) => ctx.output.show(),
    [commandIds.restartServer]: (ctx) => ctx.restart(),
};

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
    const client = ctx.requireClient();
    const c2p = client.code2ProtocolConverter;
    const actions = await client.sendRequest(lc.CodeActionRequest.type, {
        textDocument: c2p.asTextDocumentIdentifier(editor.document),
        range: c2p.asRange(editor.selection),
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
    if (!cancelled) void vscode.window.showInformationMessage(`Rein: task ${taskId} is not running (it may just have ended).`);
}

async function resumeTask(ctx: Ctx, id?: string): Promise<void> {
    let taskId = id;
    if (!taskId) {
        const waiting = ctx.book.active();
        const typeIt = 'Enter a task id…';
        const picked = await vscode.window.showQuickPick([...waiting.map(item), { label: typeIt, taskId: '' }], {
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
    const question = ctx.book.get(taskId)?.reason;
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
        const items = [...known.map(item), ...onDisk.map((t) => ({ label: t, description: 'from an earlier session', taskId: t }))];
        if (items.length === 0) throw new UserError('No Rein task has a trace in this folder yet.');
        taskId = (await vscode.window.showQuickPick(items, { title: 'Show the trace of which task?' }))?.taskId;
        if (!taskId) return;
    }
    const html = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: `Rein: writing the trace of ${taskId}` },
        () => renderTrace(binary, folder.uri.fsPath, taskId),
    );
    showTraceWebview(taskId, html);
}

async function showEvidence(ctx: Ctx, id?: string): Promise<void> {
    const taskId = id ?? ctx.book.current()?.taskId;
    const v = taskId ? ctx.book.verification(taskId) : undefined;
    if (!v) throw new UserError('Rein has not verified that task: there is no evidence to show.');
    ctx.tasksChannel.appendLine(ctx.secrets.redact(verificationLines(v).join('\n')));
    ctx.tasksChannel.show(true);
}

/** The status bar's menu: what can be done with the current task, and
 * the general commands. */
async function taskActions(ctx: Ctx): Promise<void> {
    const current = ctx.book.current();
    const labels: Record<TaskAction, string> = {
        answer: '$(comment) Answer the question…',
        cancel: '$(circle-slash) Cancel the task',
        resume: '$(debug-continue) Resume the task',
        trace: '$(list-tree) Show the trace',
        evidence: '$(checklist) Show the verification evidence',
    };
    const run: Record<TaskAction, string> = {
        answer: commandIds.answer,
        cancel: commandIds.cancelTask,
        resume: commandIds.resumeTask,
        trace: commandIds.showTrace,
        evidence: commandIds.showEvidence,
    };
    type Item = vscode.QuickPickItem & { command?: string; arg?: string };
    const items: Item[] = [];
    if (current) {
        items.push({ label: `Task ${current.taskId}`, kind: vscode.QuickPickItemKind.Separator });
        for (const action of ctx.book.actions(current.taskId)) {
            items.push({ label: labels[action], command: run[action], arg: current.taskId });
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
        title: current ? `Rein: ${current.state.replace('_', ' ')}` : 'Rein',
        placeHolder: current?.reason ?? undefined,
    });
    if (picked?.command) await vscode.commands.executeCommand(picked.command, picked.arg);
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

function item(s: TaskStatus): vscode.QuickPickItem & { taskId: string } {
    return {
        label: s.taskId,
        description: `${s.state.replace('_', ' ')} · ${spentLine(s)}`,
        detail: s.reason ?? undefined,
        taskId: s.taskId,
    };
}

/** The only candidate, or the user's pick; a message when there is none. */
async function pickTask(_ctx: Ctx, candidates: TaskStatus[], none: string, title: string): Promise<string | undefined> {
    const live = candidates.filter((s) => !isTerminal(s.state));
    if (live.length === 0) throw new UserError(none);
    if (live.length === 1) return live[0].taskId;
    return (await vscode.window.showQuickPick(live.map(item), { title }))?.taskId;
}
