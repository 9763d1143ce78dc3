//go:build race

package knit

// raceBuild keeps runtime sleepers off park words: gopark's unlockf runs
// on the system stack, where the race detector's instrumented atomics
// must not, and a park and ready carry no happens-before edge the
// detector can see. Under -race every runtime sleeper sleeps on its
// node's channel instead.
const raceBuild = true
