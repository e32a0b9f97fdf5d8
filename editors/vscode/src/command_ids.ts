// The extension's command ids, apart from the code that runs them so
// unit tests can check them against package.json.

/** VS Code command ids of this extension. The server's own command ids
 * (`rein.fixTest`, …) are registered by the language client, globally, so
 * ours live under `rein.vscode.*`. */
export const commandIds = {
    fixTestAtCursor: 'rein.vscode.fixTestAtCursor',
    fixTestItem: 'rein.vscode.fixTestItem',
    ask: 'rein.vscode.ask',
    cancelTask: 'rein.vscode.cancelTask',
    resumeTask: 'rein.vscode.resumeTask',
    undoTask: 'rein.vscode.undoTask',
    answer: 'rein.vscode.answer',
    showTrace: 'rein.vscode.showTrace',
    showEvidence: 'rein.vscode.showEvidence',
    showTask: 'rein.vscode.showTask',
    taskActions: 'rein.vscode.taskActions',
    setApiKey: 'rein.vscode.setApiKey',
    setUp: 'rein.vscode.setUp',
    clearApiKey: 'rein.vscode.clearApiKey',
    showOutput: 'rein.vscode.showOutput',
    restartServer: 'rein.vscode.restartServer',
    reviewEdit: 'rein.vscode.reviewEdit',
    acceptEdit: 'rein.vscode.acceptEdit',
    rejectEdit: 'rein.vscode.rejectEdit',
    rejectEditWithFeedback: 'rein.vscode.rejectEditWithFeedback',
    chooseChanges: 'rein.vscode.chooseChanges',
    acceptRemainingEdits: 'rein.vscode.acceptRemainingEdits',
    showNotifications: 'rein.vscode.showNotifications',
    openFile: 'rein.vscode.openFile',
} as const;
