// Keeping API keys out of everything the extension writes: output
// channels (which VS Code also saves to its log folder), the LSP message
// trace and messages. The key is sent to the server in
// `initializationOptions` and in `workspace/configuration` answers, both
// of which the LSP trace would print; every line passes through here first.

export const REDACTED = '<redacted>';

/** Keys shorter than this are not redacted: they would mangle ordinary text. */
const MIN_SECRET_LENGTH = 8;

/** `text` with every occurrence of every secret replaced. */
export function redact(text: string, secrets: Iterable<string>): string {
    let out = text;
    for (const secret of secrets) {
        if (secret.length < MIN_SECRET_LENGTH) continue;
        out = out.split(secret).join(REDACTED);
        // JSON-escaped too, as a trace prints it inside a string.
        const escaped = JSON.stringify(secret).slice(1, -1);
        if (escaped !== secret) out = out.split(escaped).join(REDACTED);
    }
    return out;
}

/** The secrets the extension currently knows, updated as keys are set. */
export class SecretSet {
    private readonly values = new Set<string>();

    add(secret: string | undefined): void {
        if (secret) this.values.add(secret);
    }

    /** Keeps the old value too: it may still be in flight in a message. */
    [Symbol.iterator](): Iterator<string> {
        return this.values.values();
    }

    redact(text: string): string {
        return redact(text, this.values);
    }
}
