//go:build !race

package knit

// Without the race detector the node annotations are nothing.

func raceReleaseNode(*waiter) {}
func raceAcquireNode(*waiter) {}

const raceBuild = false
