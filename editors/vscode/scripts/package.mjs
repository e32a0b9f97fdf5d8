// Packages the extension for one platform with Rein's server inside
// (`server/rein`), the way rust-analyzer ships: `vsce package --target`.
//
//   node scripts/package.mjs [--target linux-x64] [--binary PATH] [--out FILE]
//
// --target: VS Code's platform name (default: this machine's, e.g.
//   linux-x64, linux-arm64, darwin-arm64, win32-x64).
// --binary: the `rein` binary to bundle (default: build it with
//   `cargo build --release -p rein` in the repository and take
//   target/release/rein). It must be built for --target.
// --out: the .vsix to write (default: rein-<target>.vsix here).
//
// The binary is copied to server/ for the packaging only and removed
// afterwards, so a later `vsce package` never ships a stale one.

import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const repo = path.resolve(here, '../..');

function arg(name) {
    const i = process.argv.indexOf(name);
    if (i < 0) return undefined;
    const value = process.argv[i + 1];
    if (!value || value.startsWith('--')) throw new Error(`${name} needs a value`);
    return value;
}

/** VS Code's name for this machine's platform. */
function thisTarget() {
    const arch = { x64: 'x64', arm64: 'arm64', arm: 'armhf' }[process.arch];
    const platform = { linux: 'linux', darwin: 'darwin', win32: 'win32' }[process.platform];
    if (!arch || !platform) throw new Error(`no VS Code target for ${process.platform}/${process.arch}: pass --target`);
    return `${platform}-${arch}`;
}

const KNOWN = ['linux-x64', 'linux-arm64', 'linux-armhf', 'alpine-x64', 'alpine-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64', 'win32-arm64'];

function main() {
    const target = arg('--target') ?? thisTarget();
    if (!KNOWN.includes(target)) throw new Error(`unknown target ${target}; one of ${KNOWN.join(', ')}`);
    const exe = target.startsWith('win32') ? 'rein.exe' : 'rein';
    let binary = arg('--binary');
    if (!binary) {
        console.error('[package] cargo build --release -p rein');
        execFileSync('cargo', ['build', '--release', '-p', 'rein'], { cwd: repo, stdio: 'inherit' });
        binary = path.join(repo, 'target', 'release', exe);
    }
    binary = path.resolve(binary);
    if (!fs.statSync(binary, { throwIfNoEntry: false })?.isFile()) throw new Error(`no binary at ${binary}`);
    const out = path.resolve(arg('--out') ?? path.join(here, `rein-${target}.vsix`));

    console.error('[package] bundling the extension');
    execFileSync('node', ['esbuild.mjs', '--production'], { cwd: here, stdio: 'inherit' });
    const server = path.join(here, 'server');
    fs.rmSync(server, { recursive: true, force: true });
    fs.mkdirSync(server);
    try {
        fs.copyFileSync(binary, path.join(server, exe));
        fs.chmodSync(path.join(server, exe), 0o755);
        const vsce = path.join(here, 'node_modules', '.bin', process.platform === 'win32' ? 'vsce.cmd' : 'vsce');
        console.error(`[package] vsce package --target ${target}`);
        execFileSync(vsce, ['package', '--target', target, '--no-dependencies', '--skip-license', '--out', out], {
            cwd: here,
            stdio: ['ignore', 'inherit', 'inherit'],
        });
    } finally {
        fs.rmSync(server, { recursive: true, force: true });
    }
    console.log(out);
}

try {
    main();
} catch (error) {
    console.error(`[package] ${error?.message ?? error}`);
    process.exit(1);
}
