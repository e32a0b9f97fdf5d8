// What a person does in each end-to-end scenario. Each records what it
// saw in `result` for tests/vscode.rs to check, and takes screenshots of
// the steps that matter (`shot(name)`: $REIN_E2E_OUT/<name>.png).

import { REIN_STATUS } from './workbench.mjs';

/** The demo project: cart.py's total() sums quantities instead of
 * price × quantity; tests/test_cart.py::TestCart::test_total fails. */
async function fixTest(bench, result, { secret, log, shot, newestTask }) {
    await bench.waitForStatus('Rein is ready', { timeoutMs: 90_000, failures: ['not running'] });

    if (secret) {
        // The provider is `scripted` (workspace setting): the key is for it,
        // and goes to the server, which must never print it (nor we).
        await bench.runCommand('Rein: Set API Key');
        await bench.answerInputBox('Rein: API key for', secret);
        await bench.waitForNotification('API key is stored');
        log('API key set');
    }

    await bench.openFile('tests/test_cart.py');
    await bench.gotoLine(8, 9);

    // The light bulb offers the server's action by itself, and it runs
    // from there ("Rein: Fix Test at Cursor" is the other scenario's way).
    result.codeActions = await bench.runCodeAction('Fix test test_total with Rein');
    log(`code actions: ${JSON.stringify(result.codeActions)}`);
    // The edit needs confirmation: the extension shows Rein's review (the
    // real diff and the model's reason); the person accepts it.
    result.review = await bench.waitForReview({ file: 'cart.py', timeoutMs: 120_000 });
    log(`review: ${JSON.stringify(result.review)}`);
    await shot('1-review');
    await bench.reviewAction('cart.py', 'Accept Proposed Edit');
    log('edit accepted');
    // Then the changed file is in front of the user.
    await bench.page.waitForSelector('.tab.active[aria-label^="cart.py"]', { timeout: 30_000 });
    result.activeAfterAccept = 'cart.py';
    result.statusBar = await bench.waitForStatus('Rein: succeeded', {
        timeoutMs: 180_000,
        failures: ['Rein: failed', 'Rein: cancelled', 'Rein: budget exhausted', 'not running'],
    });
    log(`status bar: ${result.statusBar}`);
    const taskId = newestTask();
    result.taskId = taskId;
    const toast = await bench.waitForNotification('Rein: fixed');
    result.successToast = (await toast.locator('.notification-list-item-message').textContent())?.trim();
    await shot('2-success');

    // The trace opens as a webview.
    await bench.runCommand('Rein: Show Trace');
    await bench.quickInputTitled('Show the trace of which task?');
    await bench.page
        .locator('.quick-input-list .monaco-list-row.focused', { hasText: taskId })
        .waitFor({ state: 'visible', timeout: 30_000 });
    await bench.page.keyboard.press('Enter');
    const tab = bench.page.locator('.tab', { hasText: `Rein trace ${taskId}` });
    await tab.waitFor({ state: 'visible', timeout: 60_000 });
    result.traceTab = (await tab.textContent())?.trim();
    log(`trace: ${result.traceTab}`);
    // The success needs nothing from the user: its notification closes
    // itself (the status bar keeps the outcome).
    await toast.waitFor({ state: 'hidden', timeout: 30_000 });
    result.successToastClosed = true;
    // No task id in what the user reads.
    result.tooltip = await bench.reinStatus();
}

/** tests/vscode/ask_approve.json: the model asks a question (answered from
 * the notification's "Answer…"), runs a command the user allows from the
 * approval notification, then fixes the test. A second task, from the
 * light bulb's "Ask Rein…", is cancelled from the status bar menu while it
 * waits for its answer. */
