import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

import { forLog, isReferenceOnly, MCP_FIELDS, mcpServers, nameProblem, secretsOf } from '../../src/mcp';
import { REDACTED, SecretSet } from '../../src/redact';
import { forLog as settingsForLog, serverSettings, userValue } from '../../src/settings';

const lookupOf = (values: Record<string, unknown>) => (key: string) => values[key];

const TOKEN = 'ghp_InlineSecret0123456789abcdef';

test('servers go to the server as mcpServers, with every field it reads', () => {
    const value = {
        filesystem: {
            command: 'npx',
            args: ['-y', '@modelcontextprotocol/server-filesystem', '/home/me/notes'],
            network: true,
        },
        github: {
            type: 'stdio',
            command: '/opt/github-mcp/bin/github-mcp-server',
            args: ['stdio'],
            env: { GITHUB_TOKEN: '${GITHUB_TOKEN}' },
            envVars: ['HTTPS_PROXY'],
            enabled: true,
            enabledTools: ['get_issue', 'list_issues'],
            disabledTools: ['delete_repository'],
            startupTimeoutSec: 10,
            toolTimeoutSec: 0.5,
            maxOutputTokens: 25000,
            readableRoots: ['/opt/github-mcp'],
            sandbox: 'on',
        },
        remote: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${MCP_TOKEN}' } },
        old: { enabled: false },
    };
    const { settings, problems } = serverSettings(lookupOf({ mcpServers: value }), undefined);
    assert.deepEqual(problems, []);
    assert.deepEqual(settings, { mcpServers: value });
    // A copy: what is sent never aliases VS Code's own objects.
    assert.notEqual(settings.mcpServers?.github.env, value.github.env);
});

test('no server, or an empty object, sends nothing', () => {
    assert.deepEqual(serverSettings(lookupOf({}), undefined).settings, {});
    assert.deepEqual(serverSettings(lookupOf({ mcpServers: {} }), undefined), { settings: {}, problems: [] });
});

