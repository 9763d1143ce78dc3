//go:build !(amd64 || arm64) || purego || race

package knit

// The Words ring's paths in Go: SPSC[uint64]'s own, used with the purego
// tag, on GOARCHes without ring_$GOARCH.s, and under the race detector,
// which cannot see what assembly reads and writes. SPSC's code rings the
// doorbell itself, so Words' methods do not (wordsAsm).

const wordsAsm = false

func wordPush(q *SPSC[uint64], v uint64) uint8 {
	if q.buf == nil {
		return uint8(stZero)
	}
	return uint8(q.push(v))
}

func wordPop(q *SPSC[uint64]) (uint64, uint8) {
	if q.buf == nil {
		return 0, uint8(stZero)
	}
	v, st := q.pop()
	return v, uint8(st)
}

func wordPushBatch(q *SPSC[uint64], vs []uint64) uint64 {
	if q.buf == nil {
		return 0
	}
	return uint64(q.pushBatch(vs))
}

func wordPopBatch(q *SPSC[uint64], dst []uint64) uint64 {
	if q.buf == nil {
		return 0
	}
	return uint64(q.popBatch(dst))
}
