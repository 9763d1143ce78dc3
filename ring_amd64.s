//go:build !purego && !race

#include "go_asm.h"
#include "textflag.h"

// The Words ring (an SPSC[uint64]): push, pop and their batch forms. Field
// offsets come from go_asm.h (spscCore_*); the slot slice follows the core
// at spscCore__size. Each side reads its own index from its private copy
// (prodTail, consHead) and stores both the copy and the published index,
// as SPSC's Go code does (spscCore).
#define Q_BUF spscCore__size

// The bells' modes, as publish (bell.go, and publishRelaxed below) reads
// them: an index is published with a release store while the bell the
// other side waits on is relaxed (and fenced after if it no longer is),
// with XCHG while it is fenced, so that Go's load of that bell's waiter
// count comes after the store is visible (bell.go, "Publication and the
// doorbell").
#define NOTEMPTY_MODE spscCore_bells+ringBells_notEmpty+ringBell_mode
#define NOTFULL_MODE spscCore_bells+ringBells_notFull+ringBell_mode

// Ordering (x86-TSO: a plain MOV load is an acquire, a plain MOV store a
// release; no locked instruction on these paths):
//   - the producer stores the slot, then tail: the consumer's load of tail
//     (wordPop, SPSC.pop) pairs with that store, and a consumer that sees
//     the new tail sees the slot;
//   - the consumer loads the slot, then stores head: a load is never
//     reordered after a later store, so the producer's load of head
//     (wordPush, SPSC.push) that sees it free finds the slot read;
//   - the load of the waiter count that follows in Go (Notify) may pass
//     these stores; so a publishing store is a MOV only while the bell is
//     relaxed, followed by a second look at its mode and a LOCK OR if it
//     left relaxed meanwhile, and an XCHG while it is not (bell.go).

// func wordPush(q *SPSC[uint64], v uint64) uint8
TEXT ·wordPush(SB), NOSPLIT, $0-17
	MOVQ q+0(FP), DI
	MOVQ spscCore_prodTail(DI), AX
	BTQ  $63, AX
	JCS  closed
	MOVQ spscCore_last(DI), R9
	MOVQ AX, CX
	SUBQ spscCore_headCache(DI), CX
	CMPQ CX, R9
	JLS  room

	// The cached head says full: look at the real one.
	MOVQ spscCore_head(DI), R8
	MOVQ R8, spscCore_headCache(DI)
	MOVQ AX, CX
	SUBQ R8, CX
	CMPQ CX, R9
	JHI  full

room:
	MOVQ  Q_BUF(DI), R11
	TESTQ R11, R11
	JZ    zero
	MOVQ  spscCore_mask(DI), R10
	ANDQ  AX, R10
	MOVQ  v+8(FP), DX
	MOVQ  DX, (R11)(R10*8)
	INCQ  AX
	MOVQ  AX, spscCore_prodTail(DI)

	// Publish, as publish does: a release store of tail on a relaxed
	// bell (and a fence if it left relaxed meanwhile), XCHG on a fenced
	// one.
	CMPL  NOTEMPTY_MODE(DI), $const_modeRelaxed
	JNE   xpush
	MOVQ  AX, spscCore_tail(DI)
	CMPL  NOTEMPTY_MODE(DI), $const_modeRelaxed
	JEQ   pushed
	LOCK
	ORL   $0, (SP)
	JMP   pushed

xpush:
	XCHGQ AX, spscCore_tail(DI)

pushed:
	MOVB $const_stOK, ret+16(FP)
	RET

closed:
	MOVB $const_stClosed, ret+16(FP)
	RET

full:
	MOVB $const_stFull, ret+16(FP)
	RET

zero:
	MOVB $const_stZero, ret+16(FP)
	RET

// func wordPop(q *SPSC[uint64]) (v uint64, st uint8)
TEXT ·wordPop(SB), NOSPLIT, $0-17
	MOVQ q+0(FP), DI
	MOVQ spscCore_consHead(DI), AX
	CMPQ AX, spscCore_tailCache(DI)
	JNE  have

	// The cached tail says empty: look at the real one (acquire).
	MOVQ spscCore_tail(DI), CX
	MOVQ CX, DX
	BTRQ $63, DX
	MOVQ DX, spscCore_tailCache(DI)
	CMPQ AX, DX
	JNE  have
	MOVQ $0, v+8(FP)
	CMPQ Q_BUF(DI), $0
	JEQ  zero
	BTQ  $63, CX
	JCS  drained
	MOVB $const_stEmpty, st+16(FP)
	RET

drained:
	MOVB $const_stDrained, st+16(FP)
	RET

zero:
	MOVB $const_stZero, st+16(FP)
	RET

