//go:build !purego

#include "go_asm.h"
#include "textflag.h"

// Spin and wait loops for amd64. Ordering: x86-TSO makes every plain MOV
// load an acquire and every plain store a release, so the loads below
// need no fences; the only ordering that matters here is that a word is
// re-read after a monitor is armed (see waitUmwait), which program order
// on one core provides.
//
// Each routine runs for a bounded time (the caller passes a deadline at
// most one wait chunk away) because a goroutine in assembly cannot be
// preempted.

// func cpuidex(op, op2 uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuidex(SB), NOSPLIT, $0-24
	MOVL op+0(FP), AX
	MOVL op2+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func cycles() uint64
// RDTSC without a fence: deadlines tolerate a few cycles of reordering,
// and LFENCE would cost more than the PAUSE it sits beside.
TEXT ·cycles(SB), NOSPLIT, $0-8
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+0(FP)
	RET

// func pauseN(n uint32)
TEXT ·pauseN(SB), NOSPLIT, $0-4
	MOVL  n+0(FP), CX
	TESTL CX, CX
	JZ    done

loop:
	PAUSE
	DECL CX
	JNZ  loop

done:
	RET

// func waitSpin(addr *uint32, old uint32, deadline uint64) bool
TEXT ·waitSpin(SB), NOSPLIT, $0-25
	MOVQ addr+0(FP), DI
	MOVL old+8(FP), SI
	MOVQ deadline+16(FP), R8

loop:
	CMPL (DI), SI
	JNE  changed
	PAUSE
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	CMPQ AX, R8
	JB   loop
	MOVB $0, ret+24(FP)
	RET

changed:
	MOVB $1, ret+24(FP)
	RET

// func waitUmwait(addr *uint32, old uint32, deadline uint64) bool
// UMONITOR arms address monitoring on the line holding *addr; the word is
// then re-read, so a store that landed between the first read and the arm
// is seen rather than slept through. UMWAIT sleeps in C0.1 (control bit 0
// set: the lighter state, faster to wake) until the line is written, an
// interrupt arrives, the TSC passes EDX:EAX, or the OS limit
// (IA32_UMWAIT_CONTROL) expires; the loop sorts out which.
TEXT ·waitUmwait(SB), NOSPLIT, $0-25
	MOVQ addr+0(FP), DI
	MOVL old+8(FP), SI
	MOVQ deadline+16(FP), R8

loop:
	CMPL (DI), SI
	JNE  changed

	// UMONITOR DI
	BYTE $0xF3; BYTE $0x0F; BYTE $0xAE; BYTE $0xF7
	CMPL (DI), SI
	JNE  changed
	MOVQ R8, AX
	MOVQ R8, DX
	SHRQ $32, DX
	MOVL $1, CX

	// UMWAIT CX
	BYTE $0xF2; BYTE $0x0F; BYTE $0xAE; BYTE $0xF1
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	CMPQ AX, R8
	JB   loop
	CMPL (DI), SI
	JNE  changed
	MOVB $0, ret+24(FP)
	RET

changed:
	MOVB $1, ret+24(FP)
	RET

// func waitMwaitx(addr *uint32, old uint32, deadline uint64) bool
// MONITORX arms the monitor on the line at AX; the word is re-read for the
// same reason as above. MWAITX with ECX bit 1 set sleeps at most EBX TSC
// ticks; EAX 0xF0 asks for no C-state (stay in C0, the fastest wake), the
// hint Linux uses for its MWAITX delay loop.
TEXT ·waitMwaitx(SB), NOSPLIT, $0-25
	MOVQ addr+0(FP), DI
	MOVL old+8(FP), SI
	MOVQ deadline+16(FP), R8

loop:
	CMPL (DI), SI
	JNE  changed
	MOVQ DI, AX
	XORL CX, CX
	XORL DX, DX

	// MONITORX
	BYTE $0x0F; BYTE $0x01; BYTE $0xFA
	CMPL (DI), SI
	JNE  changed
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	CMPQ AX, R8
	JAE  timeout
	MOVQ R8, BX
	SUBQ AX, BX
	MOVL $0xFFFFFFFF, R9
	CMPQ BX, R9
	CMOVQHI R9, BX
	MOVL $0xF0, AX
	MOVL $2, CX

	// MWAITX
	BYTE $0x0F; BYTE $0x01; BYTE $0xFB
	JMP  loop

timeout:
	MOVB $0, ret+24(FP)
	RET

changed:
	MOVB $1, ret+24(FP)
	RET

// The Words ring (an SPSC[uint64]): push, pop and their batch forms.
// Field offsets of SPSC[uint64] with 64-byte lines; TestWordsLayout checks
// them against unsafe.Offsetof.
#define Q_TAIL 64
#define Q_HEADCACHE 72
#define Q_HEAD 128
#define Q_TAILCACHE 136
#define Q_BUF 192
#define Q_MASK 216

// Ordering (x86-TSO): the producer's slot store precedes its LOCK
// CMPXCHG on tail, which is a full barrier, so a consumer that sees the
// new tail sees the slot. The consumer's slot load precedes its plain
// store to head, and TSO keeps a load before a later store, so the
// producer cannot overwrite a slot the consumer has not read yet.

