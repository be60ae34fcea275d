'use strict';
// Node >= 21 treats `node --test plugin/test/` as a glob that matches the
// directory itself and loads it as a module, i.e. this file. Then (and only
// then: argv[1] is the directory) load every *.test.js here, so that command
// runs the whole suite; when the runner found the test files itself (Node 20's
// directory search, `node --test`, `node --test 'test/*.test.js'`) do nothing.
const fs = require('node:fs');
const path = require('node:path');

if (process.argv[1] && path.resolve(process.argv[1]) === __dirname) {
  for (const f of fs.readdirSync(__dirname).sort()) {
    if (f.endsWith('.test.js')) require(path.join(__dirname, f));
  }
}
