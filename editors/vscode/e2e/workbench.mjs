// Driving the VS Code workbench in the browser as a person would: the
// command palette, Quick Open, Go to Line, the light bulb, the Refactor
// Preview, the status bar. Every wait is for a condition, with a generous
// limit, never a fixed sleep.

export const REIN_STATUS = '[id="rein-dev.rein.rein.status"]';

export class Workbench {
    constructor(page, log) {
        this.page = page;
        this.log = log;
    }

    async open(url, folder) {
        await this.page.goto(`${url}/?folder=${encodeURIComponent(folder)}`);
        await this.page.waitForSelector('.monaco-workbench', { timeout: 90_000 });
    }

    /** The accessible label of Rein's status bar item (text and tooltip). */
    async reinStatus() {
        return (await this.page.getAttribute(REIN_STATUS, 'aria-label', { timeout: 5_000 }).catch(() => null)) ?? '';
    }

    /** Waits until Rein's status bar item says `what`; fails early if it
     * says one of `failures` (with what it said). */
    async waitForStatus(what, { timeoutMs, failures = [] }) {
        const deadline = Date.now() + timeoutMs;
        let last = '';
        while (Date.now() < deadline) {
            last = await this.reinStatus();
            if (last.includes(what)) return last;
            const failed = failures.find((f) => last.includes(f));
            if (failed) throw new Error(`Rein's status bar item says "${last}" while waiting for "${what}"`);
            await this.page.waitForTimeout(250);
        }
        throw new Error(`Rein's status bar item did not say "${what}" within ${timeoutMs / 1000} s; it says "${last}"`);
    }

    async quickInput() {
        return this.page.waitForSelector('.quick-input-widget', { state: 'visible', timeout: 20_000 });
    }

    /** Types into the open quick input, then picks the row whose label has `label`. */
    async pick(text, label = text) {
        await this.page.keyboard.type(text);
        const row = this.page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
        await row.waitFor({ state: 'visible', timeout: 20_000 });
        await row.click();
    }

    async runCommand(title) {
        this.log(`command: ${title}`);
        await this.page.keyboard.press('F1');
        await this.quickInput();
        await this.pick(title);
    }

    async openFile(relative) {
        this.log(`open: ${relative}`);
        await this.page.keyboard.press('Control+P');
        await this.quickInput();
        const name = relative.split('/').pop();
        await this.pick(relative, name);
        await this.page.waitForSelector(`.tab.active[aria-label^="${name}"]`, { timeout: 20_000 });
    }

    /** Moves the cursor to `line`:`column` with Go to Line. */
    async gotoLine(line, column = 1) {
        await this.page.keyboard.press('Control+G');
        await this.quickInput();
        await this.page.keyboard.type(column > 1 ? `${line}:${column}` : String(line));
        // Enter only once the widget has read all that was typed (its only
        // row names the place; "8" is on the way to "8:9") and made that row
        // the active one: Enter accepts the active row, and none is nothing.
        const label = column > 1 ? `line ${line} and character ${column}.` : `line ${line}.`;
        await this.page
            .locator('.quick-input-list .monaco-list-row.focused', { hasText: label })
            .first()
            .waitFor({ state: 'visible', timeout: 20_000 });
        await this.page.keyboard.press('Enter');
        await this.page.waitForFunction(
            ([l, c]) => [...document.querySelectorAll('.statusbar-item')].some((e) => (e.textContent ?? '').includes(`Ln ${l}, Col ${c}`)),
            [line, column],
            { timeout: 20_000 },
        );
    }

