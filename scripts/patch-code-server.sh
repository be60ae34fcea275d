#!/usr/bin/env bash
# patch-code-server.sh CS_DIR NODE: the changes make setup makes to the
# VS Code that code-server bundles (files of the pinned version, under
# lib/vscode/out), after each install and checked on every run. Each file
# is patched only when it is, byte for byte, the one the pinned version
# ships, and the result is checked against the file expected; a file that
# is neither (another version) stops setup with what to update, rather
# than be patched blindly. Measured: docs/farm.md, "No file watcher
# process per window".
set -euo pipefail

CS_DIR=$1
NODE=$2
OUT=$CS_DIR/node_modules/code-server/lib/vscode/out

sum() { sha256sum "$1" | cut -d' ' -f1; }

# patch_file FILE SHIPPED PATCHED WHAT FROM TO [FROM TO ...]: replace each FROM
# (found exactly once) with its TO in FILE.
patch_file() {
  local file=$1 shipped=$2 patched=$3 what=$4
  shift 4
  case "$(sum "$file")" in
  "$patched") return 0 ;;
  "$shipped") ;;
  *)
    echo "setup: $file is not the file code-server's pinned version ships (sha256 $shipped)," >&2
    echo "setup: so it cannot be patched ($what): update scripts/patch-code-server.sh for this version" >&2
    exit 1
    ;;
  esac
  local tmp=$file.patch.$$
  "$NODE" - "$file" "$tmp" "$@" <<'JS' || { rm -f "$tmp"; exit 1; }
const fs = require('fs');
const [src, dst, ...edits] = process.argv.slice(2);
let s = fs.readFileSync(src, 'utf8');
for (let i = 0; i < edits.length; i += 2) {
  const n = s.split(edits[i]).length - 1;
  if (n !== 1) throw new Error(`${src}: ${JSON.stringify(edits[i])} found ${n} times, want once`);
  s = s.replace(edits[i], () => edits[i + 1]);
}
fs.writeFileSync(dst, s);
JS
  if [ "$(sum "$tmp")" != "$patched" ]; then
    rm -f "$tmp"
    echo "setup: patching $file ($what) gave a file other than the one expected (sha256 $patched)" >&2
    exit 1
  fi
  chmod --reference="$file" "$tmp"
  mv "$tmp" "$file"
  printf 'setup: patched code-server: %s\n' "$what"
}

# VS Code's server starts a file watcher process (node --type=fileWatcher,
# @parcel/watcher) for each window at its first recursive watch, which
# every window makes of its workspace folders: ~61 MiB RSS (~21 PSS) and
# ~0.25 CPU-s of each window's start. The recursive requests go instead
# to the watcher VS Code runs in the server's process for non-recursive
# ones (DiskFileSystemProvider.createUniversalWatcher), and that one
# watches a folder with Node's recursive fs.watch (NodeJSFileWatcherLibrary;
# e is "the path is a folder"): on Linux, an inotify watch per folder, in
# the process's one inotify instance. files.watcherExclude still filters
# the events; excluded folders are watched all the same.
patch_file "$OUT/server-main.js" \
  a482bf6e283a57447d7149faaaf4d2eae869f646c5b018a286dd708d63455579 \
  75fabff03d424aecb5aa5283cafecc33969983a3e15128d9994456270067d450 \
  "each window's file watcher in code-server's own process" \
  'createUniversalWatcher(e,n,o){return new kI(i=>e(i),i=>n(i),o)}' \
  'createUniversalWatcher(e,n,o){return new AI(i=>e(i),i=>n(i),o)}' \
  'c=ht(i),u=p3(i);' \
  'c=ht(i),u=p3(i,{recursive:!!(e&&this.request.recursive)});'
