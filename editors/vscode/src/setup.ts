// "Rein: Set Up": a provider in a minute. The choices (a running Ollama or
// llama.cpp found by asking the server to list its models), the key
// entered and checked at once against the provider (`rein/checkProvider`,
// never stored before it works), the model picked from what a local server
// serves, and the settings written. Until a provider is configured the
// status bar says "Rein: set up" and Rein's commands lead here first.

import * as vscode from 'vscode';
import type * as lc from 'vscode-languageclient/node';

import type { Config } from './config';
import type { SecretSet } from './redact';
import { checkProvider, choices, type Checked, LOCAL_SERVERS, normalizeAddress, settingsFor, type Choice } from './setup_model';

/** What the set-up needs of the extension (the window's context). */
export interface SetUpHost {
    readonly secrets: SecretSet;
    requireClient(): lc.LanguageClient;
    settings(): Config;
    providerConfigured(): boolean;
    refreshProviderStatus(): Promise<boolean>;
}

/** Runs the set-up; whether a provider is configured at its end. */
export async function runSetUp(ctx: SetUpHost): Promise<boolean> {
    const client = ctx.requireClient();
    const check = (params: object): Promise<Checked> => Promise.resolve(client.sendRequest<Checked>(checkProvider, params));
    const local = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Rein: looking for a model server on this machine…' },
        () =>
            Promise.all(
                LOCAL_SERVERS.map(async (s) => ({
                    ...s,
                    checked: await check({ provider: 'openai', baseUrl: s.baseUrl }).catch(
                        (e: unknown): Checked => ({ ok: false, models: [], message: String(e) }),
                    ),
                })),
            ),
    );
    const picked = await vscode.window.showQuickPick(choices(local), {
        title: 'Rein: Set Up — which model should Rein use?',
        placeHolder: 'Rein checks what you choose before it stores anything',
        ignoreFocusOut: true,
    });
    if (!picked) return ctx.providerConfigured();
    const choice = picked.choice;
    switch (choice.kind) {
        case 'anthropic':
        case 'openai':
            return withKey(ctx, choice, check);
        case 'local':
            return withServer(ctx, choice, choice.baseUrl, choice.models);
        case 'local-other': {
            const typed = await vscode.window.showInputBox({
                title: 'Rein: the server’s address',
                prompt: 'An OpenAI-compatible server, e.g. http://localhost:1234/v1 (LM Studio) or http://gpu-box:8000/v1 (vLLM)',
                ignoreFocusOut: true,
                validateInput: (t) => (normalizeAddress(t) ? undefined : 'An http:// or https:// address'),
            });
            const baseUrl = typed === undefined ? undefined : normalizeAddress(typed);
            if (!baseUrl) return ctx.providerConfigured();
            const checked = await checking(`Rein: asking ${baseUrl} for its models…`, check({ provider: 'openai', baseUrl }));
            if (!checked.ok) {
                void vscode.window.showErrorMessage(`Rein: ${checked.message}`);
                return ctx.providerConfigured();
            }
            return withServer(ctx, choice, baseUrl, checked.models);
        }
        case 'demo':
            await write(settingsFor(choice));
            void vscode.window.showInformationMessage(
                'Rein is set up with the offline demo model: open the demo project (server/app/demo/project) and fix its failing test.',
            );
            return ctx.refreshProviderStatus();
    }
}

async function withKey(ctx: SetUpHost, choice: Choice & { kind: 'anthropic' | 'openai' }, check: (p: object) => Promise<Checked>): Promise<boolean> {
    const name = choice.kind === 'anthropic' ? 'Anthropic' : 'OpenAI';
    for (;;) {
        const key = await vscode.window.showInputBox({
            title: `Rein: your ${name} API key`,
            prompt: 'Checked with the provider now; stored in VS Code’s secret storage, never in settings or logs.',
            password: true,
            ignoreFocusOut: true,
            validateInput: (k) => (k.trim() === '' ? 'Paste the key (or press Escape).' : undefined),
        });
        if (key === undefined) return ctx.providerConfigured();
        ctx.secrets.add(key.trim());
        const checked = await checking(`Rein: checking the key with ${name}…`, check({ provider: choice.kind, apiKey: key.trim() }));
        if (checked.ok) {
            await ctx.settings().storeKey(choice.kind, key.trim());
            await write(settingsFor(choice));
            void vscode.window.showInformationMessage(`Rein is set up: ${name} took the key.`);
            return ctx.refreshProviderStatus();
        }
        const again = await vscode.window.showErrorMessage(`Rein: ${checked.message}`, 'Try Another Key');
        if (!again) return ctx.providerConfigured();
    }
}

async function withServer(ctx: SetUpHost, choice: Choice, baseUrl: string, models: string[]): Promise<boolean> {
    let model: string | undefined = models[0];
    if (models.length > 1) {
        model = await vscode.window.showQuickPick(models, {
            title: `Rein: which model of ${baseUrl}?`,
            placeHolder: 'A coding model does best (e.g. qwen2.5-coder)',
            ignoreFocusOut: true,
        });
        if (model === undefined) return ctx.providerConfigured();
    }
    if (model === undefined) {
        void vscode.window.showErrorMessage(`Rein: ${baseUrl} serves no model yet; load one there, then run Rein: Set Up again.`);
        return ctx.providerConfigured();
    }
    await write(settingsFor(choice, model, baseUrl));
    void vscode.window.showInformationMessage(`Rein is set up: ${model} at ${baseUrl}.`);
    return ctx.refreshProviderStatus();
}

async function checking(title: string, work: Promise<Checked>): Promise<Checked> {
    return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, () =>
        work.catch((e: unknown): Checked => ({ ok: false, models: [], message: String(e) })),
    );
}

/** Writes the user's settings (global: a provider is the user's, not the
 * project's); `undefined` clears one. */
async function write(values: Record<string, string | undefined>): Promise<void> {
    const section = vscode.workspace.getConfiguration('rein');
    for (const [name, value] of Object.entries(values)) {
        await section.update(name, value, vscode.ConfigurationTarget.Global);
    }
}
