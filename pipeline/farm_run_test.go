package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run folder keeps its farm run's key (and, on a shared farm, its name)
// in farm.json, mode 0600: a resumed run seals and collects with the same
// key, an embedded run is "local", and a shared farm never gets the name
// "local".
func TestFarmRunKeepsItsKey(t *testing.T) {
	out := t.TempDir()
	run, key, err := farmRunState(out, true)
	if err != nil || run != farmLocalName || len(key) != 32 {
		t.Fatalf("embedded: %q, %d-byte key, %v", run, len(key), err)
	}
	info, err := os.Stat(filepath.Join(out, FarmRunFile))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("farm.json: %v, %v", info, err)
	}
	again, key2, err := farmRunState(out, true)
	if err != nil || again != run || !bytes.Equal(key, key2) {
		t.Errorf("resumed: %q, same key %v, %v", again, bytes.Equal(key, key2), err)
	}
	shared, key3, err := farmRunState(out, false)
	if err != nil || shared == farmLocalName || shared == "" || !bytes.Equal(key, key3) {
		t.Errorf("the folder's run on a shared farm: %q, same key %v, %v", shared, bytes.Equal(key, key3), err)
	}
	if resumed, _, _ := farmRunState(out, false); resumed != shared {
		t.Errorf("resumed on the shared farm as %q, want %q", resumed, shared)
	}
	if err := os.WriteFile(filepath.Join(out, FarmRunFile), []byte(`{"run":"x","key":"abc"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := farmRunState(out, false); err == nil || !strings.Contains(err.Error(), "field key") {
		t.Errorf("a broken key: %v", err)
	}
}
