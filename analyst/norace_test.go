//go:build !race

package analyst

const raceEnabled = false
