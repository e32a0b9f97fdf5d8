// `rein/verification` as lines for the "Rein Tasks" output channel: what
// the verifier ran and saw, so a user can check a "fixed" for themselves.

import { Evidence, Verification } from './protocol';

export function verificationLines(v: Verification): string[] {
    const lines = [`${v.passed ? '✔ verification passed' : '✘ verification failed'} (task ${v.taskId}): ${v.detail}`];
    for (const e of v.evidence) lines.push(...evidenceLines(e));
    return lines;
}

function evidenceLines(e: Evidence): string[] {
    const exit = e.exitCode === null ? 'no exit code (killed or timed out)' : `exit code ${e.exitCode}`;
    const lines = [
        `  check     ${e.check}`,
        `  command   ${e.command}`,
        `  result    ${exit} in ${(e.durationMs / 1000).toFixed(1)} s`,
    ];
    for (const f of e.files) lines.push(`  file      ${f.path} @ ${f.contentHash.slice(0, 12)}`);
    if (e.logPath) lines.push(`  log       ${e.logPath}`);
    for (const failure of e.failures) lines.push(`  failing   ${failure}`);
    return lines;
}
