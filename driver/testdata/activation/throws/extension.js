// The module's name is computed, as a bundle's loader for native addons
// does: only activation shows that it is missing.
const vscode = require("vscode");

function activate(context) {
  const native = require(["udx", "native"].join("-"));
  const item = vscode.window.createStatusBarItem("throws.status", vscode.StatusBarAlignment.Right);
  item.text = "Throws " + native;
  item.show();
  context.subscriptions.push(item);
}

module.exports = { activate, deactivate() {} };
