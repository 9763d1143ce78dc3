package pool

import (
	"errors"
	"fmt"

	"github.com/knit-go/knit"
)

// ErrClosed is returned once the pool is closed by Go and GoContext, by
// Future.Wait for a call the pool did not accept or abandoned, and by
// Group.Wait and Map when a task of theirs was refused or abandoned.
// errors.Is(ErrClosed, knit.ErrClosed) is true as well, so code that
// handles a closed ring handles a closed pool.
var ErrClosed error = closedError{}

type closedError struct{}

func (closedError) Error() string        { return "pool: closed" }
func (closedError) Is(target error) bool { return target == knit.ErrClosed }

// ErrFutureUsed is returned by Future.Wait when the future's value was
// already taken by an earlier Wait (the slot behind it has been recycled).
var ErrFutureUsed = errors.New("pool: future already used")

// ErrZeroFuture is returned by Future.Wait, and WaitAll, for the zero
// Future, which no call stands behind.
var ErrZeroFuture = errors.New("pool: zero Future: no call behind it")

// errFull is TryGo's internal "no room", never returned to callers.
var errFull = errors.New("pool: full")

// PanicError is the error Future.Wait, Group.Wait and Map return when a
// task panicked. The worker that ran it survives.
type PanicError struct {
	// Value is what the task passed to panic.
	Value any
	// Stack is the panicking goroutine's stack, from runtime/debug.Stack.
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("pool: task panicked: %v", e.Value) }

// Unwrap returns Value when it is an error, so that errors.Is and
// errors.As see through a panic(err).
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// goexitValue is PanicError.Value for a task that called runtime.Goexit:
// the call cannot be stopped, so its worker goroutine ends and a
// replacement takes over, and the task's future fails with this.
const goexitValue = "task called runtime.Goexit"

// ShutdownError is returned by Shutdown when its context ended before the
// workers finished. Tasks still queued at that moment were not run:
// their futures fail with ErrClosed, and Abandoned counts them. Tasks that
// were running keep running; Close waits for them. Calls that travel
// together (a CallBatch, or a stream of Calls: see Task.Call) and wait
// behind a call that was running do not run either: they fail with
// ErrClosed when that call returns, and count in Stats.Abandoned then,
// not in Abandoned.
type ShutdownError struct {
	Abandoned int
	Err       error // the context's error
}

func (e *ShutdownError) Error() string {
	return fmt.Sprintf("pool: shutdown: %v (%d queued tasks abandoned)", e.Err, e.Abandoned)
}

// Unwrap returns the context's error.
func (e *ShutdownError) Unwrap() error { return e.Err }
