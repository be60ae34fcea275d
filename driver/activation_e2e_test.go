package driver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"dialogfarm/adapter"
	"dialogfarm/capture"
	"dialogfarm/driver/editor"
	"dialogfarm/driver/workbench"
)

// TestActivationFailureIsReportedAtOnce loads a workbench whose plugin
// fails to activate (it requires udx-native by a computed name) and
// checks that the wait for the plugin's readiness sign ends with the
// extension host's error lines within seconds, not at the 2-minute load
// timeout; and that a plugin that requires packages it does not ship is
// refused before any editor starts.
func TestActivationFailureIsReportedAtOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	log := zaptest.NewLogger(t)
	// The plugins of testdata/activation (package editor's tests read
	// them too).
	activationAdapter := func(t *testing.T, name string) *adapter.Adapter {
		t.Helper()
		a, err := adapter.Load(filepath.Join("testdata", "activation", name+".yaml"), "..")
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	srv := listenCapture(ctx, t, capture.DefaultConfig(), capture.Offline{}, nil, log)

	t.Run("missing packages are named before the editor starts", func(t *testing.T) {
		rc := DefaultRunConfig(root, t.TempDir())
		rc.Adapters = []*adapter.Adapter{activationAdapter(t, "missing-module")}
		r := NewRunner(rc, srv, nil, log)
		err := r.Start(ctx)
		var me *editor.MissingModulesError
		if !errors.As(err, &me) || me.Missing[0].Name != "udx-native" {
			r.Stop()
			t.Fatalf("Start = %v, want the missing udx-native named", err)
		}
		if _, err := os.Stat(filepath.Join(rc.Out, "editor")); err == nil {
			t.Errorf("the editor's folder was made: something started")
		}
	})

	rc := DefaultRunConfig(root, t.TempDir())
	if _, err := os.Stat(rc.Editor.Bin); err != nil {
		t.Fatalf("code-server is not installed (%v): run `make setup`", err)
	}
	a := activationAdapter(t, "throws")
	rc.Adapters = []*adapter.Adapter{a}
	// Without the log watch the readiness wait ends only here.
	rc.Timeouts.Load = 45 * time.Second
	r := NewRunner(rc, srv, nil, log)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	ws, err := workbench.ProbeWorkspace(r.cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.NewSession(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = s.OpenChat(ctx, a, ws, time.Minute) // the load already fails
	took := time.Since(start)
	var ae *editor.ActivationError
	if !errors.As(err, &ae) {
		t.Fatalf("open = %v after %s, want an *editor.ActivationError", err, took)
	}
	if ae.Extension != "dialogfarm-test.throws" || !strings.Contains(strings.Join(ae.Lines, "\n"), "Cannot find module 'udx-native'") ||
		!strings.HasSuffix(ae.Log, "remoteexthost.log") {
		t.Errorf("activation error %+v", ae)
	}
	// The workbench loads in 5-20 s here; the plugin's sign would have
	// been waited for until the load timeout.
	if took >= rc.Timeouts.Load {
		t.Errorf("the failure was reported after %s", took)
	}
	t.Logf("reported after %s: %v", took.Round(time.Millisecond), err)
}
