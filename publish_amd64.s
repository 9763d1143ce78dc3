//go:build !purego && !race

#include "go_asm.h"
#include "textflag.h"

// func storeRel(p *atomic.Uint64, v uint64)
// A plain MOV is a release store under x86-TSO: it becomes visible after
// every earlier store of this thread and is never reordered before an
// earlier load. The loads that pair with it are sync/atomic Loads (MOV):
// TSO keeps a thread's loads in order, so a reader that sees v sees what
// was written before it.
TEXT ·storeRel(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ v+8(FP), BX
	MOVQ BX, (AX)
	RET

// func publishRelaxed(p *atomic.Uint64, v uint64, mode *atomic.Uint32)
// The release store, then the mode again (TSO keeps that load after the
// caller's earlier ones, and it may pass the store: that is the point of
// looking), and a LOCK OR on the stack if the bell left relaxed since the
// caller looked.
TEXT ·publishRelaxed(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), AX
	MOVQ v+8(FP), BX
	MOVQ mode+16(FP), CX
	MOVQ BX, (AX)
	CMPL (CX), $const_modeRelaxed
	JEQ  done
	LOCK
	ORL  $0, (SP)

done:
	RET

// func storeLoadFence()
// A locked instruction drains the store buffer before any later load.
TEXT ·storeLoadFence(SB), NOSPLIT, $0-0
	LOCK
	ORL $0, (SP)
	RET
