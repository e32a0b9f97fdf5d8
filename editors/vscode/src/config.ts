// Reading Rein's settings from VS Code and its API keys from SecretStorage.
// The mapping itself (what the server gets) is `settings.ts`.

import * as vscode from 'vscode';

import { secretsOf } from './mcp';
import { SecretSet } from './redact';
import { AUTO_PROVIDER, KEYED_PROVIDERS, Mapped, secretKeyFor, serverSettings, userValue } from './settings';

export const SECTION = 'rein';

export class Config {
    /**
     * @param secrets every key read or stored goes here, for redaction
     *   (kept after a change: an old value may still be in a message on its
     *   way out).
     */
    constructor(
        private readonly storage: vscode.SecretStorage,
        private readonly folder: vscode.WorkspaceFolder | undefined,
        private readonly secrets: SecretSet,
    ) {}

    private section(): vscode.WorkspaceConfiguration {
        return vscode.workspace.getConfiguration(SECTION, this.folder?.uri);
    }

    /** `rein.server.path`, as set. */
    serverPath(): string | undefined {
        return this.section().get<string>('server.path');
    }

    /** `rein.provider`: a provider name, or `auto` (the environment decides). */
    provider(): string {
        return this.section().get<string>('provider') ?? AUTO_PROVIDER;
    }

    /** What the server gets, with problems to report. Reads the key of the
     * configured provider from SecretStorage. The secrets written inline in
     * the MCP servers' settings join the redaction set before the settings
     * can reach a log or the LSP trace. */
    async serverSettings(): Promise<Mapped> {
        const section = this.section();
        // The user's value, most specific first; a contributed default
        // alone is not sent (see settings.ts).
        const lookup = (key: string): unknown => userValue(key, section.inspect(key));
        const mapped = serverSettings(lookup, await this.apiKey());
        for (const secret of secretsOf(mapped.settings.mcpServers)) this.secrets.add(secret);
        return mapped;
    }

    /** The stored key for the configured provider, if any. With `auto`
     * there is none: the environment decides the provider and its key. */
    async apiKey(): Promise<string | undefined> {
        const provider = this.provider();
        if (provider === AUTO_PROVIDER) return undefined;
        return this.readKey(provider);
    }

    async readKey(provider: string): Promise<string | undefined> {
        const key = await this.storage.get(secretKeyFor(provider));
        this.secrets.add(key);
        return key;
    }

    async storeKey(provider: string, key: string): Promise<void> {
        this.secrets.add(key);
        await this.storage.store(secretKeyFor(provider), key);
    }

    async deleteKey(provider: string): Promise<void> {
        await this.storage.delete(secretKeyFor(provider));
    }

    /** Loads every stored key, and the MCP servers' inline secrets, into
     * the redaction set before anything logs. */
    async loadSecrets(): Promise<void> {
        for (const provider of new Set<string>([...KEYED_PROVIDERS, this.provider()])) {
            if (provider !== AUTO_PROVIDER) await this.readKey(provider);
        }
        await this.serverSettings();
    }
}
