// End to end in real VS Code: code-server 4.100 (VS Code 1.100) in headless
// Chromium, the packaged extension, the real `rein` binary with its
// scripted model. Driven by tests/vscode.rs, which prepares the workspace
// (a copy of the demo project), checks the disk afterwards and prints the
// diagnostics this leaves in $REIN_E2E_OUT when something fails.
//
// Environment: REIN_E2E_CODE_SERVER, REIN_E2E_VSIX, REIN_E2E_REIN_BIN,
// REIN_E2E_WORKSPACE, REIN_E2E_OUT, REIN_E2E_SECRET, REIN_E2E_SCENARIO
// (`fix-test`), REIN_E2E_BUNDLED (set: no `rein.server.path`, the server
// must come from the package), REIN_E2E_TEST_CONTROLLER (set: also install
// test-controller/, another extension's tests for the Testing view),
// CHROMIUM (default /usr/bin/chromium).

import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium } from 'playwright-core';

import * as codeServer from './code_server.mjs';
import { scenarios } from './scenarios.mjs';
import { Workbench } from './workbench.mjs';

function need(name) {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set (see the top of ${import.meta.url})`);
    return value;
}

const started = Date.now();
const log = (message) => console.log(`[e2e +${((Date.now() - started) / 1000).toFixed(1)}s] ${message}`);

async function main() {
    const out = need('REIN_E2E_OUT');
    const workspace = need('REIN_E2E_WORKSPACE');
    const scenario = scenarios[process.env.REIN_E2E_SCENARIO ?? 'fix-test'];
    if (!scenario) throw new Error(`unknown REIN_E2E_SCENARIO ${process.env.REIN_E2E_SCENARIO}`);
    const p = codeServer.profile(out);
    // User settings: the binary cargo built; nothing that pops up on its own.
    fs.mkdirSync(path.join(p.userData, 'User'), { recursive: true });
    fs.writeFileSync(
        path.join(p.userData, 'User', 'settings.json'),
        JSON.stringify(
            {
                ...(process.env.REIN_E2E_BUNDLED ? {} : { 'rein.server.path': need('REIN_E2E_REIN_BIN') }),
                // Every message between VS Code and Rein goes to the log,
                // so the test can check that the API key never does.
                'rein.trace.server': 'verbose',
                'security.workspace.trust.enabled': false,
                'workbench.startupEditor': 'none',
                'workbench.tips.enabled': false,
                'telemetry.telemetryLevel': 'off',
                'extensions.ignoreRecommendations': true,
                'extensions.autoCheckUpdates': false,
                'extensions.autoUpdate': false,
                'update.mode': 'none',
                'git.enabled': false,
                'remote.autoForwardPorts': false,
                'editor.codeActionWidget.includeNearbyQuickFixes': false,
                'files.autoSave': 'off',
            },
            null,
            2,
        ),
    );
    log('installing the extension');
    await codeServer.installExtension(need('REIN_E2E_CODE_SERVER'), p, need('REIN_E2E_VSIX'));
    if (process.env.REIN_E2E_TEST_CONTROLLER) {
        // Another extension's tests in the Testing view (test-controller/).
        log('installing a test controller');
        const vsix = await codeServer.packageFolder(new URL('./test-controller/', import.meta.url).pathname, out);
        await codeServer.installExtension(need('REIN_E2E_CODE_SERVER'), p, vsix);
    }
    // `--log trace`: the extension's output channels log at trace level, so
    // the LSP message trace is on and lands in the log folder.
    const server = await codeServer.start(need('REIN_E2E_CODE_SERVER'), p, { extraArgs: ['--log', 'trace'] });
    log(`code-server at ${server.url}`);
    const browser = await chromium.launch({
        executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    const browserLog = fs.createWriteStream(path.join(out, 'browser-console.log'));
    page.on('console', (m) => browserLog.write(`[${m.type()}] ${m.text()}\n`));
    page.on('pageerror', (e) => browserLog.write(`[pageerror] ${e.stack ?? e}\n`));
    const bench = new Workbench(page, log);
    const result = { scenario: process.env.REIN_E2E_SCENARIO ?? 'fix-test' };
    try {
        await bench.open(server.url, workspace);
        const shot = (name) => page.screenshot({ path: path.join(out, `${name}.png`) });
        await scenario(bench, result, { secret: process.env.REIN_E2E_SECRET, log, shot, newestTask: () => newestTask(workspace) });
        await shot('done');
        result.ok = true;
    } catch (error) {
        result.ok = false;
        result.error = String(error?.stack ?? error);
        result.statusBar = await bench.reinStatus().catch(() => '');
        result.notifications = await bench.notifications().catch(() => []);
        await page.screenshot({ path: path.join(out, 'failure.png') }).catch(() => undefined);
        log(`FAILED: ${error}`);
    } finally {
        fs.writeFileSync(path.join(out, 'result.json'), JSON.stringify(result, null, 2));
        await browser.close().catch(() => undefined);
        await server.stop();
        browserLog.end();
    }
    log(result.ok ? 'passed' : 'failed');
    return result.ok ? 0 : 1;
}

main().then(
    (code) => process.exit(code),
    (error) => {
        console.error(`e2e set-up failed: ${error?.stack ?? error}`);
        process.exit(2);
    },
);

/** The id of the task that started last in `workspace`, from its trace
 * file (`.rein/traces/<id>.jsonl`): the user-facing texts no longer name
 * tasks by id. */
function newestTask(workspace) {
    const dir = path.join(workspace, '.rein', 'traces');
    const traces = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => /^t-[0-9a-f-]+\.jsonl$/.test(f)) : [];
    const started = (f) => fs.statSync(path.join(dir, f)).birthtimeMs || fs.statSync(path.join(dir, f)).ctimeMs;
    traces.sort((a, b) => started(a) - started(b));
    return traces.at(-1)?.replace(/\.jsonl$/, '');
}
