// Rein's own LSP methods as typed messages (the server's `ext.rs`).

import * as lc from 'vscode-languageclient/node';

import type { SaveDocumentsParams, SaveDocumentsResult, TaskStatus, Verification } from './protocol';

export const taskStatus = new lc.NotificationType<TaskStatus>('rein/taskStatus');

export const verification = new lc.NotificationType<Verification>('rein/verification');

export const saveDocuments = new lc.RequestType<SaveDocumentsParams, SaveDocumentsResult, void>(
    'rein/saveDocuments',
);