have:
	MOVQ spscCore_mask(DI), R9
	ANDQ AX, R9
	MOVQ Q_BUF(DI), R11
	MOVQ (R11)(R9*8), R10
	MOVQ R10, v+8(FP)
	INCQ AX
	MOVQ AX, spscCore_consHead(DI)

	// Hand the slot back, publishing head as wordPush publishes tail.
	CMPL  NOTFULL_MODE(DI), $const_modeRelaxed
	JNE   xpop
	MOVQ  AX, spscCore_head(DI)
	CMPL  NOTFULL_MODE(DI), $const_modeRelaxed
	JEQ   popped
	LOCK
	ORL   $0, (SP)
	JMP   popped

xpop:
	XCHGQ AX, spscCore_head(DI)

popped:
	MOVB $const_stOK, st+16(FP)
	RET

// func wordPushBatch(q *SPSC[uint64], vs []uint64) uint64
TEXT ·wordPushBatch(SB), NOSPLIT, $0-40
	MOVQ  q+0(FP), DI
	MOVQ  vs_base+8(FP), SI
	MOVQ  vs_len+16(FP), BX
	TESTQ BX, BX
	JZ    none
	MOVQ  Q_BUF(DI), R11
	TESTQ R11, R11
	JZ    none
	MOVQ  spscCore_prodTail(DI), AX
	BTQ   $63, AX
	JCS   none
	MOVQ  spscCore_mask(DI), R9
	MOVQ  spscCore_last(DI), R13
	INCQ  R13
	MOVQ  AX, CX
	SUBQ  spscCore_headCache(DI), CX
	MOVQ  R13, R14
	SUBQ  CX, R14
	CMPQ  R14, BX
	JCC   enough
	MOVQ  spscCore_head(DI), R8
	MOVQ  R8, spscCore_headCache(DI)
	MOVQ  AX, CX
	SUBQ  R8, CX
	MOVQ  R13, R14
	SUBQ  CX, R14

enough:
	// n = min(len(vs), room)
	CMPQ  BX, R14
	JLS   counted
	MOVQ  R14, BX

counted:
	TESTQ BX, BX
	JZ    none
	XORQ  CX, CX

copy:
	LEAQ (AX)(CX*1), R10
	ANDQ R9, R10
	MOVQ (SI)(CX*8), DX
	MOVQ DX, (R11)(R10*8)
	INCQ CX
	CMPQ CX, BX
	JCS  copy

	// Publish the batch: one store of tail, as in wordPush.
	ADDQ  BX, AX
	MOVQ  AX, spscCore_prodTail(DI)
	CMPL  NOTEMPTY_MODE(DI), $const_modeRelaxed
	JNE   xpush
	MOVQ  AX, spscCore_tail(DI)
	CMPL  NOTEMPTY_MODE(DI), $const_modeRelaxed
	JEQ   pushed
	LOCK
	ORL   $0, (SP)
	JMP   pushed

xpush:
	XCHGQ AX, spscCore_tail(DI)

pushed:
	MOVQ BX, ret+32(FP)
	RET

none:
	MOVQ $0, ret+32(FP)
	RET

// func wordPopBatch(q *SPSC[uint64], dst []uint64) uint64
TEXT ·wordPopBatch(SB), NOSPLIT, $0-40
	MOVQ  q+0(FP), DI
	MOVQ  dst_base+8(FP), SI
	MOVQ  dst_len+16(FP), BX
	TESTQ BX, BX
	JZ    none
	MOVQ  Q_BUF(DI), R11
	TESTQ R11, R11
	JZ    none
	MOVQ  spscCore_consHead(DI), AX
	MOVQ  spscCore_tailCache(DI), CX
	SUBQ  AX, CX
	CMPQ  CX, BX
	JCC   enough
	MOVQ  spscCore_tail(DI), DX
	BTRQ  $63, DX
	MOVQ  DX, spscCore_tailCache(DI)
	MOVQ  DX, CX
	SUBQ  AX, CX

enough:
	CMPQ  BX, CX
	JLS   counted
	MOVQ  CX, BX

counted:
	TESTQ BX, BX
	JZ    none
	MOVQ  spscCore_mask(DI), R9
	XORQ  CX, CX

copy:
	LEAQ (AX)(CX*1), R10
	ANDQ R9, R10
	MOVQ (R11)(R10*8), DX
	MOVQ DX, (SI)(CX*8)
	INCQ CX
	CMPQ CX, BX
	JCS  copy

	// Hand the slots back: one store of head, as in wordPop.
	ADDQ  BX, AX
	MOVQ  AX, spscCore_consHead(DI)
	CMPL  NOTFULL_MODE(DI), $const_modeRelaxed
	JNE   xpop
	MOVQ  AX, spscCore_head(DI)
	CMPL  NOTFULL_MODE(DI), $const_modeRelaxed
	JEQ   popped
	LOCK
	ORL   $0, (SP)
	JMP   popped

xpop:
	XCHGQ AX, spscCore_head(DI)

popped:
	MOVQ BX, ret+32(FP)
	RET

none:
	MOVQ $0, ret+32(FP)
	RET

// Publication (the relaxed publish and the fence a fenced bell adds),
// called from Go; see publish in bell.go. The plain release store is
// internal/relstore's.

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