    /** Opens the light bulb menu (Ctrl+.) and returns its action rows.
     *
     * VS Code has a race here: 250 ms after the cursor moves it asks for
     * code actions by itself, and that automatic request cancels a pending
     * Ctrl+. one, which then reports "No code actions available" (at once
     * when the cursor is in the indentation, else if the Ctrl+. request is
     * still unanswered 500 ms later, as on a loaded machine). So callers
     * put the cursor on code, and when VS Code still says there is nothing
     * we press Ctrl+. again, as a person would: the cursor has not moved,
     * so no automatic request comes this time. */
    async openCodeActionMenu() {
        const menu = this.page.locator('.action-widget .monaco-list-row.action');
        for (let attempt = 1; ; attempt++) {
            await this.page.keyboard.press('Control+.');
            // Whichever comes first; the other wait ends by its own limit
            // (each settles to a value: a rejection would go unhandled).
            const shown = await Promise.race([
                menu
                    .first()
                    .waitFor({ state: 'visible', timeout: 30_000 })
                    .then(() => 'menu', () => 'timeout'),
                this.page
                    .locator('.monaco-editor-overlaymessage', { hasText: 'No code actions available' })
                    .waitFor({ state: 'visible', timeout: 30_000 })
                    .then(() => 'none', () => 'timeout'),
            ]);
            if (shown === 'menu') return menu;
            if (shown === 'timeout' || attempt === 5) {
                throw new Error(`the light bulb menu did not open (attempt ${attempt}: ${shown})`);
            }
            this.log(`Ctrl+. found no code actions (attempt ${attempt}); again`);
            await this.page.keyboard.press('Escape');
            await this.page.locator('.monaco-editor-overlaymessage').waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => undefined);
        }
    }

    /** Runs the code action titled `title` from the light bulb menu;
     * returns the titles the menu offered. */
    async runCodeAction(title) {
        this.log(`code action: ${title}`);
        const rows = await this.openCodeActionMenu();
        const titles = (await rows.allTextContents()).map((t) => t.trim());
        if (!titles.some((t) => t.includes(title))) {
            throw new Error(`the code action menu has no "${title}": ${JSON.stringify(titles)}`);
        }
        // By keyboard, as the menu is meant to be used (an overlay takes
        // the mouse's first clicks): down until the row has the focus,
        // each step once the menu has moved its focus.
        const focusedText = () =>
            this.page.evaluate(() => document.querySelector('.action-widget .monaco-list-row.focused')?.textContent ?? '');
        for (let step = 0; step <= titles.length; step++) {
            const focused = await focusedText();
            if (focused.includes(title)) {
                await this.page.keyboard.press('Enter');
                return titles;
            }
            await this.page.keyboard.press('ArrowDown');
            await this.page.waitForFunction(
                (before) => (document.querySelector('.action-widget .monaco-list-row.focused')?.textContent ?? '') !== before,
                focused,
                { timeout: 20_000 },
            );
        }
        throw new Error(`could not move the focus to "${title}" in the code action menu: ${JSON.stringify(titles)}`);
    }

    /** Clicks Rein's status bar item and picks `label` in its menu. */
    async statusMenu(label) {
        this.log(`status bar menu: ${label}`);
        await this.page.locator(REIN_STATUS).click();
        await this.quickInput();
        const row = this.page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
        await row.waitFor({ state: 'visible', timeout: 20_000 });
        await row.click();
    }

    /** Clicks the button `label` of the notification that says `text`;
     * returns the notification's message and buttons. */
    async answerNotification(text, label, timeoutMs) {
        const toast = await this.waitForNotification(text, timeoutMs);
        const message = (await toast.locator('.notification-list-item-message').textContent())?.trim();
        const buttons = (await toast.locator('.monaco-button').allTextContents()).map((b) => b.trim());
        this.log(`notification: ${message} ${JSON.stringify(buttons)} → ${label}`);
        await toast.locator('.monaco-button', { hasText: label }).first().click();
        return { message, buttons };
    }

    /** The tab of Rein's review of `file` (a diff editor). */
    reviewTab(file) {
        return this.page.locator('.tab', { hasText: `${file}: Rein's proposed edit` }).first();
    }

    /** Waits for Rein's review of `file`; returns what the user sees: the
     * tab's title, the notification with the model's reason, the status
     * bar, and the diff's two sides (the lines that differ). */
    async waitForReview({ file, timeoutMs }) {
        const tab = this.reviewTab(file);
        await tab.waitFor({ state: 'visible', timeout: timeoutMs });
        this.log(`review of ${file} is open`);
        const toast = await this.waitForNotification('Rein proposes a change to', 30_000);
        const notice = (await toast.locator('.notification-list-item-message').textContent())?.replace(/\s+/g, ' ').trim();
        const status = await this.waitForStatus('waiting for you', { timeoutMs: 30_000 });
        // The diff editor marks what was removed and what was added.
        const diff = this.page.locator('.monaco-diff-editor').first();
        await diff.locator('.line-insert, .char-insert').first().waitFor({ state: 'visible', timeout: 30_000 });
        // Above the change: the actions in words, where the edit stands and
        // the model's reason (CodeLens on the proposed side).
        const rows = diff.locator('.editor.modified .codelens-decoration');
        await rows.locator('a', { hasText: 'Accept' }).first().waitFor({ state: 'visible', timeout: 30_000 });
        // Each row's text, rows joined with " || ".
        const lenses = (await rows.allTextContents()).map((t) => t.replace(/\u00a0/g, ' ').replace(/\s+/g, ' ').trim()).join(' || ');
        // Nothing in the Comments panel (it used to open with the reason).
        const commentsPanel = await this.page.locator('.pane-header', { hasText: 'Comments' }).count();
        // The editor draws spaces as non-breaking ones.
        const lines = async (side) =>
            (await diff.locator(`.editor.${side} .view-line`).allTextContents()).map((l) => l.replace(/\u00a0/g, ' ')).join('\n');
        const removed = await lines('original');
        const added = await lines('modified');
        return { tab: (await tab.textContent())?.trim(), notice, status, lenses, commentsPanel, removed, added };
    }

    /** Clicks one of the review's title bar actions ("Accept Proposed
     * Edit", "Reject Proposed Edit") and waits for the review to close. */
    async reviewAction(file, title) {
        this.log(`review of ${file}: ${title}`);
        await this.page.locator(`.editor-actions .action-label[aria-label^="${title}"]`).first().click();
        await this.reviewTab(file).waitFor({ state: 'detached', timeout: 30_000 });
    }

    /** Clicks one of the actions written above the change in the review
     * of `file` ("✓ Accept", "✗ Reject…", "Accept All Remaining Edits of
     * This Task"). */
    async reviewLens(file, title) {
        this.log(`review of ${file}: lens ${title}`);
        const diff = this.page.locator('.monaco-diff-editor').first();
        await diff.locator('.editor.modified .codelens-decoration a', { hasText: title }).first().click();
    }

    /** The visible lines of the editor whose document `which` picks (an
     * attribute selector on its `data-uri`: `[data-uri$="/cart.py"]`), as
     * the user reads them. */
    async editorLines(which, timeoutMs = 30_000) {
        const editor = this.page.locator(`.monaco-editor${which}`).first();
        await editor.locator('.view-line').first().waitFor({ state: 'visible', timeout: timeoutMs });
        // The editor reuses line elements: their order on screen is their `top`.
        const lines = await editor
            .locator('.view-line')
            .evaluateAll((els) => els.map((e) => [parseFloat(e.style.top) || 0, e.textContent ?? '']));
        return lines
            .sort((a, b) => a[0] - b[0])
            .map(([, text]) => text.replace(/\u00a0/g, ' '))
            .join('\n');
    }

    /** Texts of the notifications on screen. */
    async notifications() {
        return this.page.locator('.notification-toast .notification-list-item-message').allTextContents();
    }

    /** Waits for a notification containing `text`; returns its locator. */
    async waitForNotification(text, timeoutMs = 30_000) {
        const toast = this.page.locator('.notification-toast', { hasText: text }).first();
        await toast.waitFor({ state: 'visible', timeout: timeoutMs });
        return toast;
    }

    /** Waits for the quick input titled `title` (the extension's own
     * input box or quick pick, not the command palette that opened it,
     * which may still be on screen for a moment). */
    async quickInputTitled(title) {
        await this.page
            .locator('.quick-input-widget .quick-input-title', { hasText: title })
            .waitFor({ state: 'visible', timeout: 30_000 });
    }

    /** Types into the input box titled `title` (password boxes too) and
     * confirms. Typing before it is open would send the keys elsewhere
     * (into the editor, say), so it waits for that box first. */
    /** Types `text` into the input box titled `title` and submits it;
     * `beforeSubmit` (say, a screenshot) runs with the text typed. */
    async answerInputBox(title, text, beforeSubmit) {
        await this.quickInputTitled(title);
        await this.page.keyboard.type(text);
        await this.page.waitForFunction(
            (t) => document.querySelector('.quick-input-widget .quick-input-box input')?.value === t,
            text,
            { timeout: 20_000 },
        );
        if (beforeSubmit) await beforeSubmit();
        await this.page.keyboard.press('Enter');
        await this.page.waitForSelector('.quick-input-widget', { state: 'hidden', timeout: 20_000 });
    }
}
