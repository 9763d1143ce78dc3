#include "go_asm.h"
#include "textflag.h"

// The all-assembly limit rows: knit's SPSC layout (limitRing), each item a
// slot store and a release store of the index, each side re-reading the
// other's index only when its cached copy says full (empty). Under x86-TSO
// a plain MOV store is a release and a plain MOV load an acquire, so no
// fence or locked instruction is needed. Every loop polls at most spins
// times per item before it returns, so Go can preempt the thread.

// func limitPush32(r *limitRing, n, spins uint64) uint64
TEXT ·limitPush32(SB), NOSPLIT, $0-32
	MOVQ r+0(FP), DI
	MOVQ n+8(FP), BX
	MOVQ spins+16(FP), R12
	MOVQ limitRing_mask(DI), R9
	MOVQ limitRing_buf(DI), R11
	MOVQ limitRing_tail(DI), AX
	MOVQ limitRing_headCache(DI), R8
	XORQ CX, CX

next:
	CMPQ CX, BX
	JAE  done
	MOVQ R12, R13

try:
	MOVQ AX, DX
	SUBQ R8, DX
	CMPQ DX, R9
	JLS  room
	MOVQ limitRing_head(DI), R8
	MOVQ AX, DX
	SUBQ R8, DX
	CMPQ DX, R9
	JLS  room
	DECQ R13
	JNZ  try
	JMP  done

room:
	MOVQ AX, R10
	ANDQ R9, R10
	MOVL AX, (R11)(R10*4)
	INCQ AX
	MOVQ AX, limitRing_tail(DI)
	INCQ CX
	JMP  next

done:
	MOVQ R8, limitRing_headCache(DI)
	MOVQ CX, ret+24(FP)
	RET

// func limitPop32(r *limitRing, n, spins uint64) (got, bad uint64)
TEXT ·limitPop32(SB), NOSPLIT, $0-40
	MOVQ r+0(FP), DI
	MOVQ n+8(FP), BX
	MOVQ spins+16(FP), R12
	MOVQ limitRing_mask(DI), R9
	MOVQ limitRing_buf(DI), R11
	MOVQ limitRing_head(DI), AX
	MOVQ limitRing_tailCache(DI), R8
	XORQ CX, CX
	XORQ R14, R14

next:
	CMPQ CX, BX
	JAE  done
	MOVQ R12, R13

try:
	CMPQ AX, R8
	JNE  have
	MOVQ limitRing_tail(DI), R8
	CMPQ AX, R8
	JNE  have
	DECQ R13
	JNZ  try
	JMP  done

have:
	MOVQ AX, R10
	ANDQ R9, R10
	MOVL (R11)(R10*4), DX
	CMPL DX, AX
	JEQ  ok
	INCQ R14

ok:
	INCQ AX
	MOVQ AX, limitRing_head(DI)
	INCQ CX
	JMP  next

done:
	MOVQ R8, limitRing_tailCache(DI)
	MOVQ CX, got+24(FP)
	MOVQ R14, bad+32(FP)
	RET

// func limitPing32(req, rep *limitRing, n, spins, pending uint64) (trips, stillPending, bad uint64)
TEXT ·limitPing32(SB), NOSPLIT, $0-64
	MOVQ  req+0(FP), DI
	MOVQ  rep+8(FP), SI
	MOVQ  n+16(FP), BX
	MOVQ  spins+24(FP), R12
	XORQ  CX, CX
	XORQ  R14, R14
	MOVQ  limitRing_tail(DI), AX
	MOVQ  limitRing_head(SI), R8
	MOVQ  pending+32(FP), R9
	TESTQ R9, R9
	JNZ   wait

trip:
	CMPQ CX, BX
	JAE  done

	// Send position AX on req; one request is out at a time, so there is
	// room, but the check is a push's.
	MOVQ AX, DX
	SUBQ limitRing_headCache(DI), DX
	CMPQ DX, limitRing_mask(DI)
	JLS  room
	MOVQ limitRing_head(DI), DX
	MOVQ DX, limitRing_headCache(DI)

room:
	MOVQ limitRing_mask(DI), R9
	ANDQ AX, R9
	MOVQ limitRing_buf(DI), R11
	MOVL AX, (R11)(R9*4)
	INCQ AX
	MOVQ AX, limitRing_tail(DI)

wait:
	MOVQ R12, R13

