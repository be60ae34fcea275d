// orphan-exit.cjs: loaded with `node --require` by tools/code-server.sh,
// and so in every node process code-server forks (they inherit its
// execArgv): the server, each window's extension host, the language
// servers an extension forks. A process whose parent has died (its parent
// process id changed: it was handed to init or a subreaper) exits within
// 2 s. The driver starts code-server with a death signal
// (driver/internal/tether), which ends code-server's first process with
// the run; this ends the rest of its tree. An extension host forked just
// as code-server was killed was seen to outlive it for half an hour: it
// waits for a window to connect, and a window that had connected waits
// up to --reconnection-grace-time (3 hours) for it to come back.
'use strict';
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(1);
}, 2000).unref();
