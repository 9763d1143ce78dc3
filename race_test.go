//go:build race

package knit

const raceEnabled = true