poll:
	CMPQ R8, limitRing_tailCache(SI)
	JNE  have
	MOVQ limitRing_tail(SI), DX
	MOVQ DX, limitRing_tailCache(SI)
	CMPQ R8, DX
	JNE  have
	DECQ R13
	JNZ  poll
	MOVQ $1, stillPending+48(FP)
	JMP  out

have:
	MOVQ limitRing_mask(SI), R9
	ANDQ R8, R9
	MOVQ limitRing_buf(SI), R11
	MOVL (R11)(R9*4), DX
	LEAQ 1(R8), R10
	CMPL DX, R10
	JEQ  ok
	INCQ R14

ok:
	MOVQ R10, limitRing_head(SI)
	MOVQ R10, R8
	INCQ CX
	JMP  trip

done:
	MOVQ $0, stillPending+48(FP)

out:
	MOVQ CX, trips+40(FP)
	MOVQ R14, bad+56(FP)
	RET

// func limitPong32(req, rep *limitRing, spins uint64) uint64
TEXT ·limitPong32(SB), NOSPLIT, $0-32
	MOVQ req+0(FP), DI
	MOVQ rep+8(FP), SI
	MOVQ spins+16(FP), R12
	XORQ CX, CX
	MOVQ limitRing_head(DI), R8
	MOVQ limitRing_tail(SI), AX

serve:
	MOVQ R12, R13

poll:
	CMPQ R8, limitRing_tailCache(DI)
	JNE  have
	MOVQ limitRing_tail(DI), DX
	MOVQ DX, limitRing_tailCache(DI)
	CMPQ R8, DX
	JNE  have
	DECQ R13
	JNZ  poll
	MOVQ CX, ret+24(FP)
	RET

have:
	MOVQ limitRing_mask(DI), R9
	ANDQ R8, R9
	MOVQ limitRing_buf(DI), R11
	MOVL (R11)(R9*4), DX
	INCQ R8
	MOVQ R8, limitRing_head(DI)
	INCQ DX

	// Answer on rep: room, as for the request.
	MOVQ AX, R10
	SUBQ limitRing_headCache(SI), R10
	CMPQ R10, limitRing_mask(SI)
	JLS  room
	MOVQ limitRing_head(SI), R10
	MOVQ R10, limitRing_headCache(SI)

room:
	MOVQ limitRing_mask(SI), R9
	ANDQ AX, R9
	MOVQ limitRing_buf(SI), R11
	MOVL DX, (R11)(R9*4)
	INCQ AX
	MOVQ AX, limitRing_tail(SI)
	INCQ CX
	JMP  serve

// func limitPush64(r *limitRing, n, spins uint64) uint64
TEXT ·limitPush64(SB), NOSPLIT, $0-32
	MOVQ r+0(FP), DI
	MOVQ n+8(FP), BX
	MOVQ spins+16(FP), R12
	MOVQ limitRing_mask(DI), R9
	MOVQ limitRing_buf(DI), R11
	MOVQ limitRing_tail(DI), AX
	MOVQ limitRing_headCache(DI), R8
	XORQ CX, CX

next:
	CMPQ CX, BX
	JAE  done
	MOVQ R12, R13

try:
	MOVQ AX, DX
	SUBQ R8, DX
	CMPQ DX, R9
	JLS  room
	MOVQ limitRing_head(DI), R8
	MOVQ AX, DX
	SUBQ R8, DX
	CMPQ DX, R9
	JLS  room
	DECQ R13
	JNZ  try
	JMP  done

room:
	MOVQ AX, R10
	ANDQ R9, R10
	MOVQ AX, (R11)(R10*8)
	INCQ AX
	MOVQ AX, limitRing_tail(DI)
	INCQ CX
	JMP  next

done:
	MOVQ R8, limitRing_headCache(DI)
	MOVQ CX, ret+24(FP)
	RET

// func limitPop64(r *limitRing, n, spins uint64) (got, bad uint64)
TEXT ·limitPop64(SB), NOSPLIT, $0-40
	MOVQ r+0(FP), DI
	MOVQ n+8(FP), BX
	MOVQ spins+16(FP), R12
	MOVQ limitRing_mask(DI), R9
	MOVQ limitRing_buf(DI), R11
	MOVQ limitRing_head(DI), AX
	MOVQ limitRing_tailCache(DI), R8
	XORQ CX, CX
	XORQ R14, R14

next:
	CMPQ CX, BX
	JAE  done
	MOVQ R12, R13

