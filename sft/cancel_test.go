package sft

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestExportFilesCancelled: a cancelled export writes nothing and leaves
// the earlier file as it was.
func TestExportFilesCancelled(t *testing.T) {
	dir := t.TempDir()
	in := writeFixture(t, dir)
	out := filepath.Join(dir, "sft.jsonl")
	if err := os.WriteFile(out, []byte("earlier\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := ExportFiles(ctx, in, out, DefaultOptions()); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if got, _ := os.ReadFile(out); string(got) != "earlier\n" {
		t.Errorf("out changed: %.60q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("files after a cancelled export: %v", entries)
	}
}
