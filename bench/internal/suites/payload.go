package suites

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/knit-go/knit/bench/internal/harness"
)

// The payload suite reproduces the "Call growth throughput" table of
// Knitting's Node.js benchmarks page (knittingdocs.netlify.app): payloads from 32 B to 1 MiB, string and []byte, sent in batches of 64
// to a worker that reads every byte (a checksum, returned to the caller).
// A Go channel moves the header, not the bytes, so the GB/s column is how
// fast a worker on another core can read memory it was handed; the 64
// payloads are distinct so a large batch cannot live in one core's cache.
var payloadSuite = harness.Suite{
	Name: "payload",
	Description: "A batch of distinct payloads handed to a worker goroutine; " +
		"the worker checksums every byte and sends the sum back. The floor ([]byte) moves the batch to a worker " +
		"goroutine and back through two bare knit SPSC rings, one PushBatch and PopBatch each way, each side waiting as the pool's do: no pool, no futures.",
	Reproduces: "Knitting's benchmarks (knittingdocs.netlify.app): \"Call growth throughput\": string and Uint8Array, 32..1048576 B x4, batch=64",
	Unit:       "batch of payloads",
	Ref:        "chan []byte",
	Rows: func(cfg harness.Config) []harness.Row {
		chans := payloadRows(cfg, "chan", startChanPayload[string], startChanPayload[[]byte])
		var rows []harness.Row
		for _, size := range payloadSizes(cfg.Scale) {
			if cfg.Scale != harness.Quick || slices.Contains(payloadQuickFloors, size) {
				rows = append(rows, payloadFloorRow(size, payloadBatch(cfg.Scale)))
			}
			for _, r := range chans {
				if r.Group == payloadGroup(size) {
					rows = append(rows, r)
				}
			}
		}
		return rows
	},
}

// payloadQuickFloors are the sizes of quick mode's floor rows: the
// smallest, where the handoff is most of a row's time, one between, and
// the largest, where reading the bytes is. Quick mode keeps every size's
// channel and knit rows and these three floors, which holds the suite
// near its time before the knit rows ran at every size; -full has a
// floor at every size.
var payloadQuickFloors = []int{32, 8192, 1 << 20}

// payloadWorker is one transport's worker: it takes payloads and answers
// each with checksum(p), in any order.
type payloadWorker[P string | []byte] interface {
	send(p P) error
	recv() (uint64, error)
	close() error
}

// payloadRows makes a string row and a []byte row per size, named
// "<kind> string" and "<kind> []byte". Each start function receives the
// batch size (the most payloads in flight).
func payloadRows(cfg harness.Config, kind string,
	startString func(batch int) (payloadWorker[string], error),
	startBytes func(batch int) (payloadWorker[[]byte], error)) []harness.Row {
	batch := payloadBatch(cfg.Scale)
	var rows []harness.Row
	for _, size := range payloadSizes(cfg.Scale) {
		g := payloadGroup(size)
		rows = append(rows,
			payloadRow(g, kind+" string", size, batch, bytesAsString, startString),
			payloadRow(g, kind+" []byte", size, batch, func(b []byte) []byte { return b }, startBytes),
		)
	}
	return rows
}

// bytesAsString views b as a string. The bytes are never written again;
// viewing them saves copying up to 64 MiB per instance.
func bytesAsString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func payloadBatch(s harness.Scale) int {
	if s == harness.Tiny {
		return 4
	}
	return 64
}

// payloadSizes grows by 4 from 32 B and ends at 1 MiB, as the seed does.
func payloadSizes(s harness.Scale) []int {
	if s == harness.Tiny {
		return []int{32, 2048}
	}
	var sizes []int
	for n := 32; n < 1<<20; n *= 4 {
		sizes = append(sizes, n)
	}
	return append(sizes, 1<<20)
}

func payloadGroup(size int) string { return fmt.Sprintf("%d B", size) }

// payloadRow builds batch distinct payloads of size bytes (ASCII, like
// the seed's strings) and their expected checksum, then starts a worker.
//
// Payload i is the alphabet from its (i mod 26)-th letter on, repeated:
// each is a copy of a window of one pattern, and the 26 windows'
// checksums are computed once. An instance at 1 MiB builds its 64 MiB in
// about a quarter of the time a byte loop takes, which every row pays
// once per round, outside its timed window.
func payloadRow[P string | []byte](group, name string, size, batch int, conv func([]byte) P,
	start func(batch int) (payloadWorker[P], error)) harness.Row {
	return harness.Row{
		Group: group,
		Name:  name,
		Bytes: int64(size) * int64(batch),
		Start: func(harness.Config) (harness.Bench, error) {
			p := &payloadBench[P]{}
			pattern := make([]byte, size+26)
			for j := range pattern {
				pattern[j] = byte('a' + j%26)
			}
			var sums [26]uint64
			for i := range batch {
				b := make([]byte, size)
				copy(b, pattern[i%26:])
				if i < 26 {
					sums[i] = checksum(b)
				}
				p.items = append(p.items, conv(b))
				p.want += sums[i%26]
			}
			w, err := start(batch)
			if err != nil {
				return nil, err
			}
			p.w = w
			return p, nil
		},
	}
}

type payloadBench[P string | []byte] struct {
	items []P
	want  uint64
	w     payloadWorker[P]
}

func (p *payloadBench[P]) Run(n int) error {
	for range n {
		for _, v := range p.items {
			if err := p.w.send(v); err != nil {
				return err
			}
		}
		var got uint64
		for range p.items {
			s, err := p.w.recv()
			if err != nil {
				return err
			}
			got += s
		}
		if got != p.want {
			return fmt.Errorf("payload checksum %d, want %d", got, p.want)
		}
	}
	return nil
}

func (p *payloadBench[P]) Close() error { return p.w.close() }

// chanPayload is a worker goroutine between two buffered channels deep
// enough for a whole batch.
type chanPayload[P string | []byte] struct {
	req  chan P
	resp chan uint64
}

func startChanPayload[P string | []byte](batch int) (payloadWorker[P], error) {
	c := &chanPayload[P]{req: make(chan P, batch), resp: make(chan uint64, batch)}
	go func() {
		for v := range c.req {
			c.resp <- checksum(v)
		}
		close(c.resp)
	}()
	return c, nil
}

func (c *chanPayload[P]) send(p P) error        { c.req <- p; return nil }
func (c *chanPayload[P]) recv() (uint64, error) { return <-c.resp, nil }

func (c *chanPayload[P]) close() error {
	close(c.req)
	for range c.resp {
	}
	return nil
}

// checksum reads every byte, eight at a time: the byte-wise little-endian
// pattern compiles to one 64-bit load, so the worker is bound by memory,
// not by a byte loop.
func checksum[P string | []byte](p P) uint64 {
	var sum uint64
	i := 0
	for ; i+8 <= len(p); i += 8 {
		sum += uint64(p[i]) | uint64(p[i+1])<<8 | uint64(p[i+2])<<16 | uint64(p[i+3])<<24 |
			uint64(p[i+4])<<32 | uint64(p[i+5])<<40 | uint64(p[i+6])<<48 | uint64(p[i+7])<<56
	}
	for ; i < len(p); i++ {
		sum += uint64(p[i])
	}
	return sum
}
