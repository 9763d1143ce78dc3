// Package relstore is the release store: a store that makes every earlier
// write of the storing goroutine visible to a reader that loads the
// stored value (with sync/atomic), and that, unlike sync/atomic's Store,
// does not wait for the cache line before the storer moves on.
//
// On amd64 sync/atomic's Store is an XCHG, a locked instruction that
// drains the store buffer and waits for the line to be owned; under
// x86-TSO a plain MOV is already a release, so Store is a MOV there
// (relstore_amd64.s). On arm64 sync/atomic's Store is the STLR release
// store itself, inlined. Elsewhere, under the race detector (which needs
// sync/atomic's happens-before edges) and with -tags purego, Store is
// sync/atomic's.
//
// A release store is not a fence: a later load of the same goroutine may
// be satisfied before the store is visible (amd64's store buffer). Use it
// where nothing depends on that order: a word one goroutine owns and
// others only read (a counter), or a publication whose store-then-load
// order is argued separately (knit's doorbell modes). Where it does
// depend on it, Fence between the store and the load restores it.
//
// Hint is the same store for a word one goroutine owns and others read
// for a recent value, with nothing ordered by it (a position only a
// length reads): inlined, where Store is a call on amd64. A
// reader's sync/atomic Load sees the value Hint stored or an earlier one:
// Go's memory model lets a word-sized race read no value that was never
// written. Under the race detector it is sync/atomic's Store, like Store.
package relstore
