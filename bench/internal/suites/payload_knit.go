package suites

import (
	"slices"

	"github.com/knit-go/knit/bench/internal/harness"
	"github.com/knit-go/knit/pool"
)

// The knit pool's rows in payload: a one-worker pool (default policy)
// with a task that checksums its payload. The batch is batch Calls, then
// batch Waits; like a channel, a Call moves the string or slice header,
// never the bytes, so the worker reads the caller's memory.
//
// A knit row differs from its channel row only in the handoff, which
// matters at the small sizes and vanishes behind the checksum at the
// large ones; quick mode keeps three sizes (32 B, 8 KiB, 1 MiB) to stay
// within its time budget, -full runs every size.
func payloadKnitRows(cfg harness.Config) []harness.Row {
	var rows []harness.Row
	for _, r := range payloadRows(cfg, "knit", startKnitPayload[string], startKnitPayload[[]byte]) {
		if cfg.Scale != harness.Quick || slices.Contains(knitQuickPayloads, r.Group) {
			rows = append(rows, r)
		}
	}
	return rows
}

// knitQuickPayloads are the payload groups of quick mode's knit rows.
var knitQuickPayloads = []string{payloadGroup(32), payloadGroup(8192), payloadGroup(1 << 20)}

func startKnitPayload[P string | []byte](batch int) (payloadWorker[P], error) {
	return startKnitCalls(pool.Config{Workers: 1, QueueSize: batch}, batch, checksum[P]), nil
}
