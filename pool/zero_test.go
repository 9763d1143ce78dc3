package pool

import (
	"context"
	"errors"
	"slices"

	"strings"
	"testing"
	"time"
)

// TestZeroFuture: the zero Future stands for no call. Its Wait reports
// ErrZeroFuture, not ErrFutureUsed (it was never used), and its Done is a
// nil channel, so a select case on it never fires, as with a nil channel.
func TestZeroFuture(t *testing.T) {
	var zero Future[int]
	ctx := context.Background()
	if _, err := zero.Wait(ctx); !errors.Is(err, ErrZeroFuture) || errors.Is(err, ErrFutureUsed) {
		t.Fatalf("zero Future's Wait = %v, want ErrZeroFuture", err)
	}
	out := make([]int, 1)
	if n, err := WaitAll(ctx, []Future[int]{zero}, out); n != 1 || !errors.Is(err, ErrZeroFuture) {
		t.Fatalf("WaitAll over a zero Future = %d, %v", n, err)
	}
	if c := zero.Done(); c != nil {
		t.Fatalf("zero Future's Done = %v, want a nil channel", c)
	}
	// The idiom: a zero Future disables its case.
	p := New(Config{Workers: 1})
	defer p.Close()
	f := Submit(ctx, p, func() (int, error) { return 7, nil })
	got := 0
	for f != (Future[int]{}) {
		select {
		case <-f.Done():
			v, err := f.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got = v
			f = Future[int]{}
		case <-zero.Done():
			t.Fatal("a zero Future's Done fired")
		case <-time.After(10 * time.Second):
			t.Fatal("Done never fired")
		}
	}
	if got != 7 {
		t.Fatalf("got %d", got)
	}
	// A refused call is not the zero Future: it reports ErrClosed, and its
	// Done is closed.
	p.Close()
	r := NewTask(p, func(x int) int { return x }).Call(1)
	if _, err := r.Wait(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("refused call's Wait = %v", err)
	}
	select {
	case <-r.Done():
	default:
		t.Fatal("refused call's Done is not closed")
	}
}

// TestNilPoolPanics: every constructor that takes a *Pool panics with a
// message naming it when given nil, not with a nil dereference.
func TestNilPoolPanics(t *testing.T) {
	ctx := context.Background()
	id := func(x int) (int, error) { return x, nil }

	for name, f := range map[string]func(){
		"Map":             func() { Map(ctx, nil, []int{1}, id) },
		"MapSeq":          func() { MapSeq(ctx, nil, slices.Values([]int{1}), id) },
		"MapStream":       func() { MapStream(ctx, nil, slices.Values([]int{1}), id) },
		"NewGroupCollect": func() { NewGroupCollect(ctx, nil) },
		"Submit":          func() { Submit(ctx, nil, func() (int, error) { return 0, nil }) },
		"NewTask":         func() { NewTask(nil, func(x int) int { return x }) },
		"NewGroup":        func() { NewGroup(ctx, nil) },
	} {
		func() {
			defer func() {
				msg, _ := recover().(string)
				if !strings.HasPrefix(msg, "pool: "+name) || !strings.Contains(msg, "nil *Pool") {
					t.Errorf("%s with a nil *Pool panicked with %q, want a message naming it", name, msg)
				}
			}()
			f()
		}()
	}
}
