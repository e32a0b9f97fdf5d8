// `rein.mcpServers` → the server's `mcpServers`: MCP servers by name, each
// as `McpServerSettings` in server/core/src/config/mcp.rs (camelCase).
//
// The server reads the editor's settings as one object and refuses the
// whole of it over one value of the wrong type, and refuses the whole
// configuration over one server it cannot use. So each server is checked
// here as the server would check it (types, then `config/mcp.rs`'s rules),
// and one it would refuse is left out and reported: the other servers and
// every other setting still work.
//
// `env` and `headers` values may be `${NAME}` references to the user's
// environment (filled in by the server when it starts the MCP server); a
// value written inline may be a token. `forLog` hides such values, and
// `secretsOf` lists them for the redactor of every channel (the LSP trace
// prints the settings as sent).

import * as path from 'node:path';

import { REDACTED } from './redact';
import type { Problem } from './problem';

/** One MCP server as the server reads it (`McpServerSettings`). */
export interface McpServer {
    type?: string;
    command?: string;
    args?: string[];
    env?: Record<string, string>;
    envVars?: string[];
    url?: string;
    headers?: Record<string, string>;
    enabled?: boolean;
    enabledTools?: string[];
    disabledTools?: string[];
    startupTimeoutSec?: number;
    toolTimeoutSec?: number;
    maxOutputTokens?: number;
    network?: boolean;
    readableRoots?: string[];
    sandbox?: string;
    startWithSession?: boolean;
}

export type McpServers = Record<string, McpServer>;

type Kind = 'string' | 'strings' | 'map' | 'boolean' | 'seconds' | 'count';

/** Every field the server reads, and what it must be. */
const FIELDS: Record<keyof McpServer, Kind> = {
    type: 'string',
    command: 'string',
    args: 'strings',
    env: 'map',
    envVars: 'strings',
    url: 'string',
    headers: 'map',
    enabled: 'boolean',
    enabledTools: 'strings',
    disabledTools: 'strings',
    startupTimeoutSec: 'seconds',
    toolTimeoutSec: 'seconds',
    maxOutputTokens: 'count',
    network: 'boolean',
    readableRoots: 'strings',
    sandbox: 'string',
    startWithSession: 'boolean',
};

/** The fields of one server, as settings.json spells them. */
export const MCP_FIELDS = Object.keys(FIELDS) as readonly (keyof McpServer)[];

/** Longest server name: `mcp__<server>__<tool>` must fit 64 characters. */
export const MAX_SERVER_NAME = 24;

/** The longest timeout the server accepts, in seconds (a day). */
const MAX_SECONDS = 86_400;

const HTTP_TYPES = ['http', 'streamable-http', 'streamableHttp'];

const WHY: Record<Kind, string> = {
    string: 'must be a string',
    strings: 'must be a list of strings',
    map: 'must be an object whose values are strings (a value may be ${NAME}, a variable of your environment)',
    boolean: 'must be true or false',
    seconds: `must be a number of seconds above 0 (at most ${MAX_SECONDS})`,
    count: 'must be a whole number of at least 1',
};

