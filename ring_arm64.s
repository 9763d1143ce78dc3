//go:build !purego && !race

#include "go_asm.h"
#include "textflag.h"

// The Words ring (an SPSC[uint64]): push, pop and their batch forms. Field
// offsets come from go_asm.h (spscCore_*); the slot slice follows the core
// at spscCore__size. Each side reads its own index from its private copy
// (prodTail, consHead) and stores both the copy and the published index,
// as SPSC's Go code does (spscCore).
#define Q_BUF spscCore__size

// Ordering (arm64 is weakly ordered, so each edge is explicit; on Apple
// silicon and Neoverse alike STLR is the publish, and no locked
// read-modify-write is on these paths):
//   - the producer publishes tail with STLR (release): its slot store is
//     visible before the new tail;
//   - the consumer reads tail with LDAR (acquire): slot loads that follow
//     cannot see a slot older than that tail says (a cached tail was read
//     by an earlier LDAR, whose ordering covers these loads too);
//   - the consumer moves head with STLR (release): its slot loads complete
//     before the producer can see the slot as free;
//   - the producer reads head with LDAR (acquire): its overwrite of a freed
//     slot cannot be reordered before the load that found it free;
//   - the waiter count that Notify then loads in Go is read with LDAR,
//     which is never satisfied before this thread's earlier STLR is
//     visible, so the doorbell's store-then-load needs no fence.
// TestLitmusMP and TestLitmusSBRing (litmus_test.go) stress these edges;
// they mean something on native arm64 only, not under qemu-user on x86.

// func wordPush(q *SPSC[uint64], v uint64) uint8
TEXT ·wordPush(SB), NOSPLIT, $0-17
	MOVD q+0(FP), R0
	MOVD spscCore_prodTail(R0), R2 // our own copy: no other writer
	TBNZ $63, R2, closed
	MOVD spscCore_last(R0), R5
	MOVD spscCore_headCache(R0), R3
	SUB  R3, R2, R4
	CMP  R5, R4
	BLS  room

	// The cached head says full: look at the real one.
	ADD  $spscCore_head, R0, R6
	LDAR (R6), R3
	MOVD R3, spscCore_headCache(R0)
	SUB  R3, R2, R4
	CMP  R5, R4
	BHI  full

room:
	MOVD Q_BUF(R0), R8
	CBZ  R8, zero
	MOVD spscCore_mask(R0), R5
	AND  R2, R5, R7
	MOVD v+8(FP), R9
	MOVD R9, (R8)(R7<<3)
	ADD  $1, R2, R10
	MOVD R10, spscCore_prodTail(R0)

	// Publish: release store of tail.
	ADD  $spscCore_tail, R0, R1
	STLR R10, (R1)
	MOVD $const_stOK, R13
	MOVB R13, ret+16(FP)
	RET

closed:
	MOVD $const_stClosed, R13
	MOVB R13, ret+16(FP)
	RET

full:
	MOVD $const_stFull, R13
	MOVB R13, ret+16(FP)
	RET

zero:
	MOVD $const_stZero, R13
	MOVB R13, ret+16(FP)
	RET

// func wordPop(q *SPSC[uint64]) (v uint64, st uint8)
TEXT ·wordPop(SB), NOSPLIT, $0-17
	MOVD q+0(FP), R0
	MOVD spscCore_consHead(R0), R2 // our own copy
	MOVD spscCore_tailCache(R0), R3
	CMP  R3, R2
	BNE  have

	// The cached tail says empty: look at the real one.
	ADD  $spscCore_tail, R0, R1
	LDAR (R1), R4
	AND  $0x7fffffffffffffff, R4, R3
	MOVD R3, spscCore_tailCache(R0)
	CMP  R3, R2
	BNE  have
	MOVD ZR, v+8(FP)
	MOVD Q_BUF(R0), R8
	CBZ  R8, zero
	TBNZ $63, R4, drained
	MOVD $const_stEmpty, R13
	MOVB R13, st+16(FP)
	RET

drained:
	MOVD $const_stDrained, R13
	MOVB R13, st+16(FP)
	RET

zero:
	MOVD $const_stZero, R13
	MOVB R13, st+16(FP)
	RET

have:
	MOVD spscCore_mask(R0), R5
	AND  R2, R5, R7
	MOVD Q_BUF(R0), R8
	MOVD (R8)(R7<<3), R9
	MOVD R9, v+8(FP)
	ADD  $1, R2, R2
	MOVD R2, spscCore_consHead(R0)

	// Hand the slot back: release store of head.
	ADD  $spscCore_head, R0, R6
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
	MOVD Q_BUF(R0), R8
	CBZ  R8, none
	MOVD spscCore_prodTail(R0), R2
	TBNZ $63, R2, none
	MOVD spscCore_mask(R0), R5
	MOVD spscCore_last(R0), R13
	ADD  $1, R13, R13
	MOVD spscCore_headCache(R0), R3
	SUB  R3, R2, R4
	SUB  R4, R13, R16
	CMP  R15, R16
	BHS  enough
	ADD  $spscCore_head, R0, R6
	LDAR (R6), R3
	MOVD R3, spscCore_headCache(R0)
	SUB  R3, R2, R4
	SUB  R4, R13, R16

enough:
	// n = min(len(vs), room)
	CMP  R16, R15
	BLS  counted
	MOVD R16, R15

counted:
	CBZ  R15, none
	MOVD $0, R4

copy:
	ADD  R4, R2, R7
	AND  R5, R7, R7
	MOVD (R14)(R4<<3), R9
	MOVD R9, (R8)(R7<<3)
	ADD  $1, R4, R4
	CMP  R15, R4
	BLO  copy

	// Publish the batch: one release store of tail.
	ADD  R15, R2, R10
	MOVD R10, spscCore_prodTail(R0)
	ADD  $spscCore_tail, R0, R1
	STLR R10, (R1)
	MOVD R15, ret+32(FP)
	RET

none:
	MOVD ZR, ret+32(FP)
	RET

// func wordPopBatch(q *SPSC[uint64], dst []uint64) uint64
TEXT ·wordPopBatch(SB), NOSPLIT, $0-40
	MOVD q+0(FP), R0
	MOVD dst_base+8(FP), R14
	MOVD dst_len+16(FP), R15
	CBZ  R15, none
	MOVD Q_BUF(R0), R8
	CBZ  R8, none
	MOVD spscCore_consHead(R0), R2
	MOVD spscCore_tailCache(R0), R3
	SUB  R2, R3, R16
	CMP  R15, R16
	BHS  enough
	ADD  $spscCore_tail, R0, R1
	LDAR (R1), R4
	AND  $0x7fffffffffffffff, R4, R3
	MOVD R3, spscCore_tailCache(R0)
	SUB  R2, R3, R16

enough:
	CMP  R16, R15
	BLS  counted
	MOVD R16, R15

counted:
	CBZ  R15, none
	MOVD spscCore_mask(R0), R5
	MOVD $0, R4

copy:
	ADD  R4, R2, R7
	AND  R5, R7, R7
	MOVD (R8)(R7<<3), R9
	MOVD R9, (R14)(R4<<3)
	ADD  $1, R4, R4
	CMP  R15, R4
	BLO  copy

	// Hand the slots back: one release store of head.
	ADD  R15, R2, R2
	MOVD R2, spscCore_consHead(R0)
	ADD  $spscCore_head, R0, R6
	STLR R2, (R6)
	MOVD R15, ret+32(FP)
	RET

none:
	MOVD ZR, ret+32(FP)
	RET
