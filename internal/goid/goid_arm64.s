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
