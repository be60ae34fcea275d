//go:build race

package analyst

// raceEnabled: the race detector slows the planner about tenfold.
const raceEnabled = true
