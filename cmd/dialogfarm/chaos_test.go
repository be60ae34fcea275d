//go:build chaos

package main

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// TestChaosEditor is `make chaos` with the real editor: `dialogfarm run`
// killed with SIGKILL at random moments (DIALOGFARM_CHAOS_KILLS, default
// 10), code-server and then Chromium killed in the middle of a dialogue,
// and a model whose calls fail 20% of the time (429, 500, a dropped
// stream, a hang past the member's timeout). The run is resumed after each
// kill; at the end every config has exactly one record, ok or failed with
// its reason. Half the kills come once dialogues run, so that records are
// written between kills, each lifetime at most its share of the 24 configs
// so that some are left for the victims.
func TestChaosEditor(t *testing.T) {
	kills := 10
	if s := os.Getenv("DIALOGFARM_CHAOS_KILLS"); s != "" {
		var err error
		if kills, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	chaosEditor(t, chaosCase{n: 24, sessions: 2, kills: kills, wallClock: true,
		victims: []string{"code-server", "chromium"}, limit: 15 * time.Minute})
}