try:
	CMPQ AX, R8
	JNE  have
	MOVQ limitRing_tail(DI), R8
	CMPQ AX, R8
	JNE  have
	DECQ R13
	JNZ  try
	JMP  done

have:
	MOVQ AX, R10
	ANDQ R9, R10
	MOVQ (R11)(R10*8), DX
	CMPQ DX, AX
	JEQ  ok
	INCQ R14

ok:
	INCQ AX
	MOVQ AX, limitRing_head(DI)
	INCQ CX
	JMP  next

done:
	MOVQ R8, limitRing_tailCache(DI)
	MOVQ CX, got+24(FP)
	MOVQ R14, bad+32(FP)
	RET

// func limitPushLine(r *limitRing, n, spins uint64) uint64
// limitPush64 for 64-byte items: the item's eight words each hold its
// position, in a 64-byte slot: a line of its own here.
TEXT ·limitPushLine(SB), NOSPLIT, $0-32
	MOVQ r+0(FP), DI
	MOVQ n+8(FP), BX
	MOVQ spins+16(FP), R12
	MOVQ limitRing_mask(DI), R9
	MOVQ limitRing_buf(DI), R11
	MOVQ limitRing_tail(DI), AX
	MOVQ limitRing_headCache(DI), R8
	XORQ CX, CX

next:
	CMPQ CX, BX
	JAE  done
	MOVQ R12, R13

try:
	MOVQ AX, DX
	SUBQ R8, DX
	CMPQ DX, R9
	JLS  room
	MOVQ limitRing_head(DI), R8
	MOVQ AX, DX
	SUBQ R8, DX
	CMPQ DX, R9
	JLS  room
	DECQ R13
	JNZ  try
	JMP  done

room:
	MOVQ AX, R10
	ANDQ R9, R10
	SHLQ $6, R10
	ADDQ R11, R10
	MOVQ AX, 0(R10)
	MOVQ AX, 8(R10)
	MOVQ AX, 16(R10)
	MOVQ AX, 24(R10)
	MOVQ AX, 32(R10)
	MOVQ AX, 40(R10)
	MOVQ AX, 48(R10)
	MOVQ AX, 56(R10)
	INCQ AX
	MOVQ AX, limitRing_tail(DI)
	INCQ CX
	JMP  next

done:
	MOVQ R8, limitRing_headCache(DI)
	MOVQ CX, ret+24(FP)
	RET

// func limitPopLine(r *limitRing, n, spins uint64) (got, bad uint64)
// limitPop64 for 64-byte items: an item is bad unless all eight words
// hold its position.
TEXT ·limitPopLine(SB), NOSPLIT, $0-40
	MOVQ r+0(FP), DI
	MOVQ n+8(FP), BX
	MOVQ spins+16(FP), R12
	MOVQ limitRing_mask(DI), R9
	MOVQ limitRing_buf(DI), R11
	MOVQ limitRing_head(DI), AX
	MOVQ limitRing_tailCache(DI), R8
	XORQ CX, CX
	XORQ R14, R14

next:
	CMPQ CX, BX
	JAE  done
	MOVQ R12, R13

try:
	CMPQ AX, R8
	JNE  have
	MOVQ limitRing_tail(DI), R8
	CMPQ AX, R8
	JNE  have
	DECQ R13
	JNZ  try
	JMP  done

have:
	MOVQ AX, R10
	ANDQ R9, R10
	SHLQ $6, R10
	ADDQ R11, R10
	MOVQ 0(R10), DX
	XORQ AX, DX
	MOVQ 8(R10), SI
	XORQ AX, SI
	ORQ  SI, DX
	MOVQ 16(R10), SI
	XORQ AX, SI
	ORQ  SI, DX
	MOVQ 24(R10), SI
	XORQ AX, SI
	ORQ  SI, DX
	MOVQ 32(R10), SI
	XORQ AX, SI
	ORQ  SI, DX
	MOVQ 40(R10), SI
	XORQ AX, SI
	ORQ  SI, DX
	MOVQ 48(R10), SI
	XORQ AX, SI
	ORQ  SI, DX
	MOVQ 56(R10), SI
	XORQ AX, SI
	ORQ  SI, DX
	JZ   ok
	INCQ R14

ok:
	INCQ AX
	MOVQ AX, limitRing_head(DI)
	INCQ CX
	JMP  next

done:
	MOVQ R8, limitRing_tailCache(DI)
	MOVQ CX, got+24(FP)
	MOVQ R14, bad+32(FP)
	RET