async function askApproveCancel(bench, result, { log, newestTask }) {
    await bench.waitForStatus('Rein is ready', { timeoutMs: 90_000, failures: ['not running'] });
    await bench.openFile('tests/test_cart.py');
    await bench.gotoLine(8);
    await bench.runCommand('Rein: Fix Test at Cursor');

    result.question = await bench.answerNotification('Rein asks:', 'Answer…', 120_000);
    await bench.answerInputBox('Answer Rein', 'yes');
    // The default language client shows `window/showMessageRequest` as a
    // notification with the server's actions as buttons.
    result.approval = await bench.answerNotification('Rein wants to run', 'Allow once', 120_000);
    await bench.waitForReview({ file: 'cart.py', timeoutMs: 120_000 });
    await bench.reviewAction('cart.py', 'Accept Proposed Edit');
    result.firstStatus = await bench.waitForStatus('Rein: succeeded', {
        timeoutMs: 180_000,
        failures: ['Rein: failed', 'Rein: cancelled', 'Rein: budget exhausted', 'not running', 'OFF SCRIPT'],
    });
    result.firstTask = newestTask();
    log(`first task: ${result.firstTask}`);

    // "Ask Rein…" by command (the light bulb offers it on a selection only).
    await bench.openFile('tests/test_cart.py');
    await bench.gotoLine(8, 9);
    await bench.runCommand('Rein: Ask Rein…');
    await bench.answerInputBox('Ask Rein', 'Explain what total() computes');
    const waiting = await bench.waitForStatus('Rein: waiting for you', {
        timeoutMs: 120_000,
        failures: ['Rein: failed', 'not running'],
    });
    result.secondTask = newestTask();
    if (!result.secondTask || result.secondTask === result.firstTask) {
        throw new Error(`the status bar does not show a second task: ${waiting}`);
    }
    await bench.statusMenu('Cancel the task');
    result.secondStatus = await bench.waitForStatus('Rein: cancelled', { timeoutMs: 60_000, failures: ['Rein: failed'] });
    log(`second task: ${result.secondTask} cancelled`);
}

/** The server dies (REIN_CRASH_AT=apply_edit, once) right after VS Code
 * applied the accepted edit. The language client restarts it by itself;
 * the task goes on in the new server and the status bar reports it. */
async function crashRecover(bench, result, { log, newestTask }) {
    await bench.waitForStatus('Rein is ready', { timeoutMs: 90_000, failures: ['not running'] });
    await bench.openFile('tests/test_cart.py');
    await bench.gotoLine(8);
    await bench.runCommand('Rein: Fix Test at Cursor');
    await bench.waitForReview({ file: 'cart.py', timeoutMs: 120_000 });
    await bench.reviewAction('cart.py', 'Accept Proposed Edit');
    log('edit accepted; the server dies now');
    // "not running" may flash by while the client restarts the server.
    result.statusBar = await bench.waitForStatus('Rein: succeeded', {
        timeoutMs: 180_000,
        failures: ['Rein: failed', 'Rein: cancelled', 'Rein: budget exhausted'],
    });
    result.taskId = newestTask();
    log(`status bar: ${result.statusBar}`);
}

/** tests/vscode/crash_resume.json: the server dies as the model's command
 * starts (REIN_CRASH_AT=op_started:run_command, once). The restarted server
 * cannot know what the command did, so the task waits for the user; it is
 * resumed from the status bar menu and finishes. */
async function crashResume(bench, result, { log, newestTask }) {
    await bench.waitForStatus('Rein is ready', { timeoutMs: 90_000, failures: ['not running'] });
    await bench.openFile('tests/test_cart.py');
    await bench.gotoLine(8);
    await bench.runCommand('Rein: Fix Test at Cursor');
    // "not running" may flash by while the client restarts the server.
    result.waiting = await bench.waitForStatus('Rein: waiting for you', {
        timeoutMs: 120_000,
        failures: ['Rein: failed', 'Rein: cancelled', 'Rein: succeeded'],
    });
    log(`after the crash: ${result.waiting}`);
    await bench.statusMenu('Resume the task');
    await bench.waitForReview({ file: 'cart.py', timeoutMs: 120_000 });
    await bench.reviewAction('cart.py', 'Accept Proposed Edit');
    result.statusBar = await bench.waitForStatus('Rein: succeeded', {
        timeoutMs: 180_000,
        failures: ['Rein: failed', 'Rein: cancelled', 'Rein: budget exhausted', 'not running'],
    });
    result.taskId = newestTask();
    log(`status bar: ${result.statusBar}`);
}

