// The page of "Rein: Show Task": the trace report with a few lines that
// keep the reader's place across the re-renders of a running task. Pure
// (no `vscode`), unit-tested.

/** `html` (a report of `rein trace --html`) with a script that, after each
 * render, scrolls to `anchor` (once: a section such as `verification`),
 * else back where the reader was, or to the end while they were at the
 * end (following the task). The anchor is one of the report's own ids. */
export function keepScroll(html: string, anchor?: string): string {
    const id = anchor && /^[a-z][a-z0-9-]*$/.test(anchor) ? anchor : '';
    const script = `<script>(function () {
  const vscode = acquireVsCodeApi();
  const state = vscode.getState() || { follow: true, y: 0 };
  const anchor = ${JSON.stringify(id)};
  function place() {
    const target = anchor && document.getElementById(anchor);
    if (target) { target.scrollIntoView(); return; }
    if (state.follow) window.scrollTo(0, document.body.scrollHeight);
    else window.scrollTo(0, state.y || 0);
  }
  window.addEventListener('load', place);
  window.addEventListener('scroll', function () {
    const atEnd = window.innerHeight + window.scrollY >= document.body.scrollHeight - 48;
    vscode.setState({ follow: atEnd, y: window.scrollY });
  });
})();</script>`;
    const end = html.lastIndexOf('</body>');
    return end < 0 ? html + script : html.slice(0, end) + script + html.slice(end);
}
