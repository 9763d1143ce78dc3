package suites

import (
	"github.com/knit-go/knit/bench/internal/harness"
	"github.com/knit-go/knit/pool"
)

// The knit pool's rows in payload: a one-worker pool (default policy)
// with a task that checksums its payload. The batch is batch Calls, then
// batch Waits (a Call per message, as the row's name says); like a
// channel, a Call moves the string or slice header, never the bytes, so
// the worker reads the caller's memory.
//
// A knit row differs from its channel row only in the handoff, which
// matters at the small sizes and vanishes behind the checksum at the
// large ones; every size has its knit rows, in quick mode too.
func payloadKnitRows(cfg harness.Config) []harness.Row {
	rows := payloadRows(cfg, "knit", startKnitPayload[string], startKnitPayload[[]byte])
	for i := range rows {
		rows[i].Name += callPerMessage
	}
	return rows
}

func startKnitPayload[P string | []byte](batch int) (payloadWorker[P], error) {
	return startKnitCalls(pool.Config{Workers: 1, QueueSize: batch}, batch, checksum[P]), nil
}
