//go:build (linux || darwin) && !knit_futex_fallback

package knit

// futexHasShared: the kernel futex offers process-shared waits.
const futexHasShared = true