/** A review open, then the task cancelled from the status bar menu (which
 * offers the review too): the review closes itself, cart.py is untouched. */
async function cancelReview(bench, result, { log, shot }) {
    await bench.waitForStatus('Rein is ready', { timeoutMs: 90_000, failures: ['not running'] });
    await bench.openFile('tests/test_cart.py');
    await bench.gotoLine(8);
    await bench.runCommand('Rein: Fix Test at Cursor');
    result.review = await bench.waitForReview({ file: 'cart.py', timeoutMs: 120_000 });
    await shot('1-waiting-for-review');
    // The person closes the review by mistake: the status bar menu leads
    // back to it.
    await bench.reviewTab('cart.py').locator('.codicon-close').click();
    await bench.reviewTab('cart.py').waitFor({ state: 'detached', timeout: 30_000 });
    await bench.statusMenu('Review the proposed edit');
    await bench.reviewTab('cart.py').waitFor({ state: 'visible', timeout: 30_000 });
    result.reopened = true;
    // The status bar menu: the goal, where the task stands, what to do.
    await bench.page.locator(REIN_STATUS).click();
    await bench.quickInput();
    result.menu = (await bench.page.locator('.quick-input-widget .monaco-list-row').allTextContents()).map((t) => t.trim());
    result.menuTitle = (await bench.page.locator('.quick-input-widget .quick-input-title').textContent())?.trim();
    await shot('2-status-menu');
    await bench.page.locator('.quick-input-list .monaco-list-row', { hasText: 'Cancel the task' }).first().click();
    result.statusBar = await bench.waitForStatus('Rein: cancelled', { timeoutMs: 60_000, failures: ['Rein: failed'] });
    await bench.reviewTab('cart.py').waitFor({ state: 'detached', timeout: 30_000 });
    await bench.page
        .locator('.notification-toast', { hasText: 'Rein proposes a change to' })
        .waitFor({ state: 'detached', timeout: 30_000 });
    result.tabs = (await bench.page.locator('.tab').allTextContents()).map((t) => t.trim());
    log(`after the cancel: ${JSON.stringify(result.tabs)}`);
    await shot('3-cancelled');
}

/** "Fix Test at Cursor" on a test that already passes ends at once. */
async function alreadyPassing(bench, result, { log, shot }) {
    await bench.waitForStatus('Rein is ready', { timeoutMs: 90_000, failures: ['not running'] });
    await bench.openFile('tests/test_cart.py');
    await bench.gotoLine(15, 9);
    await bench.runCommand('Rein: Fix Test at Cursor');
    const toast = await bench.waitForNotification('already passing', 120_000);
    result.toast = (await toast.locator('.notification-list-item-message').textContent())?.trim();
    result.statusBar = await bench.reinStatus();
    log(`already passing: ${result.toast} / ${result.statusBar}`);
    await shot('1-already-passing');
}

/** The core's TypeScript fixture: src/app.ts line 5 assigns greet()'s
 * string to a number. VS Code's own TypeScript server reports the error
 * (source "ts", 2322); the light bulb offers Rein's fix, which Rein
 * checks with `tsc`; the person accepts the edit. */
