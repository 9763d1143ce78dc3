//go:build !purego && !race

#include "textflag.h"

// func Store(p *atomic.Uint64, v uint64)
// A plain MOV is a release store under x86-TSO: it becomes visible after
// every earlier store of this thread and is never reordered before an
// earlier load. The loads that pair with it are sync/atomic Loads (MOV):
// TSO keeps a thread's loads in order, so a reader that sees v sees what
// was written before it.
TEXT ·Store(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ v+8(FP), BX
	MOVQ BX, (AX)
	RET

// func Fence()
// A locked instruction drains the store buffer before any later load
// (LOCK OR on the stack: Linux's smp_mb uses it as cheaper than MFENCE).
TEXT ·Fence(SB), NOSPLIT, $0-0
	LOCK
	ORL $0, (SP)
	RET
