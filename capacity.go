package knit

import (
	"fmt"
	"reflect"
	"unsafe"
)

// MaxCapacity is the largest capacity a ring accepts.
const MaxCapacity = 1 << 30

// maxRingBytes bounds a ring's slot array: past it a ring is refused with
// its size in the message, rather than left to the allocator's "len out
// of range" or an out-of-memory crash. 1 TiB is beyond any machine this
// runs on, and far below the 48-bit heap the runtime can address.
const maxRingBytes = 1 << 40

// closedBit marks a ring closed inside its tail (enqueue) index, so that a
// push and Close are ordered by the same word. Positions count up from 0
// and never reach 2^62 (the multi-sided rings double them in their
// sequences), so the bit is free.
const closedBit = 1 << 63

// roundCapacity validates and rounds a requested capacity for a ring whose
// slots are slot bytes each. A bad capacity is a programmer error, like a
// negative size to make, so it panics, naming the bound it broke.
func roundCapacity(kind string, n int, slot uintptr) int {
	if n < 1 || n > MaxCapacity {
		panic(fmt.Sprintf("knit: %s capacity %d out of range [1, %d]", kind, n, MaxCapacity))
	}
	c := 1
	for c < n {
		c <<= 1
	}
	if bytes := float64(c) * float64(slot); bytes > maxRingBytes {
		panic(fmt.Sprintf("knit: %s capacity %d (rounded to %d) needs %.3g GiB of %d-byte slots, over the %d GiB a ring may take",
			kind, n, c, bytes/(1<<30), slot, maxRingBytes>>30))
	}
	return c
}

// panicZero reports the use of a ring that no constructor made. The
// checks that call it replace the bounds checks the slot accesses need
// anyway, so a constructed ring pays nothing for them.
func panicZero(kind, ctor string) {
	panic("knit: use of a zero " + kind + ": create it with " + ctor)
}

// ringLen turns the two indices into a length; the loads are not one
// snapshot, so the result is clamped into [0, cap].
func ringLen(tail, head uint64, capacity int) int {
	n := int64(tail&^closedBit) - int64(head)
	return int(min(max(n, 0), int64(capacity)))
}

// sizeOf is unsafe.Sizeof for a type parameter.
func sizeOf[T any]() uintptr {
	var v T
	return unsafe.Sizeof(v)
}

// holdsPointers reports whether a value of type t can reference memory,
// so that a ring clears a popped slot only where that keeps something
// alive: clearing an int32 slot is a store the consumer does not need,
// to a line the producer must then take back dirty.
func holdsPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return t.Len() > 0 && holdsPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	return true // pointers, strings, slices, maps, channels, funcs, interfaces
}
