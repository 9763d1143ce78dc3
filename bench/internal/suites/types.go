package suites

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/knit-go/knit/bench/internal/harness"
)

// The types suite reproduces the "All types" tables of Knitting's
// Node.js benchmarks page (knittingdocs.netlify.app): values of common Go
// types sent to a worker and back, one at a time (count 1) and
// in batches (count 100). A channel carries Go values by copy of the
// element (a string or slice header, a map or pointer word), so the table
// reads the element size and the interface boxing, not serialization.
var typesSuite = harness.Suite{
	Name: "types",
	Description: "A value of each type sent to a worker goroutine and echoed back; " +
		"count values per round trip. The floor (int) moves the count values to a worker goroutine and back " +
		"through two bare knit SPSC rings, one PushBatch and PopBatch each way, each side waiting as the pool's do: no pool, no futures.",
	Reproduces:  "Knitting's benchmarks (knittingdocs.netlify.app): \"All types in Knitting\": knitting-types 1 and 100",
	Unit:        "round trip of count values",
	Ref:         "chan int",
	PlotRowsOnX: true,
	Rows: func(cfg harness.Config) []harness.Row {
		var rows []harness.Row
		for _, count := range typeCounts(cfg.Scale) {
			rows = append(rows, typesFloorRow(count))
			for _, r := range chanTypeRows(count) {
				if cfg.Scale != harness.Quick || slices.Contains(chanQuickTypes, r.Name) {
					rows = append(rows, r)
				}
			}
		}
		return rows
	},
}

// chanQuickTypes are the channel rows of quick mode: the types the knit
// rows keep there (see knitQuickTypes), so that each knit row has its
// channel row in the same table, and the run stays within its two
// minutes. -full runs every type.
var chanQuickTypes = []string{"chan int", "chan string", "chan struct", "chan []byte"}

func typeCounts(s harness.Scale) []int {
	if s == harness.Tiny {
		return []int{1, 10}
	}
	return []int{1, 100}
}

func typeGroup(count int) string { return fmt.Sprintf("count %d", count) }

// chanTypeRows is the channel transport's rows for one count. Another
// transport copies this list with its own generic start function: Go
// cannot pass a generic function uninstantiated, so each type is a line.
func chanTypeRows(count int) []harness.Row {
	g := typeGroup(count)
	return []harness.Row{
		typeRow(g, "chan int", count, valInt, startChanEcho[int]),
		typeRow(g, "chan bool", count, valBool, startChanEcho[bool]),
		typeRow(g, "chan any(nil)", count, valNil, startChanEcho[any]),
		typeRow(g, "chan string", count, valString, startChanEcho[string]),
		typeRow(g, "chan struct", count, valStruct, startChanEcho[typeSample]),
		typeRow(g, "chan map", count, valMap, startChanEcho[map[string]int]),
		typeRow(g, "chan []byte", count, valBytes, startChanEcho[[]byte]),
		typeRow(g, "chan []float64", count, valFloats, startChanEcho[[]float64]),
		typeRow(g, "chan time.Time", count, time.Now, startChanEcho[time.Time]),
		typeRow(g, "chan error", count, valError, startChanEcho[error]),
		typeRow(g, "chan pointer", count, valPointer, startChanEcho[*typeSample]),
	}
}

// The values, built fresh for each instance. Sizes follow the seed's
// payloads where it gives them (1 KiB typed arrays, a 32-byte string).
func valInt() int       { return 42 }
func valBool() bool     { return true }
func valNil() any       { return nil }
func valString() string { return "knit: a thirty-two byte string." }
func valStruct() typeSample {
	return typeSample{ID: 7, Name: "knit", Score: 0.5, Tags: [4]int32{1, 2, 3, 4}, OK: true}
}
func valMap() map[string]int {
	m := map[string]int{}
	for i := range 8 {
		m[fmt.Sprintf("key%d", i)] = i
	}
	return m
}
func valBytes() []byte        { return make([]byte, 1024) }
func valFloats() []float64    { return make([]float64, 128) }
func valError() error         { return errors.New("knit: sample error") }
func valPointer() *typeSample { return &typeSample{ID: 7} }

// typeSample is the struct row's value: a few fields of mixed kinds.
type typeSample struct {
	ID    int64
	Name  string
	Score float64
	Tags  [4]int32
	OK    bool
}

// typeEcho is one transport's echo worker for values of type T.
type typeEcho[T any] interface {
	send(v T) error
	recv() (T, error)
	close() error
}

// typeRow sends count copies of one value of type T to an echo worker
// and takes them back. start receives count, the most values in flight.
func typeRow[T any](group, name string, count int, value func() T, start func(count int) (typeEcho[T], error)) harness.Row {
	return harness.Row{
		Group: group,
		Name:  name,
		Start: func(harness.Config) (harness.Bench, error) {
			e, err := start(count)
			if err != nil {
				return nil, err
			}
			return &typeBench[T]{v: value(), count: count, e: e}, nil
		},
	}
}

type typeBench[T any] struct {
	v     T
	count int
	e     typeEcho[T]
	sink  T
}

func (b *typeBench[T]) Run(n int) error {
	for range n {
		for range b.count {
			if err := b.e.send(b.v); err != nil {
				return err
			}
		}
		for range b.count {
			v, err := b.e.recv()
			if err != nil {
				return err
			}
			b.sink = v
		}
	}
	return nil
}

func (b *typeBench[T]) Close() error { return b.e.close() }

// chanEcho is a goroutine echoing between two buffered channels deep
// enough for a whole batch.
type chanEcho[T any] struct{ req, resp chan T }

func startChanEcho[T any](count int) (typeEcho[T], error) {
	e := &chanEcho[T]{req: make(chan T, count), resp: make(chan T, count)}
	go func() {
		for x := range e.req {
			e.resp <- x
		}
		close(e.resp)
	}()
	return e, nil
}

func (e *chanEcho[T]) send(v T) error   { e.req <- v; return nil }
func (e *chanEcho[T]) recv() (T, error) { return <-e.resp, nil }

func (e *chanEcho[T]) close() error {
	close(e.req)
	for range e.resp {
	}
	return nil
}
