// What the status bar item says about a task: pure formatting of
// `rein/taskStatus`, unit-tested. The text says what the task does now
// (the server's `step`: "running tests · turn 2/20"); the tooltip adds the
// goal, the model's latest line (`said`) and the numbers, which read like
// the server's own progress line (`turn 3/20 · 12.4k tok · $0.03`).

import { isAlreadyPassing, isAnswer, isRejected } from './outcome_text';
import { cleanLine, noIcons, plain } from './plain_text';
import { isTerminal, type TaskStatus, type WaitingFor } from './protocol';

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

/** `$0.03`; never `$0.00` for a cost Rein does not know: `cost unknown`
 * when no call was priced, `≥ $0.03` when some were not. */
export function formatCost(usd: number, unpricedCalls = 0): string {
    if (unpricedCalls > 0) return usd > 0 ? `≥ $${usd.toFixed(2)}` : 'cost unknown';
    return `$${usd.toFixed(2)}`;
}

/** `turn 3/20 · 12.4k tok · $0.03`; no cost before the model's first
 * reply (nothing is known yet, and `$0.00` would be a guess). */
export function spentLine(s: TaskStatus): string {
    const turn = s.maxTurns > 0 ? `turn ${Math.max(1, s.turn)}/${s.maxTurns} · ` : '';
    const tokens = s.inputTokens + s.outputTokens;
    const cost = tokens === 0 && s.costUsd === 0 && !s.unpricedCalls ? '' : ` · ${formatCost(s.costUsd, s.unpricedCalls ?? 0)}`;
    return `${turn}${formatTokens(tokens)}${cost}`;
}

/** What the user is asked to do: "review the edit to cart.py". */
export function waitingWords(w: WaitingFor): string {
    switch (w.kind) {
        case 'review':
            return `review the edit to ${w.detail}`;
        case 'approval':
            return `allow or deny ${w.detail}`;
        case 'answer':
            return 'answer a question';
    }
}

/** From the task's `$/progress`: its goal (begin) and what it is doing (report). */
export interface TaskProgress {
    goal?: string;
    activity?: string;
}

/** The longest step the status bar shows; the tooltip has it whole. */
const STEP_CHARS = 60;
/** The longest line of the model's the tooltip shows (the server sends 160). */
const SAID_CHARS = 200;

/** The server's step as one clean line (`undefined`: none sent). */
export function stepOf(s: TaskStatus, max = STEP_CHARS): string | undefined {
    const step = s.step ? cleanLine(s.step, max) : '';
    return step === '' ? undefined : step;
}

/** The model's latest line, clean and plain like its other words here
 * (code spans without their backticks; `undefined`: it said nothing yet). */
export function saidOf(s: TaskStatus): string | undefined {
    const said = s.said ? cleanLine(plain(s.said), SAID_CHARS) : '';
    return said === '' ? undefined : said;
}

/** `running tests · turn 2/20`: the step, and how far the task is. */
function working(s: TaskStatus, step: string): string {
    return s.maxTurns > 0 ? `${step} · turn ${Math.max(1, s.turn)}/${s.maxTurns}` : step;
}

/** The item for a task's latest status. */
export function statusView(s: TaskStatus, progress: TaskProgress = {}): StatusView {
    const spent = spentLine(s);
    const step = stepOf(s);
    const view = (icon: string, words: string, severity: Severity = 'normal'): StatusView => ({
        // Server text never draws an icon.
        text: `$(${icon}) Rein: ${noIcons(words)}`,
        tooltip: tooltip(s, progress),
        severity,
    });
    switch (s.state) {
        case 'queued':
            return view('sync~spin', 'starting');
        case 'running':
            // A server that sends no step: the numbers, as before.
            return view('sync~spin', step ? working(s, step) : spent);
        case 'verifying':
            return view('sync~spin', step ? working(s, step) : `verifying · ${spent}`);
        case 'waiting_user':
            if (s.waitingFor?.kind === 'review') return view('eye', step ?? `waiting for you · review ${s.waitingFor.detail}`, 'warning');
            if (s.waitingFor?.kind === 'approval') return view('shield', step ?? 'waiting for you · allow a command?', 'warning');
            if (s.waitingFor?.kind === 'answer' && step) return view('question', step, 'warning');
            return view('question', 'waiting for you', 'warning');
        case 'succeeded': {
            const words = isAnswer(s) ? 'answered' : isAlreadyPassing(s) ? 'already passing' : 'succeeded';
            return view('check', `${words} · ${formatTokens(s.inputTokens + s.outputTokens)} · ${formatCost(s.costUsd, s.unpricedCalls ?? 0)}`);
        }
        case 'unverified':
            return view('warning', 'done, not verified', 'warning');
        case 'failed':
            return view('error', 'failed', 'error');
        case 'cancelled':
            return view('circle-slash', isRejected(s) ? 'you rejected the change' : 'cancelled');
        case 'budget_exhausted':
            return view('warning', 'budget exhausted', 'warning');
    }
}

/** Plain text (a `string` tooltip renders no Markdown and no links): the
 * goal, the state or what it does now, the model's latest line, the
 * numbers. */
function tooltip(s: TaskStatus, progress: TaskProgress): string {
    const lines = [`Rein: ${progress.goal ? plain(progress.goal) : `task ${s.taskId}`}`];
    const state = s.state.replace(/_/g, ' ');
    if (s.state === 'waiting_user' && s.waitingFor) lines.push(`Waiting for you to ${waitingWords(s.waitingFor)}.`);
    else lines.push(s.reason ? `${state}: ${plain(s.reason)}` : state);
    // What it is doing matters only while it does it (and a wait says so above).
    const now = stepOf(s, 200) ?? (progress.activity ? plain(progress.activity) : undefined);
    if (now && !isTerminal(s.state) && !s.waitingFor) lines.push(`Now: ${now}`);
    const said = saidOf(s);
    if (said) lines.push(`The model: ${said}`);
    lines.push(spentLine(s), 'Click for the task’s actions.');
    return lines.join('\n');
}

/** The item when no task has run yet in this window. */
/** No provider yet: the status bar leads to "Rein: Set Up". */
export function setUpView(problem: string): StatusView {
    return {
        text: '$(gear) Rein: set up',
        tooltip: `Rein needs a model: ${problem}. Click to set one up.`,
        severity: 'warning',
    };
}

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
