//go:build !race

package knit

// raceBuild: see waitlist_race.go. Without the race detector the node
// annotations are nothing.
const raceBuild = false

func raceReleaseNode(*waiter) {}
func raceAcquireNode(*waiter) {}
