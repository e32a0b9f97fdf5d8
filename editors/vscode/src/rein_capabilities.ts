// `capabilities.experimental.rein.instructionPrompt = true`: this client
// asks the user for the instruction the "Ask Rein…" code action lacks (the
// executeCommand middleware in client.ts). The server offers that action
// only to clients that declare it: elsewhere it could only fail.

import type * as lc from 'vscode-languageclient/node';

export class InstructionPromptFeature implements lc.StaticFeature {
    getState(): lc.FeatureState {
        return { kind: 'static' };
    }

    fillClientCapabilities(capabilities: lc.ClientCapabilities): void {
        const experimental = (capabilities.experimental ??= {}) as Record<string, unknown>;
        const rein = (experimental.rein ??= {}) as Record<string, unknown>;
        rein.instructionPrompt = true;
    }

    initialize(): void {}

    clear(): void {}
}
