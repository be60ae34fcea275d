package pipeline

import (
	"fmt"
	"slices"
	"testing"

	"dialogfarm/dialog"
)

// TestGroupByRepo: configgen interleaves repositories; the queue gets each
// repository's configs together (first-seen order of repositories, each
// one's configs with the most turns first, otherwise in their order), so a
// window reloads its workbench once per repository instead of once per
// config, and a run's last jobs are its shortest.
func TestGroupByRepo(t *testing.T) {
	turns := func(n int) []dialog.TurnSpec { return make([]dialog.TurnSpec, n) }
	in := []dialog.ChatConfig{
		{ID: "1", Repo: "b", Turns: turns(1)}, {ID: "2", Repo: "a", Turns: turns(2)}, {ID: "3", Repo: "b", Turns: turns(3)},
		{ID: "4", Repo: "c", Turns: turns(1)}, {ID: "5", Repo: "a", Turns: turns(2)}, {ID: "6", Repo: "b", Turns: turns(1)},
	}
	got := groupByRepo(in)
	var ids []string
	switches := 0
	for i, c := range got {
		ids = append(ids, c.ID)
		if i > 0 && c.Repo != got[i-1].Repo {
			switches++
		}
	}
	if want := []string{"3", "1", "6", "2", "5", "4"}; !slices.Equal(ids, want) {
		t.Errorf("order %v, want %v", ids, want)
	}
	if switches != 2 {
		t.Errorf("%d repository switches, want 2 (one per extra repository)", switches)
	}
	if in[0].ID != "1" || in[1].ID != "2" {
		t.Error("the caller's slice was reordered")
	}
}

// loadsInTurn counts the workbench loads of n windows that take the jobs
// in turn: a window's first job, and each job on another repository than
// its previous one.
func loadsInTurn(cs []dialog.ChatConfig, n int) int {
	shows := make([]string, n)
	loads := 0
	for i, c := range cs {
		if shows[i%n] != c.Repo {
			shows[i%n] = c.Repo
			loads++
		}
	}
	return loads
}

// TestQueueOrderForWindows: for several windows the queue spreads them
// over the repositories (in proportion to their configs) instead of
// putting every window on the first repository and moving them all at
// each repository's end; each repository's configs keep their order (the
// most turns first), and every config is queued once.
func TestQueueOrderForWindows(t *testing.T) {
	turns := func(n int) []dialog.TurnSpec { return make([]dialog.TurnSpec, n) }
	var in []dialog.ChatConfig
	for i := range 48 {
		in = append(in, dialog.ChatConfig{ID: fmt.Sprint(i), Repo: fmt.Sprintf("r%d", i%4), Turns: turns(1 + i%3)})
	}
	for _, c := range []struct {
		cs        []dialog.ChatConfig
		n         int
		wantLoads int
	}{
		{in, 16, 16},    // 4 windows on each repository
		{in, 4, 4},      // one window per repository
		{in, 1, 4},      // groupByRepo
		{in[:20], 8, 8}, // 5 configs per repository: 2 windows each
		{in[:6], 16, 6}, // more windows than configs
		{in[:40], 3, 6}, // 4 repositories, 3 windows: the fourth is shared when the others end
	} {
		got := queueOrder(c.cs, c.n)
		if len(got) != len(c.cs) {
			t.Fatalf("n=%d: %d configs queued of %d", c.n, len(got), len(c.cs))
		}
		seen := map[string]bool{}
		for _, g := range got {
			if seen[g.ID] {
				t.Errorf("n=%d: %s queued twice", c.n, g.ID)
			}
			seen[g.ID] = true
		}
		if l := loadsInTurn(got, c.n); l > c.wantLoads {
			t.Errorf("n=%d over %d configs: %d loads taking jobs in turn, want at most %d", c.n, len(c.cs), l, c.wantLoads)
		}
		// Each repository's configs in groupByRepo's order.
		per := func(cs []dialog.ChatConfig) map[string][]string {
			m := map[string][]string{}
			for _, x := range cs {
				m[x.Repo] = append(m[x.Repo], x.ID)
			}
			return m
		}
		want := per(groupByRepo(c.cs))
		for r, ids := range per(got) {
			if !slices.Equal(ids, want[r]) {
				t.Errorf("n=%d: %s's configs in order %v, want %v", c.n, r, ids, want[r])
			}
		}
	}
	if got, want := queueOrder(in, 1), groupByRepo(in); !slices.EqualFunc(got, want, func(a, b dialog.ChatConfig) bool { return a.ID == b.ID }) {
		t.Error("for one window the order is not groupByRepo's")
	}
	if loadsInTurn(groupByRepo(in), 16) != 48 {
		t.Errorf("groupByRepo's order for 16 windows: %d loads; the case this order is for has every job load", loadsInTurn(groupByRepo(in), 16))
	}
}