async function fixError(bench, result, { log, shot }) {
    await bench.waitForStatus('Rein is ready', { timeoutMs: 90_000, failures: ['not running'] });
    await bench.openFile('src/app.ts');
    await bench.gotoLine(5, 14);
    // The TypeScript server takes a while to start and report the error:
    // until then the menu has no fix for it.
    const deadline = Date.now() + 120_000;
    for (;;) {
        try {
            result.codeActions = await bench.runCodeAction('Fix this error with Rein');
            break;
        } catch (error) {
            if (Date.now() > deadline) throw error;
            log(`no fix offered yet (${String(error.message ?? error).slice(0, 160)}); again`);
            await bench.page.keyboard.press('Escape');
            await bench.page.waitForTimeout(2_000);
        }
    }
    log(`code actions: ${JSON.stringify(result.codeActions)}`);
    result.review = await bench.waitForReview({ file: 'app.ts', timeoutMs: 120_000 });
    await shot('1-review');
    await bench.reviewAction('app.ts', 'Accept Proposed Edit');
    result.statusBar = await bench.waitForStatus('Rein: succeeded', {
        timeoutMs: 180_000,
        failures: ['Rein: failed', 'Rein: unverified', 'Rein: cancelled', 'Rein: budget exhausted', 'not running'],
    });
    log(`status bar: ${result.statusBar}`);
    await shot('2-fixed');
}

/** The extension with nothing configured and no `rein` on PATH: it starts
 * the server bundled in its package. */
async function startsBundled(bench, result, { log, shot }) {
    result.statusBar = await bench.waitForStatus('Rein is ready', { timeoutMs: 90_000, failures: ['not running'] });
    log(`status bar: ${result.statusBar}`);
    await shot('1-ready');
}

/** A first run with nothing configured: the status bar says "set up"; the
 * light bulb's fix leads to the set-up instead of failing; the person
 * picks the offline demo model; the same fix then runs and succeeds. */
async function firstRun(bench, result, { log, shot }) {
    result.statusSetUp = await bench.waitForStatus('Rein: set up', { timeoutMs: 90_000, failures: ['not running'] });
    log(`status bar: ${result.statusSetUp}`);
    await shot('1-set-up');
    await bench.openFile('tests/test_cart.py');
    await bench.gotoLine(8, 9);
    await bench.runCodeAction('Fix test test_total with Rein');
    result.leadsToSetUp = await bench.answerNotification('Rein needs a model', 'Set Up…', 60_000);
    await bench.quickInputTitled('Rein: Set Up');
    await shot('2-choices');
    result.choices = (await bench.page.locator('.quick-input-list .monaco-list-row').allTextContents()).map((t) => t.trim());
    await bench.pick('offline demo', 'The offline demo model');
    await bench.waitForNotification('Rein is set up with the offline demo model', 30_000);
    // The fix the person asked for goes on.
    await bench.waitForReview({ file: 'cart.py', timeoutMs: 120_000 });
    await bench.reviewAction('cart.py', 'Accept Proposed Edit');
    result.statusBar = await bench.waitForStatus('Rein: succeeded', {
        timeoutMs: 180_000,
        failures: ['Rein: failed', 'Rein: cancelled', 'not running'],
    });
    await shot('3-fixed');
}

/** "▶ Fix with Rein" above the failing test: the task's first run saw
 * test_total fail, so after the task is cancelled the lens stands above
 * it; clicking it starts the fix, and once the check passes it is gone. */
