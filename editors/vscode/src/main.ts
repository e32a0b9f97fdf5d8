// Entry point: wires the context, the commands and the listeners. Logic
// lives in the modules named here.

import * as vscode from 'vscode';

import { commandIds } from './command_ids';
import { registerCommands } from './commands';
import { runSetUp } from './setup';
import { Ctx } from './ctx';

let ctx: Ctx | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const c = new Ctx(context);
    ctx = c;
    context.subscriptions.push(
        c,
        ...registerCommands(c),
        vscode.commands.registerCommand(commandIds.setUp, () => void runSetUp(c).catch(logTo(c))),
        vscode.workspace.onDidChangeConfiguration((e) => void c.configurationChanged(e).catch(logTo(c))),
        vscode.workspace.onDidChangeWorkspaceFolders(() => void c.restart().catch(logTo(c))),
        // A key changed in another window of this profile.
        context.secrets.onDidChange(() => void c.configurationChanged().catch(logTo(c))),
    );
    // Not awaited: activation must not wait for the server; failures are
    // shown by `start` itself.
    void c.start().catch(logTo(c));
}

export async function deactivate(): Promise<void> {
    await ctx?.stop();
    ctx = undefined;
}

function logTo(c: Ctx): (error: unknown) => void {
    return (error) => c.output.error(`Rein: ${error instanceof Error ? error.message : String(error)}`);
}