// func wordPush(q *SPSC[uint64], v uint64) uint8
TEXT ·wordPush(SB), NOSPLIT, $0-17
	MOVQ q+0(FP), DI
	MOVQ Q_TAIL(DI), AX
	BTQ  $63, AX
	JCS  closed
	MOVQ Q_MASK(DI), R9
	MOVQ AX, CX
	SUBQ Q_HEADCACHE(DI), CX
	CMPQ CX, R9
	JLS  room

	// The cached head says full: look at the real one.
	MOVQ Q_HEAD(DI), R8
	MOVQ R8, Q_HEADCACHE(DI)
	MOVQ AX, CX
	SUBQ R8, CX
	CMPQ CX, R9
	JHI  full

room:
	MOVQ R9, R10
	ANDQ AX, R10
	MOVQ Q_BUF(DI), R11
	MOVQ v+8(FP), DX
	MOVQ DX, (R11)(R10*8)
	LEAQ 1(AX), R12

	// Publish; fails only if Close set the closed bit since the load.
	LOCK
	CMPXCHGQ R12, Q_TAIL(DI)
	JNE      closed
	MOVB     $const_stOK, ret+16(FP)
	RET

closed:
	MOVB $const_stClosed, ret+16(FP)
	RET

full:
	MOVB $const_stFull, ret+16(FP)
	RET

// func wordPop(q *SPSC[uint64]) (v uint64, st uint8)
TEXT ·wordPop(SB), NOSPLIT, $0-17
	MOVQ q+0(FP), DI
	MOVQ Q_HEAD(DI), AX
	CMPQ AX, Q_TAILCACHE(DI)
	JNE  have

	// The cached tail says empty: look at the real one.
	MOVQ Q_TAIL(DI), CX
	MOVQ CX, DX
	BTRQ $63, DX
	MOVQ DX, Q_TAILCACHE(DI)
	CMPQ AX, DX
	JNE  have
	MOVQ $0, v+8(FP)
	BTQ  $63, CX
	JCS  drained
	MOVB $const_stEmpty, st+16(FP)
	RET

drained:
	MOVB $const_stDrained, st+16(FP)
	RET

have:
	MOVQ Q_MASK(DI), R9
	ANDQ AX, R9
	MOVQ Q_BUF(DI), R11
	MOVQ (R11)(R9*8), R10
	MOVQ R10, v+8(FP)
	INCQ AX
	MOVQ AX, Q_HEAD(DI)
	MOVB $const_stOK, st+16(FP)
	RET

// func wordPushBatch(q *SPSC[uint64], vs []uint64) uint64
TEXT ·wordPushBatch(SB), NOSPLIT, $0-40
	MOVQ  q+0(FP), DI
	MOVQ  vs_base+8(FP), SI
	MOVQ  vs_len+16(FP), BX
	TESTQ BX, BX
	JZ    none
	MOVQ  Q_TAIL(DI), AX
	BTQ   $63, AX
	JCS   none
	MOVQ  Q_MASK(DI), R9
	LEAQ  1(R9), R13
	MOVQ  AX, CX
	SUBQ  Q_HEADCACHE(DI), CX
	MOVQ  R13, R14
	SUBQ  CX, R14
	CMPQ  R14, BX
	JCC   enough
	MOVQ  Q_HEAD(DI), R8
	MOVQ  R8, Q_HEADCACHE(DI)
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
	MOVQ  Q_BUF(DI), R11
	XORQ  CX, CX

copy:
	LEAQ (AX)(CX*1), R10
	ANDQ R9, R10
	MOVQ (SI)(CX*8), DX
	MOVQ DX, (R11)(R10*8)
	INCQ CX
	CMPQ CX, BX
	JCS  copy
	LEAQ (AX)(BX*1), R12
	LOCK
	CMPXCHGQ R12, Q_TAIL(DI)
	JNE      none
	MOVQ     BX, ret+32(FP)
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
	MOVQ  Q_HEAD(DI), AX
	MOVQ  Q_TAILCACHE(DI), CX
	SUBQ  AX, CX
	CMPQ  CX, BX
	JCC   enough
	MOVQ  Q_TAIL(DI), DX
	BTRQ  $63, DX
	MOVQ  DX, Q_TAILCACHE(DI)
	MOVQ  DX, CX
	SUBQ  AX, CX

enough:
	CMPQ  BX, CX
	JLS   counted
	MOVQ  CX, BX

counted:
	TESTQ BX, BX
	JZ    none
	MOVQ  Q_MASK(DI), R9
	MOVQ  Q_BUF(DI), R11
	XORQ  CX, CX

copy:
	LEAQ (AX)(CX*1), R10
	ANDQ R9, R10
	MOVQ (R11)(R10*8), DX
	MOVQ DX, (SI)(CX*8)
	INCQ CX
	CMPQ CX, BX
	JCS  copy
	ADDQ BX, AX
	MOVQ AX, Q_HEAD(DI)
	MOVQ BX, ret+32(FP)
	RET

none:
	MOVQ $0, ret+32(FP)
	RET