function isObject(value: unknown): value is Record<string, unknown> {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fits(kind: Kind, value: unknown): boolean {
    switch (kind) {
        case 'string':
            return typeof value === 'string';
        case 'strings':
            return Array.isArray(value) && value.every((v) => typeof v === 'string');
        case 'map':
            return isObject(value) && Object.values(value).every((v) => typeof v === 'string');
        case 'boolean':
            return typeof value === 'boolean';
        case 'seconds':
            return typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= MAX_SECONDS;
        case 'count':
            return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
    }
}

/** Why `name` cannot name a server (`check_name` in config/mcp.rs). */
export function nameProblem(name: string): string | undefined {
    if (name.length < 1 || name.length > MAX_SERVER_NAME || !/^[A-Za-z0-9_-]+$/.test(name) || name.includes('__')) {
        return `the name must be 1 to ${MAX_SERVER_NAME} ASCII letters, digits, - or _ (never __): its tools are named mcp__<server>__<tool>`;
    }
    return undefined;
}

/** Why the server would refuse this (type-checked) entry, per config/mcp.rs. */
function entryProblem(s: McpServer): string | undefined {
    const kind = s.type?.trim();
    const hasCommand = s.command !== undefined;
    const hasUrl = s.url !== undefined;
    if (hasCommand && hasUrl) return 'set command (a stdio server) or url (an HTTP server), not both';
    if (hasCommand && (kind === undefined || kind === 'stdio')) {
        if (s.command!.trim() === '') return 'command is empty';
    } else if (hasUrl && (kind === undefined || HTTP_TYPES.includes(kind))) {
        if (!/^https?:\/\//.test(s.url!)) return 'url must start with http:// or https://';
    } else if (hasUrl && kind === 'sse') {
        return 'the SSE transport is not supported: use the server’s Streamable HTTP endpoint (type "http")';
    } else if (kind !== undefined) {
        return `type "${kind}" does not fit the entry (stdio needs command, http needs url)`;
    } else {
        return 'set command (a stdio server) or url (an HTTP server)';
    }
    const sandbox = s.sandbox?.trim();
    if (sandbox !== undefined && sandbox !== 'on' && sandbox !== 'off') return 'sandbox must be "on" or "off"';
    if (s.readableRoots?.some((root) => !path.isAbsolute(root))) return 'readableRoots must be absolute paths';
    return undefined;
}

/**
 * The servers of `rein.mcpServers` the server would accept, and a problem
 * for each one left out (never quoting a value: it may be a secret).
 * `undefined` servers: nothing to send.
 */
export function mcpServers(value: unknown): { servers?: McpServers; problems: Problem[] } {
    const problems: Problem[] = [];
    if (value === undefined || value === null) return { problems };
    if (!isObject(value)) {
        problems.push({
            key: 'rein.mcpServers',
            message: 'rein.mcpServers must be an object mapping server names to servers; it is ignored',
        });
        return { problems };
    }
    const servers: McpServers = {};
    for (const [name, entry] of Object.entries(value)) {
        const key = `rein.mcpServers.${name}`;
        const leftOut = (why: string) => problems.push({ key, message: `${key}: ${why}; this server is left out` });
        const badName = nameProblem(name);
        if (badName) {
            leftOut(badName);
            continue;
        }
        if (!isObject(entry)) {
            leftOut('must be an object such as { "command": "npx", "args": [...] }');
            continue;
        }
        const server: McpServer = {};
        let why: string | undefined;
        for (const [field, v] of Object.entries(entry)) {
            if (!Object.hasOwn(FIELDS, field)) {
                // The server would ignore it; a misspelt `disabledTools`
                // ignored would offer tools the user meant to hide.
                why = `${field} is not a field of an MCP server (known: ${MCP_FIELDS.join(', ')})`;
                break;
            }
            const kind = FIELDS[field as keyof McpServer];
            if (v === undefined || v === null) continue;
            if (!fits(kind, v)) {
                why = `${field} ${WHY[kind]}`;
                break;
            }
            (server as Record<string, unknown>)[field] = Array.isArray(v) ? [...v] : isObject(v) ? { ...v } : v;
        }
        // A disabled entry is kept but never started, so the server only
        // reads it, without checking the rest.
        if (why === undefined && server.enabled !== false) why = entryProblem(server);
        if (why !== undefined) {
            leftOut(why);
            continue;
        }
        servers[name] = server;
    }
    return { servers: Object.keys(servers).length > 0 ? servers : undefined, problems };
}

// --- what may be logged -------------------------------------------------

const REFERENCE = /\$\{[A-Za-z0-9_]+\}/g;
/** What may surround references without being a secret: separators. */
const SEPARATORS = /^[\s:@/.,;-]*$/;
/** An auth scheme before a value: `Bearer `, `token `. */
const SCHEME = /^[A-Za-z]+ +/;

/**
 * Whether `value` is only references to the user's environment (`${NAME}`,
 * `Bearer ${TOKEN}`, `${USER}:${PASSWORD}`): nothing secret in the text.
 */
export function isReferenceOnly(value: string): boolean {
    if (!new RegExp(REFERENCE.source).test(value)) return false;
    return SEPARATORS.test(value.replace(SCHEME, '').replace(REFERENCE, ''));
}

/** The secret parts of a value written inline: the value and its literal
 * pieces (the token after `Bearer `, the text around references). */
function literalSecrets(value: string): string[] {
    if (value === '' || isReferenceOnly(value)) return [];
    const pieces = value
        .replace(SCHEME, '')
        .split(REFERENCE)
        .map((p) => p.trim())
        .filter((p) => !SEPARATORS.test(p));
    return [value, ...pieces];
}

/** A URL holding credentials (user info, a query, a fragment): what may be
 * shown of it and its secret parts. `undefined`: not such a URL. */
function urlWithSecrets(text: string): { shown: string; secrets: string[] } | undefined {
    if (!/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(text)) return undefined;
    let url: URL;
    try {
        url = new URL(text);
    } catch {
        return undefined;
    }
    if (!url.username && !url.password && !url.search && !url.hash) return undefined;
    const query = url.search
        .slice(1)
        .split('&')
        .map((pair) => pair.slice(pair.indexOf('=') + 1));
    const secrets = [text, url.username, url.password, url.hash.slice(1), ...query].filter((s) => s !== '');
    const userinfo = url.username || url.password ? `${REDACTED}@` : '';
    const shown =
        `${url.protocol}//${userinfo}${url.host}${url.pathname}` +
        (url.search ? `?${REDACTED}` : '') +
        (url.hash ? `#${REDACTED}` : '');
    return { shown, secrets };
}

/** A command-line flag (or `NAME=value`) whose value is a secret by name. */
const SECRET_NAME = /(token|key|secret|password|passwd|pwd|auth|credentials?)$/i;

/** The arguments as they may be logged, and their secret parts: URLs with
 * credentials, `--token=…`, `--api-key …`, `API_KEY=…`. */
function scrubArgs(args: readonly string[]): { shown: string[]; secrets: string[] } {
    const shown: string[] = [];
    const secrets: string[] = [];
    let nextIsSecret = false;
    for (const arg of args) {
        if (nextIsSecret && !arg.startsWith('-')) {
            nextIsSecret = false;
            const found = literalSecrets(arg);
            secrets.push(...found);
            shown.push(found.length > 0 ? REDACTED : arg);
            continue;
        }
        nextIsSecret = false;
        const url = urlWithSecrets(arg);
        if (url) {
            secrets.push(...url.secrets);
            shown.push(url.shown);
            continue;
        }
        const assignment = /^(-{0,2}[A-Za-z0-9_.-]+)=(.*)$/s.exec(arg);
        if (assignment && SECRET_NAME.test(assignment[1])) {
            const found = literalSecrets(assignment[2]);
            secrets.push(...found);
            shown.push(found.length > 0 ? `${assignment[1]}=${REDACTED}` : arg);
            continue;
        }
        if (/^-{1,2}[A-Za-z0-9_.-]+$/.test(arg) && SECRET_NAME.test(arg)) nextIsSecret = true;
        shown.push(arg);
    }
    return { shown, secrets };
}

function scrubMap(map: Record<string, string>, secrets: string[]): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(map)) {
        const found = literalSecrets(value);
        secrets.push(...found);
        out[name] = found.length > 0 ? REDACTED : value;
    }
    return out;
}

