//go:build !purego

#include "textflag.h"

// func Curg() uintptr
//
// The address of the calling goroutine's runtime g, which the Go ABI keeps
// in the g register (R28). It is only ever compared for equality, never
// dereferenced.
TEXT ·Curg(SB), NOSPLIT, $0-8
	MOVD g, R0
	MOVD R0, ret+0(FP)
	RET

// func gword(off uintptr) uint64
//
// The word at off bytes into the calling goroutine's runtime g (the g
// register). off is below gwords*8, inside every g (see findOffset).
TEXT ·gword(SB), NOSPLIT, $0-16
	MOVD g, R0
	MOVD off+0(FP), R1
	MOVD (R0)(R1), R0
	MOVD R0, ret+8(FP)
	RET

// func id() uint64
//
// gword(idOffset), or 0 while idOffset is 0, in one call: ID's fast path.
// A plain load of idOffset suffices: it is one aligned word, written once,
// and a caller that sees 0 synchronises through idOnce.
TEXT ·id(SB), NOSPLIT, $0-8
	MOVD ·idOffset(SB), R1
	CBZ R1, none
	MOVD g, R0
	MOVD (R0)(R1), R0
	MOVD R0, ret+0(FP)
	RET
none:
	MOVD ZR, ret+0(FP)
	RET
