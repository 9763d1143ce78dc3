package knit

import (
	"context"
	"unsafe"
)

// A call whose ctx is already done does nothing and returns ctx.Err():
// every ring call, Event.Wait, Select, the pool and shm follow that rule,
// so a pipeline started on an expired ctx moves nothing. The check sits
// on the fast path of every blocking call, so it must be cheap: most hot
// loops pass context.Background() or TODO(), whose Err is always nil, and
// ctxErr recognises those by the interface's type word (a load and two
// compares) instead of calling Err through the interface. A cancellable
// ctx still pays its Err (BENCHMARKS.md, "Done contexts").
func ctxErr(ctx context.Context) error {
	if tw := *(*unsafe.Pointer)(unsafe.Pointer(&ctx)); tw == bgType || tw == todoType {
		return nil
	}
	return ctx.Err()
}

// ifaceType is the type word of a non-empty interface (its itab): one per
// concrete type in a binary, so equal type words mean equal dynamic types.
func ifaceType(ctx context.Context) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&ctx))
}

var (
	bgType   = ifaceType(context.Background())
	todoType = ifaceType(context.TODO())
)
