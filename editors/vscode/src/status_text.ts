// What the status bar item says about a task: pure formatting of
// `rein/taskStatus`, unit-tested. The numbers read like the server's own
// progress line (`turn 3/20 · 12.4k tok · $0.03`).

import { isTerminal, type TaskStatus } from './protocol';

export type Severity = 'normal' | 'warning' | 'error';

export interface StatusView {
    /** With `$(icon)` codicons, as `StatusBarItem.text` takes it. */
    text: string;
    tooltip: string;
    severity: Severity;
}

export function formatTokens(n: number): string {
    return n >= 1000 ? `${(n / 1000).toFixed(1)}k tok` : `${n} tok`;
}

export function formatCost(usd: number): string {
    return `$${usd.toFixed(2)}`;
}

/** `turn 3/20 · 12.4k tok · $0.03` */
export function spentLine(s: TaskStatus): string {
    const turn = s.maxTurns > 0 ? `turn ${Math.max(1, s.turn)}/${s.maxTurns} · ` : '';
    return `${turn}${formatTokens(s.inputTokens + s.outputTokens)} · ${formatCost(s.costUsd)}`;
}

/** From the task's `$/progress`: its goal (begin) and what it is doing (report). */
export interface TaskProgress {
    goal?: string;
    activity?: string;
}

/** The item for a task's latest status. */
export function statusView(s: TaskStatus, progress: TaskProgress = {}): StatusView {
    const spent = spentLine(s);
    const view = (icon: string, words: string, severity: Severity = 'normal'): StatusView => ({
        text: `$(${icon}) Rein: ${words}`,
        tooltip: tooltip(s, progress),
        severity,
    });
    switch (s.state) {
        case 'queued':
            return view('sync~spin', 'starting');
        case 'running':
            return view('sync~spin', spent);
        case 'verifying':
            return view('sync~spin', `verifying · ${spent}`);
        case 'waiting_user':
            return view('question', 'waiting for you', 'warning');
        case 'succeeded':
            return view('check', `succeeded · ${formatTokens(s.inputTokens + s.outputTokens)} · ${formatCost(s.costUsd)}`);
        case 'unverified':
            return view('warning', 'done, not verified', 'warning');
        case 'failed':
            return view('error', 'failed', 'error');
        case 'cancelled':
            return view('circle-slash', 'cancelled');
        case 'budget_exhausted':
            return view('warning', 'budget exhausted', 'warning');
    }
}

function tooltip(s: TaskStatus, progress: TaskProgress): string {
    const lines = [`Rein task ${s.taskId}: ${s.state.replace(/_/g, ' ')}`];
    if (progress.goal) lines.push(progress.goal);
    if (s.reason) lines.push(s.reason);
    // What it is doing matters only while it does it.
    if (progress.activity && !isTerminal(s.state)) lines.push(`Now: ${progress.activity}`);
    lines.push(spentLine(s), 'Click for task actions.');
    return lines.join('\n');
}

/** The item when no task has run yet in this window. */
export function idleView(serverState: 'starting' | 'ready' | 'stopped', detail?: string): StatusView {
    switch (serverState) {
        case 'starting':
            return { text: '$(sync~spin) Rein', tooltip: 'Rein: starting the server…', severity: 'normal' };
        case 'ready':
            return { text: '$(hubot) Rein', tooltip: 'Rein is ready. Click for actions.', severity: 'normal' };
        case 'stopped':
            return {
                text: '$(error) Rein',
                tooltip: `Rein's server is not running${detail ? `: ${detail}` : '.'} Click for actions.`,
                severity: 'error',
            };
    }
}
