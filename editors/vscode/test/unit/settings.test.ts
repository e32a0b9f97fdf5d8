import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { forLog, HIDDEN_KEY, SENT_KEYS, serverSettings } from '../../src/settings';

const lookupOf = (values: Record<string, unknown>) => (key: string) => values[key];

test('only what the user set is sent (defaults would override .rein/config.toml)', () => {
    assert.deepEqual(serverSettings(lookupOf({}), undefined), { settings: {}, problems: [] });
});

test('every setting maps to the server’s camelCase key', () => {
    const { settings, problems } = serverSettings(
        lookupOf({
            provider: 'openai',
            model: 'qwen2.5-coder:7b',
            baseUrl: 'http://localhost:11434/v1',
            maxTurns: 8,
            maxCostUsd: 0.5,
            maxMinutes: 10,
            maxTokens: 100000,
            testCommand: 'python -m pytest {target}',
            allowTestEdits: true,
            'permissions.allow': ['run_command(cargo test:*)'],
            'permissions.ask': ['run_command(npm install:*)'],
            'permissions.deny': ['run_command(make deploy:*)', 'edit_file(migrations/**)'],
            approvalTimeoutSecs: 60,
            confirmTimeoutSecs: 2.5,
            reopenTimeoutSecs: 10,
            scenario: 'fixtures/scenario.json',
        }),
        'sk-secret-key-0123456789',
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(settings, {
        provider: 'openai',
        model: 'qwen2.5-coder:7b',
        baseUrl: 'http://localhost:11434/v1',
        maxTurns: 8,
        maxCostUsd: 0.5,
        maxMinutes: 10,
        maxTokens: 100000,
        testCommand: 'python -m pytest {target}',
        allowTestEdits: true,
        permissions: {
            allow: ['run_command(cargo test:*)'],
            ask: ['run_command(npm install:*)'],
            deny: ['run_command(make deploy:*)', 'edit_file(migrations/**)'],
        },
        approvalTimeoutSecs: 60,
        confirmTimeoutSecs: 2.5,
        reopenTimeoutSecs: 10,
        scenario: 'fixtures/scenario.json',
        apiKey: 'sk-secret-key-0123456789',
    });
});

test('provider "auto" and empty strings are not sent', () => {
    const { settings } = serverSettings(lookupOf({ provider: 'auto', model: '', baseUrl: '  ' }), '');
    assert.deepEqual(settings, {});
});

test('values the server would refuse are left out and reported by name', () => {
    const { settings, problems } = serverSettings(
        lookupOf({ maxTurns: 2.5, maxCostUsd: -1, allowTestEdits: 'yes', 'permissions.deny': 'edit_file(**)', model: 7 }),
        undefined,
    );
    assert.deepEqual(settings, {});
    assert.deepEqual(
        problems.map((p) => p.key),
        ['rein.model', 'rein.maxTurns', 'rein.maxCostUsd', 'rein.allowTestEdits', 'rein.permissions.deny'],
    );
    assert.match(problems[1].message, /rein\.maxTurns must be a whole number of at least 1; it is ignored/);
});

test('the key never appears in what is logged', () => {
    const key = 'sk-ant-api03-VERY-SECRET';
    const { settings } = serverSettings(lookupOf({ provider: 'anthropic', maxTurns: 5 }), key);
    const logged = JSON.stringify(forLog(settings));
    assert.ok(!logged.includes(key), logged);
    assert.deepEqual(forLog(settings), { provider: 'anthropic', maxTurns: 5, apiKey: HIDDEN_KEY });
    // And without a key nothing pretends there is one.
    assert.deepEqual(forLog({ maxTurns: 5 }), { maxTurns: 5 });
});

test('package.json contributes every key that is sent, with the server’s defaults', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '../../package.json'), 'utf8'));
    const props = manifest.contributes.configuration.properties;
    for (const key of SENT_KEYS) {
        assert.ok(props[`rein.${key}`], `rein.${key} is not contributed`);
        assert.ok(props[`rein.${key}`].markdownDescription, `rein.${key} has no description`);
    }
    assert.equal(props['rein.maxTurns'].default, 20);
    assert.equal(props['rein.maxCostUsd'].default, 2);
    assert.equal(props['rein.maxMinutes'].default, 30);
    assert.equal(props['rein.maxTokens'].default, 2000000);
    assert.equal(props['rein.allowTestEdits'].default, false);
    // No setting may hold a key: it lives in SecretStorage.
    assert.ok(!Object.keys(props).some((k) => /apikey|secret|token$/i.test(k)), Object.keys(props).join(', '));
});
