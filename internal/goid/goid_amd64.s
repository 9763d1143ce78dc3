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
