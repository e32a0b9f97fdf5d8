// Finding the `rein` binary: the `rein.server.path` setting, else `rein` on
// PATH, else the copy bundled in the extension (`server/rein`). Pure apart
// from the file checks it is handed, so the order and the messages are
// unit-tested.

import * as path from 'node:path';

export interface DiscoveryInput {
    /** `rein.server.path` as the user set it (may be empty). */
    configured: string | undefined;
    /** The PATH environment variable. */
    pathEnv: string | undefined;
    home: string | undefined;
    workspaceFolder: string | undefined;
    /** The extension's own folder. */
    extensionPath: string;
    platform: NodeJS.Platform;
    /** Whether an executable file is at this absolute path. */
    isExecutable: (file: string) => Promise<boolean>;
}

export type Discovery =
    | { found: true; path: string; source: 'setting' | 'PATH' | 'bundled' }
    | { found: false; message: string };

/** The setting users set to point at the binary. */
export const SERVER_PATH_SETTING = 'rein.server.path';

export async function findServer(input: DiscoveryInput): Promise<Discovery> {
    const exe = input.platform === 'win32' ? 'rein.exe' : 'rein';
    const configured = input.configured?.trim();
    if (configured) {
        const file = resolveConfigured(configured, input);
        // A wrong explicit setting is an error, not a reason to quietly run
        // some other `rein` the user did not choose.
        if (await input.isExecutable(file)) return { found: true, path: file, source: 'setting' };
        return {
            found: false,
            message:
                `${SERVER_PATH_SETTING} is set to "${configured}", but there is no executable file at ${file}. ` +
                `Choose Locate Binary… to point it at the rein program, or clear the setting to use rein from PATH.`,
        };
    }
    const delimiter = input.platform === 'win32' ? ';' : ':';
    const dirs = (input.pathEnv ?? '').split(delimiter).filter((d) => d !== '');
    for (const dir of dirs) {
        const file = join(input.platform, dir, exe);
        if (await input.isExecutable(file)) return { found: true, path: file, source: 'PATH' };
    }
    const bundled = join(input.platform, input.extensionPath, 'server', exe);
    if (await input.isExecutable(bundled)) return { found: true, path: bundled, source: 'bundled' };
    return {
        found: false,
        message:
            `Rein cannot find its server, the ${exe} program: it is not bundled with this extension (install the ` +
            `package built for your platform) and not on PATH. Choose Locate Binary… to point ${SERVER_PATH_SETTING} ` +
            `at it (to build it: cargo build --release -p rein, then target/release/${exe}).`,
    };
}

/** `~` is the home folder; a relative path is relative to the workspace folder. */
function resolveConfigured(configured: string, input: DiscoveryInput): string {
    const p = input.platform === 'win32' ? path.win32 : path.posix;
    let file = configured;
    if (input.home && (file === '~' || file.startsWith('~/') || file.startsWith('~\\'))) {
        file = p.join(input.home, file.slice(1));
    }
    if (!p.isAbsolute(file) && input.workspaceFolder) file = p.join(input.workspaceFolder, file);
    return p.normalize(file);
}

function join(platform: NodeJS.Platform, ...parts: string[]): string {
    return (platform === 'win32' ? path.win32 : path.posix).join(...parts);
}
