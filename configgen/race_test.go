//go:build race

package configgen

// raceEnabled: the race detector slows the coherence check about tenfold;
// `make test` runs the full 10,000-config check once more without it.
const raceEnabled = true
