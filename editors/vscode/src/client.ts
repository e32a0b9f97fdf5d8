// The language client for one workspace folder: how `rein lsp` is started,
// what the client declares, and the middleware that fills in Rein's
// settings and asks for an instruction the "Ask Rein…" code action lacks.

import * as readline from 'node:readline';
import * as vscode from 'vscode';
import * as lc from 'vscode-languageclient/node';

import type { Config } from './config';
import { serverCommands, type TaskStarted, WORKSPACE_TRUSTED_KEY } from './protocol';
import { ReinCapabilitiesFeature } from './rein_capabilities';
import { SaveDocumentsFeature } from './save_documents';
import { parseServerLine } from './server_log';
import type { Mapped } from './settings';
import type { TaskProgress } from './status_text';

/** The server's progress tokens are `rein/<task id>` (`lsp_progress.rs`). */
const TOKEN_PREFIX = 'rein/';

export interface ClientOptions {
    folder: vscode.WorkspaceFolder;
    serverPath: string;
    config: Config;
    output: vscode.LogOutputChannel;
    /** Settings as sent at `initialize`. */
    initial: Mapped;
    /** A task was started through the client (a code action or command). */
    onTaskStarted: (taskId: string) => void;
    /** `$/progress` of a task: its goal and what it is doing now. */
    onTaskProgress: (taskId: string, progress: TaskProgress) => void;
    /** Asks the user what to do; `undefined` if they dismissed the box. */
    askInstruction: () => Thenable<string | undefined>;
    /** Before a task starts: leads to set-up when no provider is
     * configured; whether the task may go on. */
    ensureSetUp?: () => Promise<boolean>;
}

export function createClient(o: ClientOptions): lc.LanguageClient {
    const server: lc.Executable = {
        command: o.serverPath,
        args: ['lsp'],
        // No `transport`: stdio is the default, and naming it makes the
        // client append `--stdio`, which `rein lsp` refuses.
        options: { cwd: o.folder.uri.fsPath },
    };
    const clientOptions: lc.LanguageClientOptions = {
        // Every file of the folder: Rein reads and edits any of them, and
        // must see the buffer the user has, not the disk.
        documentSelector: [{ scheme: 'file', pattern: { baseUri: o.folder.uri.toString(), pattern: '**/*' } }],
        workspaceFolder: o.folder,
        outputChannel: o.output,
        traceOutputChannel: o.output,
        revealOutputChannelOn: lc.RevealOutputChannelOn.Never,
        // VS Code's Workspace Trust decides whether the folder's own
        // `.rein/config.toml` counts (Rein declares no support for
        // Restricted Mode, so a running extension means a trusted folder;
        // the flag says so rather than leaving the server to ask again).
        initializationOptions: { ...o.initial.settings, [WORKSPACE_TRUSTED_KEY]: vscode.workspace.isTrusted },
        stdioOptions: {
            // The server's stdout is the LSP channel; nothing else comes there.
            stdout: () => {},
            stderr: (input, channel) => {
                readline
                    .createInterface({ input, crlfDelay: Infinity, terminal: false })
                    .on('line', (line) => {
                        const { level, text } = parseServerLine(line);
                        channel[level](`[server] ${text}`);
                    });
            },
        },
        middleware: {
            // A task's progress is shown by Rein's own status bar item
            // (with the numbers of `rein/taskStatus`); the client's generic
            // window progress would show the same line a second time.
            handleWorkDoneProgress: (token, params, next) => {
                if (typeof token !== 'string' || !token.startsWith(TOKEN_PREFIX)) return next(token, params);
                const taskId = token.slice(TOKEN_PREFIX.length);
                if (params.kind === 'begin') o.onTaskProgress(taskId, { goal: params.title });
                else if (params.kind === 'report') o.onTaskProgress(taskId, { activity: params.message });
                // `end` goes through, so the client drops its listener.
                else next(token, params);
            },
            workspace: {
                // The `rein` section is Rein's settings as the server spells
                // them (with the key from SecretStorage), not VS Code's
                // settings object.
                configuration: async (params, token, next) => {
                    const answers = await next(params, token);
                    if (!Array.isArray(answers)) return answers;
                    const rein = params.items.some((item) => item.section === 'rein')
                        ? (await o.config.serverSettings()).settings
                        : undefined;
                    return params.items.map((item, i) => (item.section === 'rein' ? rein : answers[i]));
                },
            },
            executeCommand: async (command, args, next) => {
                const startsTask = [serverCommands.fixTest, serverCommands.runTask, 'rein.fixError'].includes(command);
                if (startsTask && o.ensureSetUp && !(await o.ensureSetUp())) return undefined;
                if (command === serverCommands.runTask && !hasInstruction(args[0])) {
                    // The "Ask Rein…" code action carries the place, not the words.
                    const instruction = await o.askInstruction();
                    if (instruction === undefined) return undefined;
                    args = [{ ...(args[0] as object), instruction }];
                }
                const result: unknown = await next(command, args);
                const taskId = (result as Partial<TaskStarted> | undefined)?.taskId;
                if (typeof taskId === 'string') o.onTaskStarted(taskId);
                return result;
            },
        },
    };
    const client = new lc.LanguageClient('rein', 'Rein', server, clientOptions);
    client.registerFeature(new SaveDocumentsFeature(client));
    client.registerFeature(new ReinCapabilitiesFeature());
    return client;
}

function hasInstruction(arg: unknown): boolean {
    const instruction = (arg as { instruction?: unknown } | undefined)?.instruction;
    return typeof instruction === 'string' && instruction.trim() !== '';
}
