// The status bar item: the current task's progress and outcome (from
// `rein/taskStatus`), or the server's state before any task ran. A click
// opens the task actions.

import * as vscode from 'vscode';

import type { TaskStatus } from './protocol';
import type { TaskProgress } from './status_text';
import { commandIds } from './command_ids';
import { idleView, setUpView, statusView, type StatusView } from './status_text';

const SET_UP_COMMAND = commandIds.setUp;

export type ServerState = 'starting' | 'ready' | 'stopped';

export class StatusBar implements vscode.Disposable {
    private readonly item: vscode.StatusBarItem;
    private server: { state: ServerState; detail?: string } = { state: 'starting' };
    private task: TaskStatus | undefined;
    private progress: TaskProgress = {};
    /** Why no provider is configured (the set-up is due), if so. */
    private setUp: string | undefined;

    constructor(private readonly command: string) {
        this.item = vscode.window.createStatusBarItem('rein.status', vscode.StatusBarAlignment.Left, 10);
        this.item.name = 'Rein';
        this.item.command = command;
        this.render();
        this.item.show();
    }

    setServer(state: ServerState, detail?: string): void {
        this.server = { state, detail };
        this.render();
    }

    setSetUp(problem: string | undefined): void {
        this.setUp = problem;
        this.render();
    }

    setTask(task: TaskStatus | undefined, progress: TaskProgress = {}): void {
        this.task = task;
        this.progress = progress;
        this.render();
    }

    private render(): void {
        // A dead server matters more than the last task's outcome.
        const view: StatusView =
            this.task && this.server.state !== 'stopped'
                ? statusView(this.task, this.progress)
                : this.setUp !== undefined && this.server.state === 'ready'
                  ? setUpView(this.setUp)
                  : idleView(this.server.state, this.server.detail);
        this.item.command = this.setUp === undefined || this.task ? this.command : SET_UP_COMMAND;
        this.item.text = view.text;
        this.item.tooltip = view.tooltip;
        this.item.backgroundColor =
            view.severity === 'error'
                ? new vscode.ThemeColor('statusBarItem.errorBackground')
                : view.severity === 'warning'
                  ? new vscode.ThemeColor('statusBarItem.warningBackground')
                  : undefined;
    }

    dispose(): void {
        this.item.dispose();
    }
}
