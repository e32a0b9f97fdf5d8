import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { commandIds } from '../../src/command_ids';
import { serverCommands } from '../../src/protocol';

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '../../package.json'), 'utf8'));

test('every command is contributed with a title, and only those', () => {
    const contributed: { command: string; title: string; category: string }[] = manifest.contributes.commands;
    assert.deepEqual(contributed.map((c) => c.command).sort(), Object.values(commandIds).sort());
    for (const c of contributed) {
        assert.ok(c.title && c.category === 'Rein', c.command);
    }
});

test('no command id of ours clashes with the server’s (the language client registers those globally)', () => {
    const ours = new Set<string>(Object.values(commandIds));
    for (const id of Object.values(serverCommands)) assert.ok(!ours.has(id), id);
});

test('the engine is the VS Code that code-server 4.100 runs', () => {
    assert.equal(manifest.engines.vscode, '^1.100.0');
    assert.equal(manifest.devDependencies['@types/vscode'], '1.100.0');
});
