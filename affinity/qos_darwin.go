package affinity

import (
	"fmt"
	"syscall"
	_ "unsafe" // for go:linkname
)

// SetQoS sets the QoS class of the calling OS thread, with
// pthread_set_qos_class_self_np. The class stays with the thread, not the
// goroutine: lock the goroutine to its thread first (runtime.LockOSThread)
// and keep it locked, or the class lands on a thread that other
// goroutines will share.
func SetQoS(class QoSClass) error {
	r, _, _ := syscall_syscall(libc_pthread_set_qos_class_self_np_trampoline_addr, uintptr(class), 0, 0)
	// The C function returns an int error number, not -1 and errno; only
	// its low 32 bits are defined.
	if e := int32(r); e != 0 {
		return fmt.Errorf("affinity: pthread_set_qos_class_self_np(%#x): %w", uint32(class), syscall.Errno(e))
	}
	return nil
}

// The call goes through libSystem, as darwin requires of every program,
// without cgo: the same way golang.org/x/sys/unix does. syscall.syscall
// is the runtime's libc call wrapper; the trampoline in qos_darwin.s
// jumps to the dynamically imported function.

//go:linkname syscall_syscall syscall.syscall
func syscall_syscall(fn, a1, a2, a3 uintptr) (r1, r2 uintptr, err syscall.Errno)

var libc_pthread_set_qos_class_self_np_trampoline_addr uintptr

//go:cgo_import_dynamic libc_pthread_set_qos_class_self_np pthread_set_qos_class_self_np "/usr/lib/libSystem.B.dylib"
