// The tasks this window has heard of, from `rein/taskStatus` and
// `rein/verification`: which one the status bar shows and what the user
// can do with each. Pure, so the rules are unit-tested.

import { isTerminal, type TaskStatus, type Verification } from './protocol';
import type { TaskProgress } from './status_text';

export type TaskAction = 'review' | 'approval' | 'answer' | 'cancel' | 'resume' | 'trace' | 'evidence';

export class TaskBook {
    private readonly statuses = new Map<string, TaskStatus>();
    private readonly verifications = new Map<string, Verification>();
    private readonly progresses = new Map<string, TaskProgress>();
    /** Task ids, most recently heard of last. */
    private order: string[] = [];

    /** Records a status; returns whether it is news (a changed state). */
    update(status: TaskStatus): boolean {
        const before = this.statuses.get(status.taskId);
        // A late, non-final status must not bring an ended task back to life
        // (statuses are sent in order, but a restart can replay an old one).
        if (before && isTerminal(before.state) && !isTerminal(status.state)) return false;
        // Only the final status carries the summary; keep it.
        // The model's last line is kept too, for a status that has none.
        this.statuses.set(status.taskId, {
            ...status,
            summary: status.summary ?? before?.summary,
            said: status.said ?? before?.said,
        });
        this.order = [...this.order.filter((id) => id !== status.taskId), status.taskId];
        return before?.state !== status.state || before?.waitingFor?.kind !== status.waitingFor?.kind;
    }

    /** A task started by us, before its first status arrives. */
    started(taskId: string): void {
        if (this.statuses.has(taskId)) return;
        this.update({ taskId, state: 'queued', turn: 0, maxTurns: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 });
    }

    /** `$/progress` of a task: `begin` carries its goal, `report` its activity. */
    progressed(taskId: string, update: TaskProgress): void {
        this.progresses.set(taskId, { ...this.progresses.get(taskId), ...update });
    }

    progress(taskId: string): TaskProgress {
        return this.progresses.get(taskId) ?? {};
    }

    verified(v: Verification): void {
        this.verifications.set(v.taskId, v);
    }

    get(taskId: string): TaskStatus | undefined {
        return this.statuses.get(taskId);
    }

    verification(taskId: string): Verification | undefined {
        return this.verifications.get(taskId);
    }

    /** What the status bar shows: the latest task still going, else the latest one. */
    current(): TaskStatus | undefined {
        const all = this.all();
        return all.find((s) => !isTerminal(s.state)) ?? all[0];
    }

    /** Every known task, most recent first. */
    all(): TaskStatus[] {
        return [...this.order].reverse().flatMap((id) => this.statuses.get(id) ?? []);
    }

    /** Tasks that have not ended, most recent first. */
    active(): TaskStatus[] {
        return this.all().filter((s) => !isTerminal(s.state));
    }

    /** Tasks waiting for an answer (or stopped for the user), most recent first. */
    waiting(): TaskStatus[] {
        return this.all().filter((s) => s.state === 'waiting_user' && (!s.waitingFor || s.waitingFor.kind === 'answer'));
    }

    /** How the user knows the task: its goal, else its id. */
    name(taskId: string): string {
        return this.progresses.get(taskId)?.goal ?? `task ${taskId}`;
    }

    /** What the user can do with a task, in the order the quick pick lists it. */
    actions(taskId: string): TaskAction[] {
        const s = this.statuses.get(taskId);
        if (!s) return ['trace'];
        const actions: TaskAction[] = [];
        if (s.state === 'waiting_user') {
            // What the task waits for says what to do; a task stopped
            // after a crash (no `waitingFor`) looks like one stopped on a
            // question, so both are offered and the server refuses the one
            // that does not apply, saying why.
            if (s.waitingFor?.kind === 'review') actions.push('review');
            else if (s.waitingFor?.kind === 'approval') actions.push('approval');
            else if (s.waitingFor?.kind === 'answer') actions.push('answer');
            else actions.push('answer', 'resume');
        }
        if (!isTerminal(s.state)) actions.push('cancel');
        actions.push('trace');
        if (this.verifications.has(taskId)) actions.push('evidence');
        return actions;
    }

    clear(): void {
        this.statuses.clear();
        this.verifications.clear();
        this.progresses.clear();
        this.order = [];
    }
}
