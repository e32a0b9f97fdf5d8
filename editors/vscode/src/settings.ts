// VS Code settings → the settings object the server reads
// (`initializationOptions` and the `rein` section of
// `workspace/configuration`, camelCase, README "Configuration").
//
// Only what the user actually set is sent. The server merges the editor's
// settings over `.rein/config.toml`, the user's config file and the
// environment; sending VS Code's defaults would silently override a
// project's `.rein/config.toml`. The defaults we contribute in package.json
// are the server's own, so the settings UI still tells the truth.

import { forLog as mcpForLog, mcpServers, type McpServers } from './mcp';
import type { Problem } from './problem';

/** The keys the server understands, as it spells them. */
export interface ServerSettings {
    provider?: string;
    model?: string;
    baseUrl?: string;
    apiKey?: string;
    maxTurns?: number;
    maxCostUsd?: number;
    maxMinutes?: number;
    maxTokens?: number;
    testCommand?: string;
    testReport?: string;
    allowTestEdits?: boolean;
    permissions?: { allow?: string[]; ask?: string[]; deny?: string[] };
    approvalTimeoutSecs?: number;
    confirmTimeoutSecs?: number;
    reopenTimeoutSecs?: number;
    scenario?: string;
    /** MCP servers by name (`mcp.ts`). */
    mcpServers?: McpServers;
}

/**
 * Reads one key of the `rein` section (`maxTurns`, `permissions.allow`, …):
 * the value the user set (workspace folder, workspace or user), or
 * `undefined` when it is only the contributed default.
 */
export type Lookup = (key: string) => unknown;

/** What VS Code's `inspect` tells of one key: the value of each scope. */
export interface Scopes {
    globalValue?: unknown;
    workspaceValue?: unknown;
    workspaceFolderValue?: unknown;
}

/** Settings whose value is an object of named entries: each scope adds its
 * entries, a more specific scope's entry replacing the same name whole. */
const MERGED_KEYS: readonly string[] = ['mcpServers'];

/**
 * The value the user set for `key`: the most specific scope's (workspace
 * folder, workspace, user). For `mcpServers`, the servers of every scope
 * (your own in user settings and a project's in its workspace settings),
 * a more specific scope's server of the same name replacing the other
 * whole, as the server merges its layers. A scope whose value is not an
 * object is taken alone, so the mapping reports it.
 */
export function userValue(key: string, scopes: Scopes | undefined): unknown {
    if (!scopes) return undefined;
    const ordered = [scopes.globalValue, scopes.workspaceValue, scopes.workspaceFolderValue];
    const set = ordered.filter((v) => v !== undefined && v !== null);
    if (MERGED_KEYS.includes(key) && set.length > 1) {
        const isObject = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
        if (set.every(isObject)) return Object.assign({}, ...set);
    }
    return set[set.length - 1];
}

/** The provider setting's value that means "decide from the environment". */
export const AUTO_PROVIDER = 'auto';

/** A setting whose value the server would refuse, and what was done with it. */
export type { Problem } from './problem';

export interface Mapped {
    settings: ServerSettings;
    problems: Problem[];
}

const strings = ['model', 'baseUrl', 'testCommand', 'testReport', 'scenario'] as const;
const integers = ['maxTurns', 'maxMinutes', 'maxTokens'] as const;
const numbers = [
    'maxCostUsd',
    'approvalTimeoutSecs',
    'confirmTimeoutSecs',
    'reopenTimeoutSecs',
] as const;
const ruleLists = ['allow', 'ask', 'deny'] as const;

/** Every key of the `rein` section that is sent to the server. */
export const SENT_KEYS: readonly string[] = [
    'provider',
    ...strings,
    ...integers,
    ...numbers,
    'allowTestEdits',
    ...ruleLists.map((l) => `permissions.${l}`),
    'mcpServers',
];

/**
 * Maps what the user set to the server's settings. A value the server
 * would refuse is left out and reported (the server reads the editor's
 * settings as one object, so one bad value would fail every task).
 * `apiKey` comes from SecretStorage, never from settings.
 */
export function serverSettings(lookup: Lookup, apiKey: string | undefined): Mapped {
    const settings: ServerSettings = {};
    const problems: Problem[] = [];
    const bad = (key: string, why: string) =>
        problems.push({ key: `rein.${key}`, message: `rein.${key} ${why}; it is ignored` });

    const provider = lookup('provider');
    if (typeof provider === 'string' && provider.trim() !== '' && provider !== AUTO_PROVIDER) {
        settings.provider = provider.trim();
    } else if (provider !== undefined && typeof provider !== 'string') {
        bad('provider', 'must be a string');
    }
    for (const key of strings) {
        const value = lookup(key);
        if (typeof value === 'string') {
            if (value.trim() !== '') settings[key] = value.trim();
        } else if (value !== undefined && value !== null) {
            bad(key, 'must be a string');
        }
    }
    for (const key of integers) {
        const value = lookup(key);
        if (value === undefined || value === null) continue;
        if (typeof value === 'number' && Number.isInteger(value) && value >= 1) {
            settings[key] = value;
        } else {
            bad(key, 'must be a whole number of at least 1');
        }
    }
    for (const key of numbers) {
        const value = lookup(key);
        if (value === undefined || value === null) continue;
        if (typeof value === 'number' && Number.isFinite(value) && value >= 0) {
            settings[key] = value;
        } else {
            bad(key, 'must be a number of at least 0');
        }
    }
    const allowTestEdits = lookup('allowTestEdits');
    if (typeof allowTestEdits === 'boolean') {
        settings.allowTestEdits = allowTestEdits;
    } else if (allowTestEdits !== undefined && allowTestEdits !== null) {
        bad('allowTestEdits', 'must be true or false');
    }
    for (const list of ruleLists) {
        const key = `permissions.${list}`;
        const value = lookup(key);
        if (value === undefined || value === null) continue;
        if (Array.isArray(value) && value.every((rule) => typeof rule === 'string')) {
            settings.permissions = { ...settings.permissions, [list]: value.map((r) => r.trim()) };
        } else {
            bad(key, 'must be a list of rules such as "run_command(cargo test:*)"');
        }
    }
    const mcp = mcpServers(lookup('mcpServers'));
    if (mcp.servers) settings.mcpServers = mcp.servers;
    problems.push(...mcp.problems);
    if (apiKey !== undefined && apiKey !== '') settings.apiKey = apiKey;
    return { settings, problems };
}

/** How a set API key appears in logs: never the key itself. */
export const HIDDEN_KEY = '<set, from SecretStorage>';

/** The settings as they may be logged: the API key replaced by a marker,
 * and the MCP servers' inline secrets (`env` and `headers` values that are
 * not `${NAME}` references, credentials in URLs and arguments) by
 * `<redacted>`. */
export function forLog(settings: ServerSettings): Record<string, unknown> {
    const { apiKey, mcpServers: servers, ...rest } = settings;
    const out: Record<string, unknown> = { ...rest };
    if (servers !== undefined) out.mcpServers = mcpForLog(servers);
    if (apiKey !== undefined) out.apiKey = HIDDEN_KEY;
    return out;
}

/** Where each provider's key lives in SecretStorage. */
export function secretKeyFor(provider: string): string {
    return `rein.apiKey.${provider}`;
}

/** The providers a stored API key can belong to. */
export const KEYED_PROVIDERS = ['anthropic', 'openai'] as const;
