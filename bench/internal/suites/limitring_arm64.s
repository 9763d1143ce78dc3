#include "go_asm.h"
#include "textflag.h"

// The all-assembly limit rows on arm64: knit's SPSC layout (limitRing),
// each item a slot store and an STLR of the index; the other side's index
// is read with LDAR when the cached copy says full (empty), so the slot
// accesses are ordered as in knit's Words. Every loop polls at most spins
// times per item before it returns, so Go can preempt the thread.

// func limitPush32(r *limitRing, n, spins uint64) uint64
TEXT ·limitPush32(SB), NOSPLIT, $0-32
	MOVD r+0(FP), R0
	MOVD n+8(FP), R1
	MOVD spins+16(FP), R2
	MOVD limitRing_mask(R0), R9
	MOVD limitRing_buf(R0), R11
	MOVD limitRing_tail(R0), R4
	MOVD limitRing_headCache(R0), R8
	ADD  $limitRing_tail, R0, R5
	ADD  $limitRing_head, R0, R6
	MOVD $0, R3

next:
	CMP  R1, R3
	BHS  done
	MOVD R2, R13

try:
	SUB  R8, R4, R7
	CMP  R9, R7
	BLS  room
	LDAR (R6), R8
	SUB  R8, R4, R7
	CMP  R9, R7
	BLS  room
	SUBS $1, R13, R13
	BNE  try
	B    done

room:
	AND  R9, R4, R10
	MOVW R4, (R11)(R10<<2)
	ADD  $1, R4, R4
	STLR R4, (R5)
	ADD  $1, R3, R3
	B    next

done:
	MOVD R8, limitRing_headCache(R0)
	MOVD R3, ret+24(FP)
	RET

// func limitPop32(r *limitRing, n, spins uint64) (got, bad uint64)
TEXT ·limitPop32(SB), NOSPLIT, $0-40
	MOVD r+0(FP), R0
	MOVD n+8(FP), R1
	MOVD spins+16(FP), R2
	MOVD limitRing_mask(R0), R9
	MOVD limitRing_buf(R0), R11
	MOVD limitRing_head(R0), R4
	MOVD limitRing_tailCache(R0), R8
	ADD  $limitRing_tail, R0, R5
	ADD  $limitRing_head, R0, R6
	MOVD $0, R3
	MOVD $0, R14

next:
	CMP  R1, R3
	BHS  done
	MOVD R2, R13

try:
	CMP  R8, R4
	BNE  have
	LDAR (R5), R8
	CMP  R8, R4
	BNE  have
	SUBS $1, R13, R13
	BNE  try
	B    done

have:
	AND  R9, R4, R10
	MOVWU (R11)(R10<<2), R7
	CMPW R4, R7
	BEQ  ok
	ADD  $1, R14, R14

ok:
	ADD  $1, R4, R4
	STLR R4, (R6)
	ADD  $1, R3, R3
	B    next

done:
	MOVD R8, limitRing_tailCache(R0)
	MOVD R3, got+24(FP)
	MOVD R14, bad+32(FP)
	RET

// func limitPing32(req, rep *limitRing, n, spins, pending uint64) (trips, stillPending, bad uint64)
TEXT ·limitPing32(SB), NOSPLIT, $0-64
	MOVD req+0(FP), R0
	MOVD rep+8(FP), R1
	MOVD n+16(FP), R2
	MOVD spins+24(FP), R12
	MOVD $0, R3
	MOVD $0, R14
	MOVD limitRing_tail(R0), R4
	MOVD limitRing_head(R1), R8
	ADD  $limitRing_tail, R0, R5
	ADD  $limitRing_tail, R1, R6
	ADD  $limitRing_head, R1, R7
	MOVD pending+32(FP), R9
	CBNZ R9, wait

trip:
	CMP  R2, R3
	BHS  done

	// Send position R4 on req; one request is out at a time, so there is
	// room, but the check is a push's.
	MOVD limitRing_headCache(R0), R10
	SUB  R10, R4, R10
	MOVD limitRing_mask(R0), R9
	CMP  R9, R10
	BLS  room
	ADD  $limitRing_head, R0, R10
	LDAR (R10), R10
	MOVD R10, limitRing_headCache(R0)

room:
	MOVD limitRing_mask(R0), R9
	AND  R9, R4, R10
	MOVD limitRing_buf(R0), R11
	MOVW R4, (R11)(R10<<2)
	ADD  $1, R4, R4
	STLR R4, (R5)

wait:
	MOVD R12, R13

