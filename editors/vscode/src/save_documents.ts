// `rein/saveDocuments`: before it runs tests, the server asks the editor to
// save the dirty documents of the workspace (those it edited and the
// user's), so the tests see exactly the text in the editor (and VS Code's
// own save runs, not a write behind its back).
// Declared with `capabilities.experimental.rein.saveDocuments = true`;
// without it the server writes the files itself.

import * as vscode from 'vscode';
import type * as lc from 'vscode-languageclient/node';

import { saveDocuments } from './lsp_ext';
import type { SaveDocumentsParams, SaveDocumentsResult } from './protocol';

export class SaveDocumentsFeature implements lc.StaticFeature {
    private registration: vscode.Disposable | undefined;

    constructor(private readonly client: lc.BaseLanguageClient) {}

    getState(): lc.FeatureState {
        return { kind: 'static' };
    }

    fillClientCapabilities(capabilities: lc.ClientCapabilities): void {
        const experimental = (capabilities.experimental ??= {}) as Record<string, unknown>;
        const rein = (experimental.rein ??= {}) as Record<string, unknown>;
        rein.saveDocuments = true;
    }

    initialize(): void {
        this.registration?.dispose();
        this.registration = this.client.onRequest(saveDocuments, (params) => save(this.client, params));
    }

    clear(): void {
        this.registration?.dispose();
        this.registration = undefined;
    }
}

async function save(client: lc.BaseLanguageClient, params: SaveDocumentsParams): Promise<SaveDocumentsResult> {
    const result: SaveDocumentsResult = { saved: [], notSaved: [] };
    for (const uri of params.uris) {
        const target = client.protocol2CodeConverter.asUri(uri);
        // Compared as file paths: clients and servers spell URIs differently.
        const doc = vscode.workspace.textDocuments.find(
            (d) => d.uri.toString() === target.toString() || (d.uri.scheme === 'file' && d.uri.fsPath === target.fsPath),
        );
        if (!doc) {
            result.notSaved.push({ uri, reason: 'not open in the editor' });
            continue;
        }
        if (!doc.isDirty) {
            // Nothing to write: the disk already holds the buffer.
            result.saved.push(uri);
            continue;
        }
        try {
            if (await doc.save()) result.saved.push(uri);
            else result.notSaved.push({ uri, reason: 'the editor did not save it (a conflict with the file on disk?)' });
        } catch (error) {
            result.notSaved.push({ uri, reason: String(error) });
        }
    }
    return result;
}
