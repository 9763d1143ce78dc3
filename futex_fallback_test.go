//go:build !(linux || darwin) || knit_futex_fallback

package knit

// futexHasShared: the fallback cannot wait across processes.
const futexHasShared = false
