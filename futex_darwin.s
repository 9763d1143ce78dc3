//go:build darwin && !knit_futex_fallback

#include "textflag.h"

// libSystem trampolines for futex_darwin.go, in the shape of
// golang.org/x/sys/unix's: the dynamic linker resolves libc___ulock_*,
// the trampolines jump there, and the Go side calls them through the
// runtime's syscall6. The same text assembles for amd64 and arm64.

TEXT libc___ulock_wait2_trampoline<>(SB), NOSPLIT, $0-0
	JMP libc___ulock_wait2(SB)

GLOBL ·libc___ulock_wait2_trampoline_addr(SB), RODATA, $8
DATA ·libc___ulock_wait2_trampoline_addr(SB)/8, $libc___ulock_wait2_trampoline<>(SB)

TEXT libc___ulock_wake_trampoline<>(SB), NOSPLIT, $0-0
	JMP libc___ulock_wake(SB)

GLOBL ·libc___ulock_wake_trampoline_addr(SB), RODATA, $8
DATA ·libc___ulock_wake_trampoline_addr(SB)/8, $libc___ulock_wake_trampoline<>(SB)
