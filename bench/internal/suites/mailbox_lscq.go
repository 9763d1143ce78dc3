//go:build amd64 || arm64

package suites

import (
	"github.com/bytedance/gopkg/collection/lscq"
	"github.com/knit-go/knit/bench/internal/harness"
)

// lscqRow is bytedance/gopkg's LSCQ beside the Mailbox: an unbounded MPMC
// queue of linked scalable circular queues (Nikolaev's SCQ, with 128-bit
// CAS). Its Dequeue does not wait, so the consumer runs the rings' try
// loop (rings_peers.go). Its assembly exists for amd64 and arm64 only.
func lscqRow(g string, p int) []harness.Row {
	return []harness.Row{{Group: g, Name: "bytedance lscq (unbounded MPMC), try loop", Start: func(harness.Config) (harness.Bench, error) {
		q := lscq.NewUint64()
		return startContended(p, 1,
			func(v uint64) error { q.Enqueue(v); return nil },
			tryPop(q.Dequeue),
			nil), nil
	}}}
}
