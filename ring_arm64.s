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

// The Words ring (an SPSC[uint64]): push, pop and their batch forms.
// Field offsets of SPSC[uint64] with 128-byte lines; TestWordsLayout
// checks them against unsafe.Offsetof.
#define Q_TAIL 128
#define Q_HEADCACHE 136
#define Q_HEAD 256
#define Q_TAILCACHE 264
#define Q_BUF 384
#define Q_MASK 408

// Ordering (arm64 is weakly ordered, so each edge is explicit):
//   - the producer publishes with STLXR (release) on tail: its slot stores
//     are visible before the new tail;
//   - the consumer reads tail with LDAR (acquire): slot loads that follow
//     cannot see a slot older than that tail says (a cached tail was read
//     by an earlier LDAR, whose ordering covers these loads too);
//   - the consumer moves head with STLR (release): its slot loads complete
//     before the producer can see the slot as free;
//   - the producer reads head with LDAR (acquire): its overwrite of a freed
//     slot cannot be reordered before the load that found it free.

// func wordPush(q *SPSC[uint64], v uint64) uint8
TEXT ·wordPush(SB), NOSPLIT, $0-17
	MOVD q+0(FP), R0
	ADD  $Q_TAIL, R0, R1
	LDAR (R1), R2
	TBNZ $63, R2, closed
	MOVD Q_MASK(R0), R5
	MOVD Q_HEADCACHE(R0), R3
	SUB  R3, R2, R4
	CMP  R5, R4
	BLS  room

	// The cached head says full: look at the real one.
	ADD  $Q_HEAD, R0, R6
	LDAR (R6), R3
	MOVD R3, Q_HEADCACHE(R0)
	SUB  R3, R2, R4
	CMP  R5, R4
	BHI  full

room:
	AND  R2, R5, R7
	MOVD Q_BUF(R0), R8
	MOVD v+8(FP), R9
	MOVD R9, (R8)(R7<<3)
	ADD  $1, R2, R10

	// Publish; fails only if Close set the closed bit since the load.
cas:
	LDAXR (R1), R11
	CMP   R2, R11
	BNE   lost
	STLXR R10, (R1), R12
	CBNZ  R12, cas
	MOVD  $const_stOK, R13
	MOVB  R13, ret+16(FP)
	RET

lost:
	CLREX $15

closed:
	MOVD $const_stClosed, R13
	MOVB R13, ret+16(FP)
	RET

full:
	MOVD $const_stFull, R13
	MOVB R13, ret+16(FP)
	RET

// func wordPop(q *SPSC[uint64]) (v uint64, st uint8)
TEXT ·wordPop(SB), NOSPLIT, $0-17
	MOVD q+0(FP), R0
	MOVD Q_HEAD(R0), R2
	MOVD Q_TAILCACHE(R0), R3
	CMP  R3, R2
	BNE  have

	// The cached tail says empty: look at the real one.
	ADD  $Q_TAIL, R0, R1
	LDAR (R1), R4
	AND  $0x7fffffffffffffff, R4, R3
	MOVD R3, Q_TAILCACHE(R0)
	CMP  R3, R2
	BNE  have
	MOVD ZR, v+8(FP)
	TBNZ $63, R4, drained
	MOVD $const_stEmpty, R13
	MOVB R13, st+16(FP)
	RET

drained:
	MOVD $const_stDrained, R13
	MOVB R13, st+16(FP)
	RET

have:
	MOVD Q_MASK(R0), R5
	AND  R2, R5, R7
	MOVD Q_BUF(R0), R8
	MOVD (R8)(R7<<3), R9
	MOVD R9, v+8(FP)
	ADD  $1, R2, R2
	ADD  $Q_HEAD, R0, R6
	STLR R2, (R6)
	MOVD $const_stOK, R13
	MOVB R13, st+16(FP)
	RET

// func wordPushBatch(q *SPSC[uint64], vs []uint64) uint64
TEXT ·wordPushBatch(SB), NOSPLIT, $0-40
	MOVD q+0(FP), R0
	MOVD vs_base+8(FP), R14
	MOVD vs_len+16(FP), R15
	CBZ  R15, none
	ADD  $Q_TAIL, R0, R1
	LDAR (R1), R2
	TBNZ $63, R2, none
	MOVD Q_MASK(R0), R5
	ADD  $1, R5, R13
	MOVD Q_HEADCACHE(R0), R3
	SUB  R3, R2, R4
	SUB  R4, R13, R16
	CMP  R15, R16
	BHS  enough
	ADD  $Q_HEAD, R0, R6
	LDAR (R6), R3
	MOVD R3, Q_HEADCACHE(R0)
	SUB  R3, R2, R4
	SUB  R4, R13, R16

enough:
	// n = min(len(vs), room)
	CMP  R16, R15
	BLS  counted
	MOVD R16, R15

counted:
	CBZ  R15, none
	MOVD Q_BUF(R0), R8
	MOVD $0, R4

copy:
	ADD  R4, R2, R7
	AND  R5, R7, R7
	MOVD (R14)(R4<<3), R9
	MOVD R9, (R8)(R7<<3)
	ADD  $1, R4, R4
	CMP  R15, R4
	BLO  copy
	ADD  R15, R2, R10

cas:
	LDAXR (R1), R11
	CMP   R2, R11
	BNE   lost
	STLXR R10, (R1), R12
	CBNZ  R12, cas
	MOVD  R15, ret+32(FP)
	RET

lost:
	CLREX $15

none:
	MOVD ZR, ret+32(FP)
	RET

// func wordPopBatch(q *SPSC[uint64], dst []uint64) uint64
TEXT ·wordPopBatch(SB), NOSPLIT, $0-40
	MOVD q+0(FP), R0
	MOVD dst_base+8(FP), R14
	MOVD dst_len+16(FP), R15
	CBZ  R15, none
	MOVD Q_HEAD(R0), R2
	MOVD Q_TAILCACHE(R0), R3
	SUB  R2, R3, R16
	CMP  R15, R16
	BHS  enough
	ADD  $Q_TAIL, R0, R1
	LDAR (R1), R4
	AND  $0x7fffffffffffffff, R4, R3
	MOVD R3, Q_TAILCACHE(R0)
	SUB  R2, R3, R16

enough:
	CMP  R16, R15
	BLS  counted
	MOVD R16, R15

counted:
	CBZ  R15, none
	MOVD Q_MASK(R0), R5
	MOVD Q_BUF(R0), R8
	MOVD $0, R4

copy:
	ADD  R4, R2, R7
	AND  R5, R7, R7
	MOVD (R8)(R7<<3), R9
	MOVD R9, (R14)(R4<<3)
	ADD  $1, R4, R4
	CMP  R15, R4
	BLO  copy
	ADD  R15, R2, R2
	ADD  $Q_HEAD, R0, R6
	STLR R2, (R6)
	MOVD R15, ret+32(FP)
	RET

none:
	MOVD ZR, ret+32(FP)
	RET