async function lens(bench, result, { log, shot }) {
    await bench.waitForStatus('Rein is ready', { timeoutMs: 90_000, failures: ['not running'] });
    await bench.openFile('tests/test_cart.py');
    await bench.gotoLine(8, 9);
    await bench.runCommand('Rein: Fix Test at Cursor');
    await bench.waitForReview({ file: 'cart.py', timeoutMs: 120_000 });
    await bench.statusMenu('Cancel the task');
    await bench.waitForStatus('Rein: cancelled', { timeoutMs: 60_000, failures: ['Rein: failed'] });
    await bench.reviewTab('cart.py').waitFor({ state: 'detached', timeout: 30_000 });

    await bench.openFile('tests/test_cart.py');
    const lensLink = bench.page.locator('.codelens-decoration a', { hasText: 'Fix with Rein' }).first();
    await lensLink.waitFor({ state: 'visible', timeout: 60_000 });
    result.lenses = (await bench.page.locator('.codelens-decoration').allTextContents()).map((t) => t.trim()).filter((t) => t);
    log(`lenses: ${JSON.stringify(result.lenses)}`);
    await shot('1-lens');

    await lensLink.click();
    await bench.waitForReview({ file: 'cart.py', timeoutMs: 120_000 });
    await bench.reviewAction('cart.py', 'Accept Proposed Edit');
    result.statusBar = await bench.waitForStatus('Rein: succeeded', {
        timeoutMs: 180_000,
        failures: ['Rein: failed', 'Rein: cancelled', 'not running'],
    });
    await bench.openFile('tests/test_cart.py');
    await bench.page
        .locator('.codelens-decoration a', { hasText: 'Fix with Rein' })
        .first()
        .waitFor({ state: 'detached', timeout: 60_000 });
    result.lensGone = true;
    await shot('2-lens-gone');
}

/** "Rein: Show Task" while the task waits for its review: the task's
 * report opens beside the editor and keeps up with it — after the accept
 * it shows the verification, with what the test printed. */
async function taskView(bench, result, { log, shot }) {
    await bench.waitForStatus('Rein is ready', { timeoutMs: 90_000, failures: ['not running'] });
    await bench.openFile('tests/test_cart.py');
    await bench.gotoLine(8, 9);
    await bench.runCommand('Rein: Fix Test at Cursor');
    await bench.waitForReview({ file: 'cart.py', timeoutMs: 120_000 });
    await bench.runCommand('Rein: Show Task');
    const tab = bench.page.locator('.tab', { hasText: 'Rein: Fix TestCart.test_total' }).first();
    await tab.waitFor({ state: 'visible', timeout: 60_000 });
    result.tab = (await tab.textContent())?.trim();
    const report = bench.page.frameLocator('iframe.webview.ready').last().frameLocator('#active-frame');
    await report.locator('#timeline').waitFor({ state: 'attached', timeout: 60_000 });
    result.before = (await report.locator('#verification').textContent())?.replace(/\s+/g, ' ').trim();
    log(`verification before the accept: ${result.before}`);
    await shot('1-task-view-waiting');

    await bench.statusMenu('Accept the proposed edit');
    result.statusBar = await bench.waitForStatus('Rein: succeeded', {
        timeoutMs: 180_000,
        failures: ['Rein: failed', 'Rein: cancelled', 'not running'],
    });
    // The view catches up by itself.
    await report.locator('#verification .c-ok', { hasText: 'verified' }).first().waitFor({ state: 'visible', timeout: 60_000 });
    result.after = (await report.locator('#verification').textContent())?.replace(/\s+/g, ' ').trim();
    log(`verification after: ${result.after}`);
    await shot('2-task-view-verified');
}

/** Another extension lists the demo project's tests in the Testing view
 * (test-controller/): right-click test_total, "Fix with Rein", and the
 * fix runs as from the editor. */
async function testingView(bench, result, { log, shot }) {
    await bench.waitForStatus('Rein is ready', { timeoutMs: 90_000, failures: ['not running'] });
    await bench.runCommand('Testing: Focus on Test Explorer View');
    const row = bench.page.locator('.test-explorer .monaco-list-row', { hasText: 'test_total' }).first();
    await row.waitFor({ state: 'visible', timeout: 60_000 });
    await row.click({ button: 'right' });
    const menu = bench.page.locator('.context-view .monaco-menu');
    await menu.waitFor({ state: 'visible', timeout: 20_000 });
    result.menu = (await menu.locator('.action-label').allTextContents()).map((t) => t.trim()).filter((t) => t);
    log(`context menu: ${JSON.stringify(result.menu)}`);
    await shot('1-testing-view-menu');
    await menu.locator('.action-label', { hasText: 'Fix with Rein' }).first().click();
    result.review = await bench.waitForReview({ file: 'cart.py', timeoutMs: 120_000 });
    await bench.statusMenu('Accept the proposed edit');
    result.statusBar = await bench.waitForStatus('Rein: succeeded', {
        timeoutMs: 180_000,
        failures: ['Rein: failed', 'Rein: cancelled', 'not running'],
    });
    await shot('2-fixed');
}

