//go:build !purego

#include "go_asm.h"
#include "textflag.h"

// Spin and wait loops for arm64. The watched word is read with LDARW
// (load-acquire), so whatever the writer published before its store to
// the word is visible once the change is seen; callers rely on that when
// the word is a sequence number guarding data.
//
// Each routine runs for a bounded time (the caller passes a deadline at
// most one wait chunk away) because a goroutine in assembly cannot be
// preempted.

// func cycles() uint64
// CNTVCT_EL0 without a preceding ISB: deadlines tolerate the few cycles a
// speculative read may be early by.
TEXT ·cycles(SB), NOSPLIT, $0-8
	MRS  CNTVCT_EL0, R0
	MOVD R0, ret+0(FP)
	RET

// func counterFreq() uint64
TEXT ·counterFreq(SB), NOSPLIT, $0-8
	MRS  CNTFRQ_EL0, R0
	MOVD R0, ret+0(FP)
	RET

// func pauseN(n uint32)
TEXT ·pauseN(SB), NOSPLIT, $0-4
	MOVWU n+0(FP), R0
	CBZ   R0, done

loop:
	ISB  $15
	SUBS $1, R0, R0
	BNE  loop

done:
	RET

// func yieldN(n uint32)
TEXT ·yieldN(SB), NOSPLIT, $0-4
	MOVWU n+0(FP), R0
	CBZ   R0, done

loop:
	YIELD
	SUBS $1, R0, R0
	BNE  loop

done:
	RET

// func waitSpin(addr *uint32, old uint32, deadline uint64) bool
TEXT ·waitSpin(SB), NOSPLIT, $0-25
	MOVD  addr+0(FP), R0
	MOVWU old+8(FP), R1
	MOVD  deadline+16(FP), R2

loop:
	LDARW (R0), R3
	CMPW  R1, R3
	BNE   changed
	ISB   $15
	MRS   CNTVCT_EL0, R4
	CMP   R2, R4
	BLO   loop
	MOVD  $0, R5
	MOVB  R5, ret+24(FP)
	RET

changed:
	MOVD $1, R5
	MOVB R5, ret+24(FP)
	RET

// func waitYield(addr *uint32, old uint32, deadline uint64) bool
TEXT ·waitYield(SB), NOSPLIT, $0-25
	MOVD  addr+0(FP), R0
	MOVWU old+8(FP), R1
	MOVD  deadline+16(FP), R2

loop:
	LDARW (R0), R3
	CMPW  R1, R3
	BNE   changed
	YIELD
	MRS   CNTVCT_EL0, R4
	CMP   R2, R4
	BLO   loop
	MOVD  $0, R5
	MOVB  R5, ret+24(FP)
	RET

changed:
	MOVD $1, R5
	MOVB R5, ret+24(FP)
	RET

// func waitWFE(addr *uint32, old uint32, deadline uint64) bool
// LDAXRW both reads the word (with acquire) and arms the exclusive
// monitor on its granule. A store by any other agent to that granule
// clears the monitor, which generates the event WFE waits for, so a
// change that lands after the read cannot be slept through. WFE also
// returns on the kernel's timer event stream, which bounds the sleep when
// nobody writes. CLREX drops the reservation on the way out.
TEXT ·waitWFE(SB), NOSPLIT, $0-25
	MOVD  addr+0(FP), R0
	MOVWU old+8(FP), R1
	MOVD  deadline+16(FP), R2

loop:
	LDAXRW (R0), R3
	CMPW   R1, R3
	BNE    changed
	WFE
	MRS    CNTVCT_EL0, R4
	CMP    R2, R4
	BLO    loop
	CLREX  $15
	MOVD   $0, R5
	MOVB   R5, ret+24(FP)
	RET

changed:
	CLREX $15
	MOVD  $1, R5
	MOVB  R5, ret+24(FP)
	RET
