// Set-up in a minute, the pure part: what `rein/providerStatus` and
// `rein/checkProvider` answer, the choices the set-up offers (a local
// server shown as found or not), and the settings a choice writes. The
// flow with VS Code's pickers is setup.ts.

/** `rein/providerStatus`. */
export interface ProviderStatus {
    configured: boolean;
    provider: string | null;
    model: string | null;
    baseUrl: string | null;
    hasKey: boolean;
    keyFrom: string | null;
    problem: string | null;
}

/** `rein/checkProvider`'s answer. */
export interface Checked {
    ok: boolean;
    models: string[];
    message: string;
}

export const providerStatus = 'rein/providerStatus';
export const checkProvider = 'rein/checkProvider';

/** Where local model servers listen by default. */
export const LOCAL_SERVERS: readonly { name: string; baseUrl: string }[] = [
    { name: 'Ollama', baseUrl: 'http://localhost:11434/v1' },
    { name: 'llama.cpp (llama-server)', baseUrl: 'http://localhost:8080/v1' },
];

export type Choice =
    | { kind: 'anthropic' }
    | { kind: 'openai' }
    | { kind: 'local'; name: string; baseUrl: string; models: string[] }
    | { kind: 'local-other' }
    | { kind: 'demo' };

export interface ChoiceItem {
    label: string;
    description?: string;
    detail?: string;
    choice: Choice;
}

/** The set-up's first question; `local`: each default local server as
 * checked (found, with its models, or not). */
export function choices(local: readonly { name: string; baseUrl: string; checked: Checked }[]): ChoiceItem[] {
    const items: ChoiceItem[] = [
        { label: 'Anthropic (Claude)', description: 'an API key from console.anthropic.com', choice: { kind: 'anthropic' } },
        { label: 'OpenAI', description: 'an API key from platform.openai.com', choice: { kind: 'openai' } },
    ];
    for (const server of local) {
        if (server.checked.ok) {
            const n = server.checked.models.length;
            items.push({
                label: `${server.name} on this machine`,
                description: `found at ${server.baseUrl}: ${n} model${n === 1 ? '' : 's'}`,
                choice: { kind: 'local', name: server.name, baseUrl: server.baseUrl, models: server.checked.models },
            });
        }
    }
    const none = local.every((s) => !s.checked.ok);
    items.push({
        label: 'Another OpenAI-compatible server…',
        description: none ? 'no Ollama or llama.cpp is running here; enter its address' : 'enter its address',
        choice: { kind: 'local-other' },
    });
    items.push({
        label: 'The offline demo model',
        description: 'no key, no network: a scripted model that fixes the demo project',
        choice: { kind: 'demo' },
    });
    return items;
}

/** The `rein.*` settings a finished set-up writes (`undefined`: cleared). */
export function settingsFor(choice: Choice, model?: string, baseUrl?: string): Record<string, string | undefined> {
    switch (choice.kind) {
        case 'anthropic':
            return { provider: 'anthropic', baseUrl: undefined, model };
        case 'openai':
            return { provider: 'openai', baseUrl: undefined, model };
        case 'local':
            return { provider: 'openai', baseUrl: choice.baseUrl, model };
        case 'local-other':
            return { provider: 'openai', baseUrl, model };
        case 'demo':
            return { provider: 'scripted', baseUrl: undefined, model: undefined };
    }
}

/** An address the user typed, as the server's check wants it. */
export function normalizeAddress(text: string): string | undefined {
    let url = text.trim();
    if (url === '') return undefined;
    // Another scheme (file:, ftp:) is refused, not made into a host name.
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) && !/^https?:\/\//i.test(url)) return undefined;
    if (!/^https?:\/\//i.test(url)) url = `http://${url}`;
    try {
        const parsed = new URL(url);
        if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
    } catch {
        return undefined;
    }
    url = url.replace(/\/+$/, '');
    return /\/v1$/.test(url) ? url : `${url}/v1`;
}
