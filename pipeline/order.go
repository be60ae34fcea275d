package pipeline

import (
	"cmp"
	"context"
	"slices"

	"dialogfarm/dialog"
	"dialogfarm/farm"
)

// groupByRepo orders configs so that those on one repository follow each
// other, the repositories in the order they first appear and the configs
// of each in their own order. A window shows one repository's workspace:
// a config on another one reloads the whole workbench (its start-up cost
// again, and a new extension host), and configgen interleaves the
// repositories it picks files from. The queue hands jobs out in enqueue
// order, so the simulators move on to the next repository about once
// each instead of about once per dialogue. Within a repository, configs
// with more turns go first (each turn waits for the model): a run ends
// when its last dialogue does, and with the longest ones handed out
// early, the simulators that finish first wait for short ones, not long
// ones, at the end of the run.
func groupByRepo(cs []dialog.ChatConfig) []dialog.ChatConfig {
	rank := map[string]int{}
	for _, c := range cs {
		if _, ok := rank[c.Repo]; !ok {
			rank[c.Repo] = len(rank)
		}
	}
	out := slices.Clone(cs)
	slices.SortStableFunc(out, func(a, b dialog.ChatConfig) int {
		if d := rank[a.Repo] - rank[b.Repo]; d != 0 {
			return d
		}
		return len(b.Turns) - len(a.Turns)
	})
	return out
}

// windows is how many simulators the queue order is made for (see
// queueOrder): the run's local worker's, or with the driving left to
// remote workers, those of the workers reporting their health now.
func windows(ctx context.Context, cfg DriveConfig, q *farm.Queue) int {
	if cfg.Farm.Local {
		return max(cfg.Run.Sessions, 1)
	}
	return max(q.Simulators(ctx), 1)
}

// queueOrder orders configs for n windows. Each repository gets a share
// of the windows in proportion to its configs (the largest remainders
// rounded up), and the queue hands out one config per window in turn, so
// that, with the windows taking jobs in about the order they started,
// each window stays on its repository; a window whose repository has no
// config left moves to the one with the most configs left per window.
// Each repository's configs keep groupByRepo's order (most turns first).
// A worker's slots pick from the jobs they pulled ahead to keep their
// repository when dialogues finish out of order (farm.lookahead). For one
// window it is groupByRepo's order.
func queueOrder(cs []dialog.ChatConfig, n int) []dialog.ChatConfig {
	grouped := groupByRepo(cs)
	n = min(n, len(cs))
	if n <= 1 {
		return grouped
	}
	var repos []string
	left := map[string][]dialog.ChatConfig{}
	for _, c := range grouped {
		if _, ok := left[c.Repo]; !ok {
			repos = append(repos, c.Repo)
		}
		left[c.Repo] = append(left[c.Repo], c)
	}
	// Windows per repository: n × its share of the configs, rounded
	// down, then one more for the largest remainders.
	share := map[string]int{}
	given := 0
	for _, r := range repos {
		share[r] = n * len(left[r]) / len(cs)
		given += share[r]
	}
	byRemainder := slices.Clone(repos)
	slices.SortStableFunc(byRemainder, func(a, b string) int {
		return cmp.Compare(n*len(left[b])%len(cs), n*len(left[a])%len(cs))
	})
	for _, r := range byRemainder[:n-given] {
		share[r]++
	}
	// The windows, the repositories in turn, so that the first windows
	// to start cover them all.
	var win []string
	for len(win) < n {
		for _, r := range repos {
			if share[r] > 0 {
				win = append(win, r)
				share[r]--
			}
		}
	}
	on := map[string]int{}
	for _, r := range win {
		on[r]++
	}
	out := make([]dialog.ChatConfig, 0, len(cs))
	for len(out) < len(cs) {
		for i, r := range win {
			if len(left[r]) == 0 {
				// This window's repository is done: it moves on.
				best := ""
				for _, o := range repos {
					if len(left[o]) > 0 && (best == "" || len(left[o])*(on[best]+1) > len(left[best])*(on[o]+1)) {
						best = o
					}
				}
				if best == "" {
					break
				}
				on[r]--
				on[best]++
				win[i], r = best, best
			}
			out = append(out, left[r][0])
			left[r] = left[r][1:]
		}
	}
	return out
}
