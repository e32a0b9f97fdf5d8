// Asking the user for an instruction ("Ask Rein…").

import * as vscode from 'vscode';

export function askInstruction(): Thenable<string | undefined> {
    return vscode.window.showInputBox({
        title: 'Ask Rein',
        prompt: 'What should Rein do? It proposes every change for you to approve.',
        placeHolder: 'e.g. rename Cart.total to Cart.sum and update the callers',
        ignoreFocusOut: true,
        validateInput: (text) => (text.trim() === '' ? 'Say what Rein should do.' : undefined),
    });
}
