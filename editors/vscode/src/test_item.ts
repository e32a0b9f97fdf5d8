// Where a test of VS Code's Testing view is, for "Fix with Rein" on it.
// The argument comes from whichever extension owns the test (Python,
// Jest, rust-analyzer, …): nothing about its shape is trusted. Pure, so
// unit-tested without VS Code.

/** A place in a file: the URI as its owner wrote it, 0-based line and
 * character. */
export interface TestPlace {
    uri: unknown;
    line: number;
    character: number;
}

interface Position {
    line?: unknown;
    character?: unknown;
}

function count(value: unknown): number | undefined {
    return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/** The test item a menu of the Testing view hands its command: the item
 * itself (`testing/item/context`), or `{ test, message }` for a failure
 * message (`testing/message/context`). */
function testItem(arg: unknown): { uri?: unknown; range?: { start?: Position } } | undefined {
    if (typeof arg !== 'object' || arg === null) return undefined;
    const withTest = arg as { test?: unknown };
    if (typeof withTest.test === 'object' && withTest.test !== null) return withTest.test as never;
    return arg as never;
}

/** Where the test starts (its first line when its owner gave no range),
 * or why Rein cannot take it. */
export function testPlace(arg: unknown): TestPlace | string {
    const item = testItem(arg);
    if (!item) return 'This is not a test Rein can fix.';
    if (item.uri === undefined || item.uri === null) {
        return 'This test has no file: pick a test inside a file, or put the cursor in it and run "Rein: Fix Test at Cursor".';
    }
    const start = item.range?.start;
    return {
        uri: item.uri,
        line: count(start?.line) ?? 0,
        character: count(start?.character) ?? 0,
    };
}
