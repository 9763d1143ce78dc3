package suites

import (
	"slices"
	"time"

	"github.com/knit-go/knit/bench/internal/harness"
	"github.com/knit-go/knit/pool"
)

// The knit pool's rows in types: a typed task that returns its argument,
// on a one-worker pool with the default policy. A round trip of count
// values is count Calls, then count Waits in order (a Call per message,
// as the rows' names say); the value travels in the call's recycled slot
// (argument and result fields of type T), so a row reads the copy of T
// and the handoff, with no boxing.
//
// Every type goes through the same code (a generic slot per call), so
// quick mode keeps four of them (a word, a string header, a 56-byte
// struct, a slice header) to stay within its time budget; -full runs
// every type.
func typesKnitRows(cfg harness.Config) []harness.Row {
	var rows []harness.Row
	for _, count := range typeCounts(cfg.Scale) {
		for _, r := range knitTypeRows(count) {
			if cfg.Scale != harness.Quick || slices.Contains(knitQuickTypes, r.Name) {
				rows = append(rows, r)
			}
		}
	}
	return rows
}

// callPerMessage ends the name of every knit row of types and payload:
// each value is a Call of its own and a Wait of its own, as in ipc-peers'
// "knit pool (1 worker, Call per message)", and not a CallBatch.
const callPerMessage = ", Call per message"

// knitQuickTypes are the knit type rows of quick mode.
var knitQuickTypes = []string{
	"knit int" + callPerMessage, "knit string" + callPerMessage,
	"knit struct" + callPerMessage, "knit []byte" + callPerMessage,
}

// knitTypeRows is chanTypeRows with the knit transport, line for line.
func knitTypeRows(count int) []harness.Row {
	g := typeGroup(count)
	const c = callPerMessage
	return []harness.Row{
		typeRow(g, "knit int"+c, count, valInt, startKnitEcho[int]),
		typeRow(g, "knit bool"+c, count, valBool, startKnitEcho[bool]),
		typeRow(g, "knit any(nil)"+c, count, valNil, startKnitEcho[any]),
		typeRow(g, "knit string"+c, count, valString, startKnitEcho[string]),
		typeRow(g, "knit struct"+c, count, valStruct, startKnitEcho[typeSample]),
		typeRow(g, "knit map"+c, count, valMap, startKnitEcho[map[string]int]),
		typeRow(g, "knit []byte"+c, count, valBytes, startKnitEcho[[]byte]),
		typeRow(g, "knit []float64"+c, count, valFloats, startKnitEcho[[]float64]),
		typeRow(g, "knit time.Time"+c, count, time.Now, startKnitEcho[time.Time]),
		typeRow(g, "knit error"+c, count, valError, startKnitEcho[error]),
		typeRow(g, "knit pointer"+c, count, valPointer, startKnitEcho[*typeSample]),
	}
}

func startKnitEcho[T any](count int) (typeEcho[T], error) {
	return startKnitCalls(pool.Config{Workers: 1, QueueSize: count}, count, func(v T) T { return v }), nil
}
