// A test controller with the demo project's three tests, as any testing
// extension would list them: an item per test with its file and range.
// Rein's "Fix with Rein" on such an item is what the e2e scenario uses.
const vscode = require('vscode');

exports.activate = function (context) {
    const controller = vscode.tests.createTestController('rein-e2e-demo', 'Demo tests');
    context.subscriptions.push(controller);
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) return;
    const file = vscode.Uri.joinPath(folder.uri, 'tests', 'test_cart.py');
    for (const [name, line] of [
        ['test_total', 6],
        ['test_empty_cart_costs_nothing', 10],
        ['test_count', 13],
    ]) {
        const item = controller.createTestItem(`TestCart.${name}`, name, file);
        item.range = new vscode.Range(line, 4, line, 4 + `def ${name}`.length);
        controller.items.add(item);
    }
};

exports.deactivate = function () {};
