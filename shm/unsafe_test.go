package shm

import "unsafe"

// unsafeBytes views an 8-aligned []uint64 as bytes, for headers built
// outside a region.
func unsafeBytes(w []uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), len(w)*8)
}
