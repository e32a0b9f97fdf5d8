// Builds the extension into one file (dist/main.js) and, with --tests, the
// unit tests into out/test/ for `node --test`. esbuild only strips types;
// `npm run typecheck` (tsc --noEmit) is the type check.

import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';

const production = process.argv.includes('--production');
const tests = process.argv.includes('--tests');

if (tests) {
    const dir = 'test/unit';
    const entryPoints = fs
        .readdirSync(dir)
        .filter((f) => f.endsWith('.test.ts'))
        .map((f) => path.join(dir, f));
    fs.rmSync('out', { recursive: true, force: true });
    await esbuild.build({
        entryPoints,
        outdir: 'out/test',
        bundle: true,
        platform: 'node',
        target: 'node20',
        format: 'cjs',
        sourcemap: 'inline',
        // The unit tests run outside VS Code: a module that needs it must
        // not be imported by a test, and this makes such a mistake loud.
        external: ['vscode'],
        logLevel: 'warning',
    });
} else {
    await esbuild.build({
        entryPoints: ['src/main.ts'],
        outfile: 'dist/main.js',
        bundle: true,
        platform: 'node',
        target: 'node20',
        format: 'cjs',
        external: ['vscode'],
        minify: production,
        sourcemap: production ? false : 'linked',
        logLevel: 'warning',
    });
}