/** tests/vscode/review_flow.json: the review from the diff itself. The
 * first edit is rejected with a reason typed from the "✗ Reject…" above
 * the change (its own reason is hostile: shown inert and cut); the model
 * proposes again, "Edit 2 of this task", which the person accepts with
 * "Accept All Remaining Edits of This Task"; the third edit lands without
 * a review and the status bar says so. */
async function reviewFlow(bench, result, { log, shot, newestTask }) {
    await bench.waitForStatus('Rein is ready', { timeoutMs: 90_000, failures: ['not running'] });
    await bench.openFile('tests/test_cart.py');
    await bench.gotoLine(8);
    await bench.runCommand('Rein: Fix Test at Cursor');
    result.first = await bench.waitForReview({ file: 'cart.py', timeoutMs: 120_000 });
    log(`first review: ${JSON.stringify(result.first).slice(0, 600)}`);
    await shot('1-first-review');
    await bench.reviewLens('cart.py', 'Reject…');
    await bench.answerInputBox('Reject Rein’s edit to cart.py', 'use price times quantity, and say so in the docstring', () =>
        shot('1b-reject-with-reason'),
    );
    log('first edit rejected with a reason');
    // The model read the reason and proposes again: the second edit of the
    // task. (Its tab has the first one's title, so the first tab closing may
    // not be seen in between: the new review is waited for by its words.)
    await bench.page
        .locator('.monaco-diff-editor .editor.modified .codelens-decoration', { hasText: 'Edit 2 of this task' })
        .first()
        .waitFor({ state: 'visible', timeout: 120_000 });
    result.second = await bench.waitForReview({ file: 'cart.py', timeoutMs: 120_000 });
    log(`second review: ${JSON.stringify(result.second).slice(0, 600)}`);
    await shot('2-second-review');
    // The person edits the proposal before accepting it: a comment line of
    // their own under the fix. Rein applies the text as they left it.
    await bench.page
        .locator('.monaco-diff-editor .editor.modified .view-line', { hasText: 'return sum(item.price' })
        .first()
        .click();
    await bench.page.keyboard.press('End');
    await bench.page.keyboard.press('Enter');
    await bench.page.keyboard.type('# the person typed this');
    await bench.page.locator('.tab.dirty', { hasText: "Rein's proposed edit" }).waitFor({ state: 'visible', timeout: 20_000 });
    await shot('2b-edited-proposal');
    await bench.reviewLens('cart.py', 'Accept All Remaining Edits of This Task');
    await bench.reviewTab('cart.py').waitFor({ state: 'detached', timeout: 30_000 });
    // The third edit is applied without a review; the status bar says so.
    const applied = bench.page.locator('.statusbar-item', { hasText: 'Rein applied edit 3 of its task to cart.py' }).first();
    await applied.waitFor({ state: 'visible', timeout: 60_000 });
    result.appliedMessage = (await applied.textContent())?.trim();
    await shot('3-applied-without-review');
    result.statusBar = await bench.waitForStatus('Rein: succeeded', {
        timeoutMs: 180_000,
        failures: ['Rein: failed', 'Rein: cancelled', 'Rein: budget exhausted', 'not running'],
    });
    result.taskId = newestTask();
    result.reviewTabs = await bench.page.locator('.tab', { hasText: "Rein's proposed edit" }).count();
    result.toasts = await bench.notifications();
    log(`toasts at the end: ${JSON.stringify(result.toasts)}`);
    await shot('4-succeeded');
}

