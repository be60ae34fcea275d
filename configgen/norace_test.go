//go:build !race

package configgen

const raceEnabled = false