/** One server as it may be logged, and the secrets it holds. */
function scrub(server: McpServer): { shown: McpServer; secrets: string[] } {
    const secrets: string[] = [];
    const shown: McpServer = { ...server };
    if (server.env) shown.env = scrubMap(server.env, secrets);
    if (server.headers) shown.headers = scrubMap(server.headers, secrets);
    if (server.url !== undefined) {
        const url = urlWithSecrets(server.url);
        if (url) {
            shown.url = url.shown;
            secrets.push(...url.secrets);
        }
    }
    if (server.args) {
        const args = scrubArgs(server.args);
        shown.args = args.shown;
        secrets.push(...args.secrets);
    }
    return { shown, secrets };
}

/** The servers as they may be logged: values written inline in `env` and
 * `headers`, and credentials in URLs and arguments, replaced by a marker;
 * `${NAME}` references shown as they are. */
export function forLog(servers: McpServers): McpServers {
    const out: McpServers = {};
    for (const [name, server] of Object.entries(servers)) out[name] = scrub(server).shown;
    return out;
}

/** Every secret the servers' settings hold, for the redactor: the settings
 * are sent in `initialize` and `workspace/configuration`, which the LSP
 * trace prints. */
export function secretsOf(servers: McpServers | undefined): string[] {
    if (!servers) return [];
    return [...new Set(Object.values(servers).flatMap((server) => scrub(server).secrets))];
}
