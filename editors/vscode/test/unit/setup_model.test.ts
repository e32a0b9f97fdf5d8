import * as assert from 'node:assert/strict';
import { test } from 'node:test';

import { choices, normalizeAddress, settingsFor } from '../../src/setup_model';

const found = { ok: true, models: ['qwen2.5-coder:7b', 'llama3'], message: 'ok' };
const absent = { ok: false, models: [], message: 'connection refused' };

test('a running local server is offered with its models, an absent one is not', () => {
    const items = choices([
        { name: 'Ollama', baseUrl: 'http://localhost:11434/v1', checked: found },
        { name: 'llama.cpp', baseUrl: 'http://localhost:8080/v1', checked: absent },
    ]);
    assert.deepEqual(
        items.map((i) => i.label),
        ['Anthropic (Claude)', 'OpenAI', 'Ollama on this machine', 'Another OpenAI-compatible server…', 'The offline demo model'],
    );
    assert.equal(items[2].description, 'found at http://localhost:11434/v1: 2 models');
});

test('with no local server running, the address entry says so', () => {
    const items = choices([{ name: 'Ollama', baseUrl: 'http://localhost:11434/v1', checked: absent }]);
    const other = items.find((i) => i.choice.kind === 'local-other');
    assert.match(other?.description ?? '', /no Ollama or llama\.cpp is running here/);
});

test('each choice writes the provider and clears what it does not use', () => {
    assert.deepEqual(settingsFor({ kind: 'anthropic' }), { provider: 'anthropic', baseUrl: undefined, model: undefined });
    assert.deepEqual(settingsFor({ kind: 'local', name: 'Ollama', baseUrl: 'http://localhost:11434/v1', models: [] }, 'llama3'), {
        provider: 'openai',
        baseUrl: 'http://localhost:11434/v1',
        model: 'llama3',
    });
    assert.deepEqual(settingsFor({ kind: 'demo' }), { provider: 'scripted', baseUrl: undefined, model: undefined });
});

test('an address is made an http(s) /v1 URL, anything else refused', () => {
    assert.equal(normalizeAddress('localhost:1234'), 'http://localhost:1234/v1');
    assert.equal(normalizeAddress('https://models.example/v1/'), 'https://models.example/v1');
    assert.equal(normalizeAddress('  '), undefined);
    assert.equal(normalizeAddress('file:///etc/passwd'), undefined);
});
