// Bundled the way esbuild leaves an external native module: a top-level
// require of a package the extension does not ship.
const vscode = require("vscode");
const path = require("node:path");
const udx = require("udx-native");
const shipped = require("shipped-dep");
const helper = require("./lib/helper");
let optional = null;
try {
  optional = require("optional-dep");
} catch (e) {
  optional = null;
}

function activate(context) {
  const item = vscode.window.createStatusBarItem("missingmodule.status", vscode.StatusBarAlignment.Right);
  item.text = "Missing " + path.basename(__filename) + udx + shipped + helper + optional;
  item.show();
  context.subscriptions.push(item);
}

module.exports = { activate, deactivate() {} };
