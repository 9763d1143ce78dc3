//go:build (amd64 || arm64) && !purego && !race

package knit

// wordsAsm says that Words' push and pop run in assembly, which publishes
// (with publish's fence) but leaves ringing the doorbell to the Go code.
const wordsAsm = true

// The Words ring's hot paths, in ring_$GOARCH.s. They take the
// SPSC[uint64] inside a Words and address it at the offsets go_asm.h gives
// for spscCore, with the slot slice at spscCore__size (TestWordsLayout
// checks that the slice follows the core). Each returns a status; stZero
// when the slot slice is nil (a Words no constructor made).

//go:noescape
func wordPush(q *SPSC[uint64], v uint64) uint8

//go:noescape
func wordPop(q *SPSC[uint64]) (v uint64, st uint8)

//go:noescape
func wordPushBatch(q *SPSC[uint64], vs []uint64) uint64

//go:noescape
func wordPopBatch(q *SPSC[uint64], dst []uint64) uint64
