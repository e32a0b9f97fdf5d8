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
