//go:build !race

package knit

// raceBuild: see waitlist_race.go.
const raceBuild = false
