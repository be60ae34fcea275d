package workbench

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"dialogfarm/driver/browser"
)

// jsWindowLog reads the lines of the web workbench's logs that match a
// regular expression (say, of their level: \[(error|warning)\]). The
// workbench keeps its log files (the window's, the extension hosts', the
// remote connection's) in the page's IndexedDB, database vscode-web-db,
// store vscode-logs-store: keys are the files' paths, values their bytes,
// under a folder named by the time the workbench started
// (/20261206T061804/window.log, local time). Every window of one
// code-server shares that database (one origin), so only the folder of
// this page's workbench is read: the first one named at or after the
// second the page started loading (two windows that started in the same
// second share one). Each line comes after its file's path; the last max
// lines are returned, oldest first.
const jsWindowLog = `(max, pattern) => new Promise((resolve) => {
	const open = indexedDB.open('vscode-web-db');
	open.onerror = () => resolve({error: 'open vscode-web-db: ' + open.error});
	open.onupgradeneeded = () => open.transaction.abort(); // absent: do not create it
	open.onsuccess = () => {
		const db = open.result;
		if (!db.objectStoreNames.contains('vscode-logs-store')) {
			db.close();
			resolve({error: 'vscode-web-db has no vscode-logs-store'});
			return;
		}
		const store = db.transaction('vscode-logs-store', 'readonly').objectStore('vscode-logs-store');
		const keys = store.getAllKeys(), values = store.getAll();
		store.transaction.oncomplete = () => {
			const lines = [], dec = new TextDecoder(), re = new RegExp(pattern);
			const started = (k) => {
				const m = /^\/?(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)\//.exec(String(k));
				return m ? new Date(m[1], m[2] - 1, m[3], m[4], m[5], m[6]).getTime() : NaN;
			};
			const since = Math.floor(performance.timeOrigin / 1000) * 1000;
			const times = keys.result.map(started);
			const mine = Math.min(...times.filter(t => t >= since));
			keys.result.forEach((k, i) => {
				if (times[i] !== mine) return;
				const v = values.result[i];
				const text = typeof v === 'string' ? v : dec.decode(v);
				const file = String(k);
				for (const line of text.split('\n')) {
					if (re.test(line)) lines.push({file, line});
				}
			});
			lines.sort((a, b) => a.line < b.line ? -1 : a.line > b.line ? 1 : 0);
			db.close();
			resolve({lines: lines.slice(-max).map(l => l.file + ': ' + l.line)});
		};
		store.transaction.onerror = () => { db.close(); resolve({error: 'read vscode-logs-store: ' + store.transaction.error}); };
	};
})`

// windowLog is what jsWindowLog reports.
type windowLog struct {
	Error string   `json:"error"`
	Lines []string `json:"lines"`
}

// logProblems returns the last max lines of this window's workbench log
// at levels info, warning and error.
func (w *window) logProblems(ctx context.Context, max int) ([]string, error) {
	return LogLines(ctx, w.page, `\[(info|warning|error)\]`, max)
}

// LogLines returns the last max lines of the page's own workbench log that
// match the regular expression pattern, each after its file's path (see
// jsWindowLog). Within 5 s.
func LogLines(ctx context.Context, page browser.Page, pattern string, max int) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	raw, err := page.Eval(ctx, jsWindowLog, max, pattern)
	if err != nil {
		return nil, fmt.Errorf("read the workbench's log: %w", err)
	}
	var l windowLog
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("read the workbench's log: %w", err)
	}
	if l.Error != "" {
		return nil, fmt.Errorf("read the workbench's log: %s", l.Error)
	}
	return l.Lines, nil
}