poll:
	MOVD limitRing_tailCache(R1), R10
	CMP  R10, R8
	BNE  have
	LDAR (R6), R10
	MOVD R10, limitRing_tailCache(R1)
	CMP  R10, R8
	BNE  have
	SUBS $1, R13, R13
	BNE  poll
	MOVD $1, R10
	MOVD R10, stillPending+48(FP)
	B    out

have:
	MOVD limitRing_mask(R1), R9
	AND  R9, R8, R10
	MOVD limitRing_buf(R1), R11
	MOVWU (R11)(R10<<2), R15
	ADD  $1, R8, R8
	CMPW R8, R15
	BEQ  ok
	ADD  $1, R14, R14

ok:
	STLR R8, (R7)
	ADD  $1, R3, R3
	B    trip

done:
	MOVD ZR, stillPending+48(FP)

out:
	MOVD R3, trips+40(FP)
	MOVD R14, bad+56(FP)
	RET

// func limitPong32(req, rep *limitRing, spins uint64) uint64
TEXT ·limitPong32(SB), NOSPLIT, $0-32
	MOVD req+0(FP), R0
	MOVD rep+8(FP), R1
	MOVD spins+16(FP), R12
	MOVD $0, R3
	MOVD limitRing_head(R0), R8
	MOVD limitRing_tail(R1), R4
	ADD  $limitRing_tail, R0, R5
	ADD  $limitRing_head, R0, R6
	ADD  $limitRing_tail, R1, R7

serve:
	MOVD R12, R13

poll:
	MOVD limitRing_tailCache(R0), R10
	CMP  R10, R8
	BNE  have
	LDAR (R5), R10
	MOVD R10, limitRing_tailCache(R0)
	CMP  R10, R8
	BNE  have
	SUBS $1, R13, R13
	BNE  poll
	MOVD R3, ret+24(FP)
	RET

have:
	MOVD limitRing_mask(R0), R9
	AND  R9, R8, R10
	MOVD limitRing_buf(R0), R11
	MOVWU (R11)(R10<<2), R15
	ADD  $1, R8, R8
	STLR R8, (R6)
	ADD  $1, R15, R15

	// Answer on rep: room, as for the request.
	MOVD limitRing_headCache(R1), R10
	SUB  R10, R4, R10
	MOVD limitRing_mask(R1), R9
	CMP  R9, R10
	BLS  room
	ADD  $limitRing_head, R1, R10
	LDAR (R10), R10
	MOVD R10, limitRing_headCache(R1)

room:
	MOVD limitRing_mask(R1), R9
	AND  R9, R4, R10
	MOVD limitRing_buf(R1), R11
	MOVW R15, (R11)(R10<<2)
	ADD  $1, R4, R4
	STLR R4, (R7)
	ADD  $1, R3, R3
	B    serve

// func limitPush64(r *limitRing, n, spins uint64) uint64
TEXT ·limitPush64(SB), NOSPLIT, $0-32
	MOVD r+0(FP), R0
	MOVD n+8(FP), R1
	MOVD spins+16(FP), R2
	MOVD limitRing_mask(R0), R9
	MOVD limitRing_buf(R0), R11
	MOVD limitRing_tail(R0), R4
	MOVD limitRing_headCache(R0), R8
	ADD  $limitRing_tail, R0, R5
	ADD  $limitRing_head, R0, R6
	MOVD $0, R3

next:
	CMP  R1, R3
	BHS  done
	MOVD R2, R13

try:
	SUB  R8, R4, R7
	CMP  R9, R7
	BLS  room
	LDAR (R6), R8
	SUB  R8, R4, R7
	CMP  R9, R7
	BLS  room
	SUBS $1, R13, R13
	BNE  try
	B    done

room:
	AND  R9, R4, R10
	MOVD R4, (R11)(R10<<3)
	ADD  $1, R4, R4
	STLR R4, (R5)
	ADD  $1, R3, R3
	B    next

done:
	MOVD R8, limitRing_headCache(R0)
	MOVD R3, ret+24(FP)
	RET

// func limitPop64(r *limitRing, n, spins uint64) (got, bad uint64)
TEXT ·limitPop64(SB), NOSPLIT, $0-40
	MOVD r+0(FP), R0
	MOVD n+8(FP), R1
	MOVD spins+16(FP), R2
	MOVD limitRing_mask(R0), R9
	MOVD limitRing_buf(R0), R11
	MOVD limitRing_head(R0), R4
	MOVD limitRing_tailCache(R0), R8
	ADD  $limitRing_tail, R0, R5
	ADD  $limitRing_head, R0, R6
	MOVD $0, R3
	MOVD $0, R14

