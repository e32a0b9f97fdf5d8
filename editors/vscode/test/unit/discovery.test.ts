import assert from 'node:assert/strict';
import { test } from 'node:test';

import { DiscoveryInput, findServer } from '../../src/discovery';

function input(executables: string[], more: Partial<DiscoveryInput> = {}): DiscoveryInput {
    const present = new Set(executables);
    return {
        configured: undefined,
        pathEnv: '/usr/local/bin:/usr/bin',
        home: '/home/ann',
        workspaceFolder: '/work/project',
        extensionPath: '/ext/rein',
        platform: 'linux',
        isExecutable: async (file) => present.has(file),
        ...more,
    };
}

test('the setting comes first', async () => {
    const found = await findServer(input(['/opt/rein', '/usr/bin/rein'], { configured: '/opt/rein' }));
    assert.deepEqual(found, { found: true, path: '/opt/rein', source: 'setting' });
});

test('a setting with ~ or a relative path is resolved', async () => {
    assert.deepEqual(await findServer(input(['/home/ann/bin/rein'], { configured: '~/bin/rein' })), {
        found: true,
        path: '/home/ann/bin/rein',
        source: 'setting',
    });
    assert.deepEqual(await findServer(input(['/work/project/target/debug/rein'], { configured: 'target/debug/rein' })), {
        found: true,
        path: '/work/project/target/debug/rein',
        source: 'setting',
    });
});

test('a wrong setting is an error naming it, not a silent fall back to PATH', async () => {
    const found = await findServer(input(['/usr/bin/rein'], { configured: '/nope/rein' }));
    assert.equal(found.found, false);
    assert.match(!found.found ? found.message : '', /rein\.server\.path is set to "\/nope\/rein", but there is no executable file at \/nope\/rein/);
});

test('then PATH, in order', async () => {
    const found = await findServer(input(['/usr/bin/rein', '/usr/local/bin/rein']));
    assert.deepEqual(found, { found: true, path: '/usr/local/bin/rein', source: 'PATH' });
});

test('a blank setting means unset', async () => {
    const found = await findServer(input(['/usr/bin/rein'], { configured: '   ' }));
    assert.deepEqual(found, { found: true, path: '/usr/bin/rein', source: 'PATH' });
});

test('then the binary bundled in the extension', async () => {
    const found = await findServer(input(['/ext/rein/server/rein'], { pathEnv: undefined }));
    assert.deepEqual(found, { found: true, path: '/ext/rein/server/rein', source: 'bundled' });
});

test('nothing found: the message names the setting, the button and how to build the binary', async () => {
    const found = await findServer(input([]));
    assert.equal(found.found, false);
    const message = !found.found ? found.message : '';
    assert.match(message, /rein\.server\.path/);
    assert.match(message, /Locate Binary…/);
    assert.match(message, /cargo build --release -p rein/);
    // Shown as plain text by VS Code's notifications: no Markdown backticks.
    assert.doesNotMatch(message, /`/);
});

test('Windows: rein.exe and ; between PATH entries', async () => {
    const found = await findServer(
        input(['C:\\tools\\rein.exe'], { platform: 'win32', pathEnv: 'C:\\Windows;C:\\tools', home: 'C:\\Users\\ann' }),
    );
    assert.deepEqual(found, { found: true, path: 'C:\\tools\\rein.exe', source: 'PATH' });
});
