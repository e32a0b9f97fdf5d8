// code-server (VS Code 1.100 served to a browser) for the end-to-end test:
// an isolated profile (user data, extensions, XDG config) under one folder,
// the extension installed from its .vsix, the server on a free port.

import { spawn, execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Folders of one isolated code-server profile under `root`. */
export function profile(root) {
    const p = {
        userData: path.join(root, 'user-data'),
        extensions: path.join(root, 'extensions'),
        xdgConfig: path.join(root, 'xdg-config'),
        xdgData: path.join(root, 'xdg-data'),
        log: path.join(root, 'code-server.log'),
    };
    for (const dir of [p.userData, p.extensions, p.xdgConfig, p.xdgData]) fs.mkdirSync(dir, { recursive: true });
    return p;
}

/** Environment for code-server and everything it starts (the extension
 * host, so `rein lsp` too): nothing from the user's own config leaks in. */
function env(p) {
    const e = { ...process.env, XDG_CONFIG_HOME: p.xdgConfig, XDG_DATA_HOME: p.xdgData };
    // The provider comes from the workspace settings, not the environment.
    for (const name of ['REIN_PROVIDER', 'REIN_MODEL', 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'REIN_MAX_TURNS', 'REIN_MAX_COST_USD']) {
        delete e[name];
    }
    // The driver's own settings (the test's API key among them) are not
    // VS Code's business; code-server logs its environment at trace level.
    for (const name of Object.keys(e)) if (name.startsWith('REIN_E2E_')) delete e[name];
    return e;
}

function common(p) {
    return ['--user-data-dir', p.userData, '--extensions-dir', p.extensions];
}

export async function installExtension(codeServer, p, vsix) {
    const out = await new Promise((resolve, reject) => {
        execFile(codeServer, [...common(p), '--install-extension', vsix, '--force'], { env: env(p), timeout: 120_000 }, (error, stdout, stderr) => {
            if (error) reject(new Error(`installing ${vsix} failed: ${error.message}\n${stdout}\n${stderr}`));
            else resolve(stdout + stderr);
        });
    });
    if (!/successfully installed/.test(out)) throw new Error(`installing ${vsix} did not say it succeeded:\n${out}`);
}

/** Packages the extension in `folder` (plain JavaScript, no
 * dependencies) with the extension's own `vsce`; the `.vsix`'s path. */
export async function packageFolder(folder, outDir) {
    const vsce = new URL('../node_modules/.bin/vsce', import.meta.url).pathname;
    const vsix = path.join(outDir, `${path.basename(folder)}.vsix`);
    await new Promise((resolve, reject) => {
        execFile(
            vsce,
            ['package', '--no-dependencies', '--skip-license', '--allow-missing-repository', '--out', vsix],
            { cwd: folder, timeout: 120_000 },
            (error, stdout, stderr) => (error ? reject(new Error(`packaging ${folder} failed: ${error.message}\n${stdout}\n${stderr}`)) : resolve()),
        );
    });
    return vsix;
}

/** Starts code-server and resolves once it listens. */
export async function start(codeServer, p, { timeoutMs = 60_000, extraArgs = [] } = {}) {
    const log = fs.createWriteStream(p.log);
    const child = spawn(
        codeServer,
        [
            ...common(p),
            '--auth', 'none',
            '--bind-addr', '127.0.0.1:0',
            '--disable-telemetry',
            '--disable-update-check',
            '--disable-workspace-trust',
            '--disable-getting-started-override',
            ...extraArgs,
        ],
        { env: env(p), stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    let seen = '';
    const port = await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`code-server did not listen within ${timeoutMs / 1000} s; see ${p.log}`)), timeoutMs);
        const onData = (chunk) => {
            log.write(chunk);
            seen += chunk;
            const m = /HTTP server listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(seen);
            if (m) {
                clearTimeout(timer);
                resolve(Number(m[1]));
            }
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
        child.on('exit', (code) => {
            clearTimeout(timer);
            reject(new Error(`code-server exited with ${code} before listening; see ${p.log}`));
        });
    });
    // Keep logging after the start.
    child.stdout.removeAllListeners('data');
    child.stderr.removeAllListeners('data');
    child.stdout.on('data', (c) => log.write(c));
    child.stderr.on('data', (c) => log.write(c));
    return {
        url: `http://127.0.0.1:${port}`,
        async stop() {
            if (child.exitCode !== null) return;
            const exited = new Promise((resolve) => child.once('exit', resolve));
            // Its own process group: the extension host and `rein lsp` go too.
            try {
                process.kill(-child.pid, 'SIGTERM');
            } catch {
                /* already gone */
            }
            const timer = setTimeout(() => {
                try {
                    process.kill(-child.pid, 'SIGKILL');
                } catch {
                    /* already gone */
                }
            }, 10_000);
            await exited;
            clearTimeout(timer);
            log.end();
        },
    };
}
