package pipeline

import (
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
