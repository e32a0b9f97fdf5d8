// Text from the server (reasons, the model's words) as plain text for
// places that show no Markdown: toasts, tooltips, quick picks. Code spans
// lose their backticks (`x` → x); a lone backtick stays, as it may be the
// text itself. Pure, unit-tested.

/** `fixed: \`TestCart.test_total\` passes` → `fixed: TestCart.test_total passes`. */
export function plain(text: string): string {
    // A run of backticks opens a span closed by a run of the same length
    // (CommonMark); the content is kept, trimmed of the one padding space
    // each side that lets a span start or end with a backtick.
    return text.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_match, _ticks: string, inner: string) =>
        inner.length > 2 && inner.startsWith(' ') && inner.endsWith(' ') ? inner.slice(1, -1) : inner,
    );
}

/** One line, at most `max` characters (cut with "…"). */
export function oneLine(text: string, max: number): string {
    const flat = text.replace(/\s+/g, ' ').trim();
    return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1)).trimEnd()}…`;
}

/** Characters that could disguise a line: controls (C0, DEL, C1), bidi
 * embeddings, overrides, isolates and marks, zero-width characters, line
 * separators, the BOM, tags. The server escapes them already; a client
 * drops any that come anyway. */
const DISGUISING =
    /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]|\udb40[\udc00-\udc7f]/g;

/** Untrusted text (the model's words) as one clean line of at most `max`
 * characters: nothing that could disguise it, shown as it is otherwise. */
export function cleanLine(text: string, max: number): string {
    return oneLine(text.replace(/[\t\n\r\u2028\u2029]/g, ' ').replace(DISGUISING, ''), max);
}

/** Text for a `StatusBarItem.text`, where `$(name)` draws an icon: any
 * such sequence in server text is shown as written. */
export function noIcons(text: string): string {
    return text.replace(/\$\(/g, '\\$(');
}
