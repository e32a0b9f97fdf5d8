import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { TaskState, TaskStatus } from '../../src/protocol';
import { undoCandidates } from '../../src/undo_model';

const s = (taskId: string, state: TaskState): TaskStatus => ({
    taskId,
    state,
    turn: 1,
    maxTurns: 20,
    inputTokens: 0,
    outputTokens: 0,
    costUsd: 0,
});

test('only tasks that ended can be undone, in the order given (latest first)', () => {
    const all = [s('a', 'running'), s('b', 'succeeded'), s('c', 'waiting_user'), s('d', 'failed'), s('e', 'cancelled')];
    assert.deepEqual(
        undoCandidates(all).map((t) => t.taskId),
        ['b', 'd', 'e'],
    );
});
