// "Rein: Undo Task's Changes", the part without VS Code: which tasks can
// be undone and how the pick names them.

import { isTerminal, type TaskStatus } from './protocol';

/** The tasks whose changes can be taken back: those that ended, most
 * recent first (a running task is cancelled first; the server refuses it). */
export function undoCandidates(all: TaskStatus[]): TaskStatus[] {
    return all.filter((s) => isTerminal(s.state));
}

/** What `rein.undoTask` answers at once; the outcome comes later, as a
 * message from the server (and `rein/undone`). */
export interface UndoStarted {
    taskId: string;
    undoing: boolean;
}
