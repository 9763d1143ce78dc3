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
