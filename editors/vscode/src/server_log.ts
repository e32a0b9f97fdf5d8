// The server logs with `tracing` to stderr, one event a line:
// `2026-11-30T08:11:38.304558Z  INFO rein::server: initialize client=…`.
// The output channel stamps its own time and shows levels, so a line is
// split into its level and its text; otherwise every line of stderr would
// be shown as an error.

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export interface LogLine {
    level: LogLevel;
    text: string;
}

const EVENT = /^\S+Z\s+(TRACE|DEBUG|INFO|WARN|ERROR)\s+(.*)$/;

export function parseServerLine(line: string): LogLine {
    const m = EVENT.exec(line);
    if (!m) {
        // A panic message or anything else not from `tracing`: keep it loud.
        return { level: 'error', text: line };
    }
    return { level: m[1].toLowerCase() as LogLevel, text: m[2] };
}
