// What this client does for Rein, declared under
// `capabilities.experimental.rein` (the server relies on none of it unless
// declared):
// - `instructionPrompt`: it asks the user for the instruction the "Ask
//   Rein…" code action lacks (the executeCommand middleware in client.ts),
//   so the server offers that action;
// - `confirmsEdits`: VS Code shows an edit marked `needsConfirmation` in
//   its refactor preview before applying it, so the server need not ask
//   first;
// - `reviewsEdits`: it answers `rein/reviewEdit` with its own review
//   (review.ts): the real diff, the model's reason, Accept / Reject, per
//   hunk too; the server then applies what was accepted unasked;
// - `workspaceTrust`: `initializationOptions.workspaceTrusted` is VS Code's
//   Workspace Trust (set in client.ts), the editor's own word.
// (`saveDocuments` is declared by its feature, save_documents.ts.)

import type * as lc from 'vscode-languageclient/node';

export class ReinCapabilitiesFeature implements lc.StaticFeature {
    getState(): lc.FeatureState {
        return { kind: 'static' };
    }

    fillClientCapabilities(capabilities: lc.ClientCapabilities): void {
        const experimental = (capabilities.experimental ??= {}) as Record<string, unknown>;
        const rein = (experimental.rein ??= {}) as Record<string, unknown>;
        rein.instructionPrompt = true;
        rein.confirmsEdits = true;
        rein.reviewsEdits = true;
        rein.workspaceTrust = true;
    }

    initialize(): void {}

    clear(): void {}
}