next:
	CMP  R1, R3
	BHS  done
	MOVD R2, R13

try:
	CMP  R8, R4
	BNE  have
	LDAR (R5), R8
	CMP  R8, R4
	BNE  have
	SUBS $1, R13, R13
	BNE  try
	B    done

have:
	AND  R9, R4, R10
	MOVD (R11)(R10<<3), R7
	CMP R4, R7
	BEQ  ok
	ADD  $1, R14, R14

ok:
	ADD  $1, R4, R4
	STLR R4, (R6)
	ADD  $1, R3, R3
	B    next

done:
	MOVD R8, limitRing_tailCache(R0)
	MOVD R3, got+24(FP)
	MOVD R14, bad+32(FP)
	RET

// func limitPushLine(r *limitRing, n, spins uint64) uint64
// limitPush64 for 64-byte items: the item's eight words each hold its
// position, in a 64-byte slot (a line of its own on 64-byte-line
// cores).
TEXT ·limitPushLine(SB), NOSPLIT, $0-32
	MOVD r+0(FP), R0
	MOVD n+8(FP), R1
	MOVD spins+16(FP), R2
	MOVD limitRing_mask(R0), R9
	MOVD limitRing_buf(R0), R11
	MOVD limitRing_tail(R0), R4
	MOVD limitRing_headCache(R0), R8
	ADD  $limitRing_tail, R0, R5
	ADD  $limitRing_head, R0, R6
	MOVD $0, R3

next:
	CMP  R1, R3
	BHS  done
	MOVD R2, R13

try:
	SUB  R8, R4, R7
	CMP  R9, R7
	BLS  room
	LDAR (R6), R8
	SUB  R8, R4, R7
	CMP  R9, R7
	BLS  room
	SUBS $1, R13, R13
	BNE  try
	B    done

room:
	AND  R9, R4, R10
	ADD  R10<<6, R11, R10
	STP  (R4, R4), 0(R10)
	STP  (R4, R4), 16(R10)
	STP  (R4, R4), 32(R10)
	STP  (R4, R4), 48(R10)
	ADD  $1, R4, R4
	STLR R4, (R5)
	ADD  $1, R3, R3
	B    next

done:
	MOVD R8, limitRing_headCache(R0)
	MOVD R3, ret+24(FP)
	RET

// func limitPopLine(r *limitRing, n, spins uint64) (got, bad uint64)
// limitPop64 for 64-byte items: an item is bad unless all eight words
// hold its position.
TEXT ·limitPopLine(SB), NOSPLIT, $0-40
	MOVD r+0(FP), R0
	MOVD n+8(FP), R1
	MOVD spins+16(FP), R2
	MOVD limitRing_mask(R0), R9
	MOVD limitRing_buf(R0), R11
	MOVD limitRing_head(R0), R4
	MOVD limitRing_tailCache(R0), R8
	ADD  $limitRing_tail, R0, R5
	ADD  $limitRing_head, R0, R6
	MOVD $0, R3
	MOVD $0, R14

next:
	CMP  R1, R3
	BHS  done
	MOVD R2, R13

try:
	CMP  R8, R4
	BNE  have
	LDAR (R5), R8
	CMP  R8, R4
	BNE  have
	SUBS $1, R13, R13
	BNE  try
	B    done

have:
	AND  R9, R4, R10
	ADD  R10<<6, R11, R10
	LDP  0(R10), (R15, R12)
	EOR  R4, R15, R7
	EOR  R4, R12, R12
	ORR  R12, R7, R7
	LDP  16(R10), (R15, R12)
	EOR  R4, R15, R15
	ORR  R15, R7, R7
	EOR  R4, R12, R12
	ORR  R12, R7, R7
	LDP  32(R10), (R15, R12)
	EOR  R4, R15, R15
	ORR  R15, R7, R7
	EOR  R4, R12, R12
	ORR  R12, R7, R7
	LDP  48(R10), (R15, R12)
	EOR  R4, R15, R15
	ORR  R15, R7, R7
	EOR  R4, R12, R12
	ORR  R12, R7, R7
	CBZ  R7, ok
	ADD  $1, R14, R14

ok:
	ADD  $1, R4, R4
	STLR R4, (R6)
	ADD  $1, R3, R3
	B    next

done:
	MOVD R8, limitRing_tailCache(R0)
	MOVD R3, got+24(FP)
	MOVD R14, bad+32(FP)
	RET