/** tests/vscode/ask_answer.json: "Ask Rein…" on total(); the answer opens
 * beside the editor as Markdown, whole, down to its last line, and the
 * notification that says it came closes itself. */
async function askAnswer(bench, result, { log, shot }) {
    await bench.waitForStatus('Rein is ready', { timeoutMs: 90_000, failures: ['not running'] });
    await bench.openFile('cart.py');
    await bench.gotoLine(4, 9);
    await bench.runCommand('Rein: Ask Rein…');
    await bench.answerInputBox('Ask Rein', 'Explain what total() computes');
    result.statusBar = await bench.waitForStatus('Rein: answered', {
        timeoutMs: 120_000,
        failures: ['Rein: failed', 'Rein: cancelled', 'Rein: waiting for you', 'not running'],
    });
    const tab = bench.page.locator('.tab', { hasText: 'answer.md' }).first();
    await tab.waitFor({ state: 'visible', timeout: 30_000 });
    result.answer = await bench.editorLines('[data-uri^="rein-answer:"]');
    log(`answer: ${result.answer}`);
    await shot('1-answer-beside-the-editor');
    const toast = await bench.waitForNotification('Rein answered', 30_000);
    await toast.waitFor({ state: 'hidden', timeout: 30_000 });
    result.toastClosed = true;
}

/** tests/vscode/live.json: while the model streams its first words and
 * then thinks for 20 s, the status bar says what Rein does now and the
 * model's latest line; the task view shows the words. Then the demo's fix. */
async function live(bench, result, { log, shot }) {
    await bench.waitForStatus('Rein is ready', { timeoutMs: 90_000, failures: ['not running'] });
    await bench.openFile('tests/test_cart.py');
    await bench.gotoLine(8, 9);
    await bench.runCommand('Rein: Fix Test at Cursor');
    // The second reply takes 20 s: the model's first words stay while it thinks.
    // (Its words come as they stream: first a part, then the whole line.)
    result.streaming = await bench.waitForStatus("The model: I'll run the failing test first", {
        timeoutMs: 60_000,
        failures: ['Rein: failed', 'Rein: cancelled', 'Rein: succeeded', 'not running'],
    });
    await bench.waitForStatus('to see how it fails.', {
        timeoutMs: 60_000,
        failures: ['Rein: failed', 'Rein: cancelled', 'Rein: succeeded', 'not running'],
    });
    result.thinking = await bench.waitForStatus('Rein: thinking · turn ', {
        timeoutMs: 30_000,
        failures: ['Rein: failed', 'Rein: cancelled', 'Rein: succeeded', 'waiting for you', 'not running'],
    });
    log(`while the model thinks: ${result.thinking}`);
    await bench.runCommand('Rein: Show Task');
    const report = bench.page.frameLocator('iframe.webview.ready').last().frameLocator('#active-frame');
    await report.locator('#timeline', { hasText: 'run the failing test first' }).waitFor({ state: 'visible', timeout: 30_000 });
    result.timeline = (await report.locator('#timeline').textContent())?.replace(/\s+/g, ' ').trim();
    // The tooltip, as a person hovering the item sees it.
    await bench.page.locator(REIN_STATUS).hover();
    await bench.page.waitForTimeout(1_500);
    await shot('1-running-live-step-and-words');
    await bench.waitForReview({ file: 'cart.py', timeoutMs: 120_000 });
    await bench.reviewAction('cart.py', 'Accept Proposed Edit');
    result.statusBar = await bench.waitForStatus('Rein: succeeded', {
        timeoutMs: 180_000,
        failures: ['Rein: failed', 'Rein: cancelled', 'Rein: budget exhausted', 'not running'],
    });
    await shot('2-succeeded');
}

/** tests/vscode/review_timeout.json with rein.approvalTimeoutSecs = 8:
 * nobody answers the review; the task waits ("no answer", no failure),
 * "Resume Task" shows the review again, and accepting it fixes the test. */
