// "Rein: Undo Task's Changes": takes back a task's changes through the
// server's `rein.undoTask` — every file the task changed as before it,
// keeping what you typed since; a file where you changed the lines the
// task changed is left as it is. The server edits the open buffers itself
// (no confirmation: you asked) and says how it went.

import * as vscode from 'vscode';

import { Ctx, UserError } from './ctx';
import { oneLine, plain } from './plain_text';
import { serverCommands } from './protocol';
import { undoCandidates, type UndoStarted } from './undo_model';

export async function undoTask(ctx: Ctx, id?: string): Promise<void> {
    const taskId = id ?? (await pickTask(ctx));
    if (!taskId) return;
    const started = await ctx.execute<UndoStarted>(serverCommands.undoTask, { taskId });
    if (!started.undoing) throw new UserError(`Rein did not start undoing ${ctx.book.name(taskId)}.`);
}

async function pickTask(ctx: Ctx): Promise<string | undefined> {
    const ended = undoCandidates(ctx.book.all());
    const typeIt = 'Enter a task id…';
    const items = [
        ...ended.map((s) => ({
            label: oneLine(plain(ctx.book.name(s.taskId)), 80),
            description: s.state.replace(/_/g, ' '),
            taskId: s.taskId,
        })),
        { label: typeIt, description: 'a task of an earlier session (as its trace names it)', taskId: '' },
    ];
    const picked = await vscode.window.showQuickPick(items, {
        title: 'Undo the changes of which Rein task?',
        placeHolder: 'What you typed since is kept',
    });
    if (!picked) return undefined;
    if (picked.taskId) return picked.taskId;
    const typed = await vscode.window.showInputBox({ title: 'Undo a Rein task’s changes', prompt: 'The task id' });
    return typed?.trim() || undefined;
}