test('a server the server would refuse is left out and reported; the others are sent', () => {
    const { servers, problems } = mcpServers({
        good: { command: 'node', args: ['server.js'] },
        a__b: { command: 'x' },
        'much-too-long-a-name-for-a-tool': { command: 'x' },
        'has space': { command: 'x' },
        notObject: 'npx server',
        badArgs: { command: 'npx', args: 'server' },
        badEnv: { command: 'npx', env: { TOKEN: 5 } },
        badTimeout: { command: 'x', toolTimeoutSec: 0 },
        badCount: { command: 'x', maxOutputTokens: 2.5 },
        both: { command: 'x', url: 'https://h/mcp' },
        neither: { args: ['a'] },
        emptyCommand: { command: '  ' },
        fileUrl: { url: 'file:///etc/passwd' },
        sse: { type: 'sse', url: 'https://h/sse' },
        wrongType: { type: 'http', command: 'x' },
        sandboxWord: { command: 'x', sandbox: 'no' },
        relativeRoot: { command: 'x', readableRoots: ['relative/dir'] },
        typo: { command: 'x', disabledTool: ['delete_repository'] },
        cline: { command: 'x', disabled: true },
    });
    assert.deepEqual(servers, { good: { command: 'node', args: ['server.js'] } });
    const byKey = Object.fromEntries(problems.map((p) => [p.key.replace('rein.mcpServers.', ''), p.message]));
    assert.deepEqual(Object.keys(byKey).sort(), [
        'a__b',
        'badArgs',
        'badCount',
        'badEnv',
        'badTimeout',
        'both',
        'cline',
        'emptyCommand',
        'fileUrl',
        'has space',
        'much-too-long-a-name-for-a-tool',
        'neither',
        'notObject',
        'relativeRoot',
        'sandboxWord',
        'sse',
        'typo',
        'wrongType',
    ]);
    for (const message of Object.values(byKey)) assert.match(message, /; this server is left out$/);
    assert.match(byKey.a__b, /^rein\.mcpServers\.a__b: the name must be 1 to 24 ASCII letters, digits, - or _ \(never __\)/);
    assert.match(byKey.badArgs, /: args must be a list of strings;/);
    assert.match(byKey.badEnv, /: env must be an object whose values are strings/);
    assert.match(byKey.badTimeout, /: toolTimeoutSec must be a number of seconds above 0/);
    assert.match(byKey.badCount, /: maxOutputTokens must be a whole number of at least 1/);
    assert.match(byKey.both, /not both/);
    assert.match(byKey.neither, /set command \(a stdio server\) or url \(an HTTP server\);/);
    assert.match(byKey.emptyCommand, /command is empty/);
    assert.match(byKey.fileUrl, /url must start with http:\/\/ or https:\/\//);
    assert.match(byKey.sse, /SSE transport is not supported/);
    assert.match(byKey.wrongType, /type "http" does not fit the entry/);
    assert.match(byKey.sandboxWord, /sandbox must be "on" or "off"/);
    assert.match(byKey.relativeRoot, /readableRoots must be absolute paths/);
    assert.match(byKey.typo, /disabledTool is not a field of an MCP server \(known: type, command, args,/);
    assert.match(byKey.cline, /disabled is not a field/);
    // A message never quotes a value that may be a secret.
    assert.ok(!byKey.fileUrl.includes('passwd'), byKey.fileUrl);
});

test('a disabled server is only type-checked, as the server reads it', () => {
    const { servers, problems } = mcpServers({
        off: { enabled: false },
        offBroken: { enabled: false, command: 'x', url: 'https://h' },
        offBadType: { enabled: false, args: 'x' },
    });
    assert.deepEqual(servers, { off: { enabled: false }, offBroken: { enabled: false, command: 'x', url: 'https://h' } });
    assert.deepEqual(
        problems.map((p) => p.key),
        ['rein.mcpServers.offBadType'],
    );
});

test('null fields are left out, and mcpServers that is not an object is reported', () => {
    assert.deepEqual(mcpServers({ s: { command: 'x', args: null, env: null } }).servers, { s: { command: 'x' } });
    const { settings, problems } = serverSettings(lookupOf({ mcpServers: ['npx'] }), undefined);
    assert.deepEqual(settings, {});
    assert.deepEqual(problems, [
        {
            key: 'rein.mcpServers',
            message: 'rein.mcpServers must be an object mapping server names to servers; it is ignored',
        },
    ]);
});

test('server names follow the server’s rule', () => {
    for (const ok of ['github', 'fs-2', 'a_b', 'A', 'x'.repeat(24)]) assert.equal(nameProblem(ok), undefined, ok);
    for (const bad of ['', 'a__b', 'x'.repeat(25), 'dots.no', 'é', 'a b']) assert.ok(nameProblem(bad), bad);
});

test('servers of every scope are sent, the more specific replacing a name whole', () => {
    const merged = userValue('mcpServers', {
        globalValue: { github: { command: 'gh-mcp' }, fs: { command: 'npx', network: true } },
        workspaceValue: { fs: { command: 'node', args: ['fs.js'] } },
        workspaceFolderValue: { local: { command: './server' } },
    });
    assert.deepEqual(merged, {
        github: { command: 'gh-mcp' },
        fs: { command: 'node', args: ['fs.js'] },
        local: { command: './server' },
    });
    // Other settings: the most specific scope alone, as before.
    assert.equal(userValue('maxTurns', { globalValue: 5, workspaceValue: 8 }), 8);
    assert.equal(userValue('maxTurns', { globalValue: 5, workspaceValue: null }), 5);
    assert.equal(userValue('maxTurns', undefined), undefined);
    assert.equal(userValue('maxTurns', {}), undefined);
    // A scope that holds no object is taken alone, for the mapping to report.
    assert.deepEqual(userValue('mcpServers', { globalValue: { a: {} }, workspaceValue: 'x' }), 'x');
});

test('${NAME} references are not secrets; anything else written in env or headers is', () => {
    for (const ref of ['${GITHUB_TOKEN}', 'Bearer ${TOKEN}', '${USER}:${PASSWORD}', 'token ${A_B}']) {
        assert.ok(isReferenceOnly(ref), ref);
    }
    for (const literal of [TOKEN, 'Bearer abcdefgh12345', 'sk-${SUFFIX}', 'plain', '${not a name}', '']) {
        assert.ok(!isReferenceOnly(literal), literal);
    }
});

test('what is logged hides env and headers values written inline, and keeps references', () => {
    const servers = {
        github: {
            command: 'gh-mcp',
            env: { GITHUB_TOKEN: TOKEN, OTHER: '${OTHER_TOKEN}' },
        },
        remote: {
            url: 'https://mcp.example.com/mcp',
            headers: { Authorization: `Bearer ${TOKEN}`, 'X-Ref': 'Bearer ${MCP_TOKEN}' },
        },
    };
    const logged = forLog(servers);
    assert.deepEqual(logged, {
        github: { command: 'gh-mcp', env: { GITHUB_TOKEN: REDACTED, OTHER: '${OTHER_TOKEN}' } },
        remote: {
            url: 'https://mcp.example.com/mcp',
            headers: { Authorization: REDACTED, 'X-Ref': 'Bearer ${MCP_TOKEN}' },
        },
    });
    // The settings themselves are not changed by logging them.
    assert.equal(servers.github.env.GITHUB_TOKEN, TOKEN);
    // Through the settings' own forLog, as the extension logs them.
    const { settings } = serverSettings(lookupOf({ mcpServers: servers }), 'sk-ant-api03-KEY-0123456789');
    const line = JSON.stringify(settingsForLog(settings));
    assert.ok(!line.includes(TOKEN), line);
    assert.ok(!line.includes('KEY-0123456789'), line);
    assert.ok(line.includes('${OTHER_TOKEN}'), line);
});

test('credentials in a URL or an argument are hidden too', () => {
    const logged = forLog({
        db: {
            command: 'npx',
            args: [
                '-y',
                '@modelcontextprotocol/server-postgres',
                'postgresql://admin:db-Passw0rd-123@localhost/app',
                '--api-key',
                'key-value-0123456789',
                '--token=tok-value-0123456789',
                'SLACK_BOT_TOKEN=xoxb-0123456789',
                '--verbose',
                '/home/me/notes',
            ],
        },
        remote: { url: 'https://mcp.example.com/mcp?apiKey=query-secret-0123' },
    });
    assert.deepEqual(logged.db.args, [
        '-y',
        '@modelcontextprotocol/server-postgres',
        `postgresql://${REDACTED}@localhost/app`,
        '--api-key',
        REDACTED,
        `--token=${REDACTED}`,
        `SLACK_BOT_TOKEN=${REDACTED}`,
        '--verbose',
        '/home/me/notes',
    ]);
    assert.equal(logged.remote.url, `https://mcp.example.com/mcp?${REDACTED}`);
});

test('the LSP trace of the settings as sent shows no inline secret once they are known', () => {
    const servers = {
        github: { command: 'gh-mcp', env: { GITHUB_TOKEN: TOKEN, REF: '${GITHUB_TOKEN}' } },
        remote: { url: 'https://u:url-pass-0123456@h.example/mcp', headers: { Authorization: 'Bearer hdr-secret-0123456' } },
        db: { command: 'x', args: ['--password', 'arg-secret-0123456'] },
    };
    const { settings } = serverSettings(lookupOf({ mcpServers: servers }), undefined);
    const secrets = new SecretSet();
    for (const secret of secretsOf(settings.mcpServers)) secrets.add(secret);
    // As vscode-languageclient traces `initialize`: the params as JSON.
    const trace = secrets.redact(
        `Sending request 'initialize - (0)'.\nParams: ${JSON.stringify({ initializationOptions: settings }, null, 4)}`,
    );
    for (const secret of [TOKEN, 'url-pass-0123456', 'hdr-secret-0123456', 'arg-secret-0123456']) {
        assert.ok(!trace.includes(secret), `${secret} in\n${trace}`);
    }
    // References stay readable.
    assert.ok(trace.includes('"REF": "${GITHUB_TOKEN}"'), trace);
    assert.deepEqual(secretsOf(undefined), []);
    assert.deepEqual(secretsOf({ fs: { command: 'npx', args: ['-y', 'pkg', '/home/me'], env: { A: '${A}' } } }), []);
});

test('package.json describes every field of a server, as the server spells it', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '../../package.json'), 'utf8'));
    const setting = manifest.contributes.configuration.properties['rein.mcpServers'];
    assert.equal(setting.type, 'object');
    assert.deepEqual(setting.default, {});
    const server = setting.additionalProperties;
    assert.equal(server.type, 'object');
    assert.equal(server.additionalProperties, false);
    assert.deepEqual(Object.keys(server.properties).sort(), [...MCP_FIELDS].sort());
    for (const [field, schema] of Object.entries<{ markdownDescription?: string }>(server.properties)) {
        assert.ok(schema.markdownDescription, `${field} has no description`);
    }
    assert.equal(server.properties.env.additionalProperties.type, 'string');
    assert.equal(server.properties.headers.additionalProperties.type, 'string');
    // The schema's name pattern is the server's rule.
    const pattern = new RegExp(setting.propertyNames.pattern);
    for (const name of ['github', 'fs-2', 'a_b', 'x'.repeat(24), 'a__b', 'x'.repeat(25), 'a.b', '']) {
        assert.equal(pattern.test(name), nameProblem(name) === undefined, name);
    }
});