async function reviewTimeout(bench, result, { log, shot }) {
    await bench.waitForStatus('Rein is ready', { timeoutMs: 90_000, failures: ['not running'] });
    await bench.openFile('tests/test_cart.py');
    await bench.gotoLine(8, 9);
    await bench.runCommand('Rein: Fix Test at Cursor');
    await bench.waitForReview({ file: 'cart.py', timeoutMs: 120_000 });
    log('review open; nobody answers it');
    const toast = await bench.waitForNotification('No answer from you in 8 seconds', 60_000);
    result.noAnswer = (await toast.locator('.notification-list-item-message').textContent())?.trim();
    result.buttons = (await toast.locator('.monaco-button').allTextContents()).map((b) => b.trim());
    result.waiting = await bench.reinStatus();
    await bench.reviewTab('cart.py').waitFor({ state: 'detached', timeout: 30_000 });
    await shot('1-no-answer');
    await toast.locator('.monaco-button', { hasText: 'Resume Task' }).first().click();
    result.reopened = await bench.waitForReview({ file: 'cart.py', timeoutMs: 120_000 });
    await shot('2-review-reopened');
    await bench.reviewAction('cart.py', 'Accept Proposed Edit');
    result.statusBar = await bench.waitForStatus('Rein: succeeded', {
        timeoutMs: 180_000,
        failures: ['Rein: failed', 'Rein: cancelled', 'Rein: budget exhausted', 'not running'],
    });
    await shot('3-fixed');
}

/** The demo's fix accepted, then a line typed at the top of cart.py, then
 * "Undo Rein’s changes" from the status bar: the fix is gone, the typed
 * line stays, and the server says what it undid. */
async function undo(bench, result, { log, shot }) {
    await bench.waitForStatus('Rein is ready', { timeoutMs: 90_000, failures: ['not running'] });
    await bench.openFile('tests/test_cart.py');
    await bench.gotoLine(8, 9);
    await bench.runCommand('Rein: Fix Test at Cursor');
    await bench.waitForReview({ file: 'cart.py', timeoutMs: 120_000 });
    await bench.reviewAction('cart.py', 'Accept Proposed Edit');
    result.statusBar = await bench.waitForStatus('Rein: succeeded', {
        timeoutMs: 180_000,
        failures: ['Rein: failed', 'Rein: cancelled', 'Rein: budget exhausted', 'not running'],
    });
    await bench.openFile('cart.py');
    await bench.gotoLine(1);
    await bench.page.keyboard.type('# typed by the user after the task');
    await bench.page.keyboard.press('Enter');
    result.typed = await bench.editorLines('[data-uri$="/cart.py"]');
    log(`typed: ${result.typed}`);
    await bench.statusMenu('Undo Rein’s changes');
    const toast = await bench.waitForNotification('Undid Rein', 60_000);
    result.undone = (await toast.locator('.notification-list-item-message').textContent())?.trim();
    for (const deadline = Date.now() + 60_000; ; ) {
        result.after = await bench.editorLines('[data-uri$="/cart.py"]');
        if (!result.after.includes('item.price * item.qty') || Date.now() > deadline) break;
        await bench.page.waitForTimeout(250);
    }
    log(`after the undo: ${result.after}`);
    await shot('1-undone-keeping-the-typed-line');
}

export const scenarios = {
    'ask-answer': askAnswer,
    live,
    'review-timeout': reviewTimeout,
    undo,
    lens,
    'testing-view': testingView,
    'task-view': taskView,
    'review-flow': reviewFlow,
    'fix-test': fixTest,
    'first-run': firstRun,
    'starts-bundled': startsBundled,
    'fix-error': fixError,
    'ask-approve-cancel': askApproveCancel,
    'crash-recover': crashRecover,
    'crash-resume': crashResume,
    'cancel-review': cancelReview,
    'already-passing': alreadyPassing,
};
