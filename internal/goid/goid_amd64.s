//go:build !purego

#include "textflag.h"

// func Curg() uintptr
//
// The address of the calling goroutine's runtime g, read from thread-local
// storage where the runtime keeps it. It is only ever compared for
// equality, never dereferenced.
TEXT ·Curg(SB), NOSPLIT, $0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET

// func gword(off uintptr) uint64
//
// The word at off bytes into the calling goroutine's runtime g. off is
// below gwords*8, inside every g (see findOffset).
TEXT ·gword(SB), NOSPLIT, $0-16
	MOVQ (TLS), AX
	MOVQ off+0(FP), BX
	MOVQ (AX)(BX*1), AX
	MOVQ AX, ret+8(FP)
	RET

// func id() uint64
//
// gword(idOffset), or 0 while idOffset is 0, in one call: ID's fast path.
// A plain load of idOffset suffices: it is one aligned word, written once,
// and a caller that sees 0 synchronises through idOnce.
TEXT ·id(SB), NOSPLIT, $0-8
	MOVQ ·idOffset(SB), BX
	TESTQ BX, BX
	JZ none
	MOVQ (TLS), AX
	MOVQ (AX)(BX*1), AX
	MOVQ AX, ret+0(FP)
	RET
none:
	MOVQ $0, ret+0(FP)
	RET
