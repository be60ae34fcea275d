//go:build race

package tune

// raceEnabled: the race detector slows TestTuneBeatsRun's 2,400
// dialogues about tenfold (100 s against 11 s); `make test` runs it once
// more without the race detector.
const raceEnabled = true
