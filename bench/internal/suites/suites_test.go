package suites

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/bench/internal/harness"
)

// tiny is independent of testing.Short: every suite must run in
// milliseconds at this scale, also under -race.
func tiny() harness.Config {
	cfg := harness.Config{Scale: harness.Tiny, Rounds: 1, Duration: time.Millisecond}
	if testing.Verbose() {
		cfg.Progress = os.Stderr
	}
	return cfg
}

// TestSmokeEverySuite runs every suite at tiny size and checks
// each row produced positive, finite figures. It asserts nothing about
// speed: that is what the command is for.
func TestSmokeEverySuite(t *testing.T) {
	all := All()
	if len(all) == 0 {
		t.Fatal("no suites listed")
	}
	for _, s := range all {
		t.Run(s.Name, func(t *testing.T) {
			res := harness.Run(s, tiny())
			if len(res.Rows) == 0 {
				t.Fatal("suite has no rows")
			}
			refs := 0
			for _, r := range res.Rows {
				if r.Name == s.Ref {
					refs++
				}
				if r.Error != "" {
					t.Errorf("%s / %s: %s", r.Group, r.Name, r.Error)
					continue
				}
				if len(r.Samples) != 1 {
					t.Errorf("%s / %s: %d samples, want 1", r.Group, r.Name, len(r.Samples))
				}
				for what, v := range map[string]float64{"median": r.MedianNs, "min": r.MinNs, "max": r.MaxNs} {
					if !(v > 0) || math.IsInf(v, 0) {
						t.Errorf("%s / %s: %s ns/op = %v", r.Group, r.Name, what, v)
					}
				}
				for what, v := range map[string]float64{"cpu": r.CPUNsPerOp, "allocs": r.AllocsPerOp, "cores": r.Cores, "ratio": r.Ratio} {
					if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
						t.Errorf("%s / %s: %s = %v", r.Group, r.Name, what, v)
					}
				}
				if r.Ratio == 0 {
					t.Errorf("%s / %s: no ratio (no reference %q in its group?)", r.Group, r.Name, s.Ref)
				}
				if r.Versus != "" && !(r.RoundRatio > 0) {
					t.Errorf("%s / %s: no per-round ratio (is %q a row of its group?)", r.Group, r.Name, r.Versus)
				}
				if s.Name == "peers" && strings.HasPrefix(r.Name, "knit ") && r.Versus == "" {
					t.Errorf("%s / %s: a knit row of the peers matrix with no xsync row to be read against", r.Group, r.Name)
				}
			}
			if refs == 0 {
				t.Errorf("no row is the reference %q", s.Ref)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	all, err := Lookup("all")
	if err != nil || len(all) != len(All()) {
		t.Fatalf("Lookup(all) = %d suites, %v", len(all), err)
	}
	two, err := Lookup("limits, heavy")
	if err != nil || len(two) != 2 || two[0].Name != "limits" || two[1].Name != "heavy" {
		t.Fatalf("Lookup(limits, heavy) = %v, %v", two, err)
	}
	if _, err := Lookup("nope"); err == nil {
		t.Fatal("Lookup(nope) did not fail")
	}
}

// TestRegistry checks what the list must hold: every suite named once,
// with a reference row and rows.
func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range All() {
		if s.Name == "" || s.Rows == nil || s.Ref == "" {
			t.Errorf("suite %q needs Name, Ref and Rows", s.Name)
		}
		if seen[s.Name] {
			t.Errorf("duplicate suite %s", s.Name)
		}
		seen[s.Name] = true
	}
}

// TestWithRows checks the mechanism that adds rows (the knit rows) to a
// suite another file owns: rows land in their group's block.
func TestWithRows(t *testing.T) {
	s := withRows(ipcPeersSuite, func(cfg harness.Config) []harness.Row {
		return ipcRows("test transport", cfg, startChanIPC)
	})
	rows := s.Rows(tiny())
	counts := ipcCounts(harness.Tiny)
	found := 0
	for i, r := range rows {
		if r.Name == "test transport" {
			found++
			if i+1 < len(rows) && rows[i+1].Group == r.Group {
				t.Errorf("extension row %q is not last in group %q", r.Name, r.Group)
			}
		}
	}
	if found != len(counts) {
		t.Errorf("found %d extension rows, want %d", found, len(counts))
	}
}

func TestPrimeCounters(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 10, 100, 1000, 7919} {
		if a, b := countPrimes(0, n+1), primeCountSieve(n); a != b {
			t.Errorf("primes up to %d: trial division %d, sieve %d", n, a, b)
		}
	}
}

func TestChecksum(t *testing.T) {
	b := []byte("abcdefghijk") // crosses one 8-byte word and a tail
	var want uint64
	for i := 0; i < 8; i++ {
		want += uint64(b[i]) << (8 * i)
	}
	want += uint64('i') + uint64('j') + uint64('k')
	if got := checksum(b); got != want {
		t.Errorf("checksum([]byte) = %d, want %d", got, want)
	}
	if got := checksum(string(b)); got != want {
		t.Errorf("checksum(string) = %d, want %d", got, want)
	}
}

// faultyQueue is a ring that mishandles its at-th successful push, as a
// broken ring would: "drop" loses the item, "duplicate" delivers it twice,
// "corrupt" delivers another value. Pushes are serialised so that the
// fault lands on exactly one item whichever producer makes it.
type faultyQueue struct {
	knit.Queue[uint64]
	fault  string
	at     int
	mu     sync.Mutex
	pushed int
}

func (q *faultyQueue) Push(ctx context.Context, v uint64) error {
	return q.push(v, func(v uint64) error { return q.Queue.Push(ctx, v) })
}

func (q *faultyQueue) TryPush(v uint64) error {
	return q.push(v, q.Queue.TryPush)
}

func (q *faultyQueue) push(v uint64, try func(uint64) error) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pushed+1 == q.at {
		switch q.fault {
		case "drop":
			q.pushed++
			return nil
		case "duplicate":
			if err := try(v); err != nil {
				return err
			}
			for try(v) != nil {
				runtime.Gosched() // the consumers make room
			}
			q.pushed++
			return nil
		case "corrupt":
			v ^= 1 << 40
		}
	}
	if err := try(v); err != nil {
		return err
	}
	q.pushed++
	return nil
}

// TestContendedChecksItems runs the contended rows' shape, blocking and
// with try loops, over a ring that loses, duplicates or corrupts one
// item, and checks that Run reports it (errOrder) instead of passing or
// waiting for ever; over the same ring without a fault, rounds pass.
func TestContendedChecksItems(t *testing.T) {
	// What Run reports for each fault: a consumer finds an end marker, an
	// item is left behind the round's last, or the sum is off.
	says := map[string]string{"drop": "items short", "duplicate": "after the round's last", "corrupt": "sum of the round's items"}
	for _, fault := range []string{"none", "drop", "duplicate", "corrupt"} {
		for _, try := range []bool{false, true} {
			name := fault + "/blocking"
			if try {
				name = fault + "/try"
			}
			t.Run(name, func(t *testing.T) {
				q := &faultyQueue{Queue: knit.NewMPMC[uint64](16, knit.Park{}), fault: fault, at: 3}
				var b *contended
				if try {
					b = knitTryContended(q, 2, 3)
				} else {
					b = startRingContended(q, 2, 3)
				}
				rounds := 1
				if fault == "none" {
					rounds = 5
				}
				for r := range rounds {
					err := runWithin(t, b, q, 200)
					if fault == "none" && err != nil {
						t.Fatalf("round %d: %v", r, err)
					}
					if fault != "none" && (!errors.Is(err, errOrder) || !strings.Contains(err.Error(), says[fault])) {
						t.Fatalf("Run over a ring that makes a %s fault = %v, want an error wrapping %q that says %q",
							fault, err, errOrder, says[fault])
					}
				}
				if err := b.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
			})
		}
	}
}

// runWithin is b.Run(n) that fails t, and closes q to free the
// goroutines blocked on it, when Run has not returned within 30 seconds:
// a check that misses a lost item leaves a consumer waiting for it.
func runWithin(t *testing.T, b *contended, q knit.Queue[uint64], n int) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- b.Run(n) }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
	}
	q.Close()
	select {
	case err := <-done:
		t.Fatalf("Run(%d) returned only once the ring was closed, with %v", n, err)
	case <-time.After(30 * time.Second):
		t.Fatalf("Run(%d) hung, also after the ring was closed", n)
	}
	return fmt.Errorf("unreachable")
}

// TestHandoffSuite runs every row of the handoff suite once, tiny, and
// checks that it completed: every task ran exactly once in every Run.
func TestHandoffSuite(t *testing.T) {
	ss, err := Lookup("handoff")
	if err != nil {
		t.Fatal(err)
	}
	res := harness.Run(ss[0], tiny())
	if want := 12 * len(handoffGroups(harness.Tiny)); len(res.Rows) != want {
		t.Errorf("%d rows, want %d", len(res.Rows), want)
	}
	for _, r := range res.Rows {
		if r.Error != "" || len(r.Samples) != 1 {
			t.Errorf("%s / %s: %d samples, error %q", r.Group, r.Name, len(r.Samples), r.Error)
		}
	}
}

// faultySlot is a channel handoff that mishandles its at-th task: "drop"
// never delivers it (the worker is put back idle), "duplicate" has the
// worker run it twice.
type faultySlot struct {
	chanSlot
	fault  string
	at     int32
	puts   atomic.Int32 // submitters'
	takes  int32        // the worker's
	replay func()       // the worker's
}

func (s *faultySlot) put(f func()) bool {
	if f != nil && s.fault == "drop" && s.puts.Add(1) == s.at {
		return true
	}
	return s.chanSlot.put(f)
}

func (s *faultySlot) take() func() {
	if f := s.replay; f != nil {
		s.replay = nil
		return f
	}
	f := s.chanSlot.take()
	if s.takes++; f != nil && s.fault == "duplicate" && s.takes == s.at {
		s.replay = f
	}
	return f
}

// done keeps the worker off the idle stack until it has run the replay.
func (s *faultySlot) done() bool { return s.replay == nil }

// TestHandoffChecksTasks checks that Run reports a task lost or run
// twice by the handoff, and passes rounds over a handoff without a fault.
func TestHandoffChecksTasks(t *testing.T) {
	for _, fault := range []string{"none", "drop", "duplicate"} {
		t.Run(fault, func(t *testing.T) {
			b := startHandoff(handoffGroup{workers: 1, submitters: 2}, func() slot {
				return &faultySlot{chanSlot: make(chan func()), fault: fault, at: 3}
			})
			done := make(chan error, 1)
			go func() {
				var err error
				for r := 0; r < 3 && err == nil; r++ {
					err = b.Run(50)
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("Run hung")
			}
			if fault == "none" && err != nil {
				t.Fatalf("Run over a faultless handoff: %v", err)
			}
			if fault != "none" && (err == nil || !strings.Contains(err.Error(), "want 50")) {
				t.Fatalf("Run over a handoff that makes a %s fault = %v, want an error", fault, err)
			}
			if err := b.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
		})
	}
}

// TestRowKinds checks the kinds the rows' names cannot carry, and the
// floors and knit rows of the Knitting-shaped suites at the scales a
// run uses: every group of ipc-peers, types and payload has the rings'
// floor as a limit row (payload's quick mode at payloadQuickFloors only),
// every knit row of types and payload says which call it uses, and
// payload has its knit rows at every size.
func TestRowKinds(t *testing.T) {
	for _, scale := range []harness.Scale{harness.Tiny, harness.Quick, harness.Full} {
		cfg := harness.Config{Scale: scale}
		for _, s := range All() {
			floors, knitRows := map[string]int{}, map[string]int{}
			groups := map[string]bool{}
			for _, r := range s.Rows(cfg) {
				groups[r.Group] = true
				kind := harness.KindOf(r.Kind, r.Name)
				switch {
				case strings.Contains(r.Name, "SPSC rings there and back"):
					if kind != harness.KindLimit {
						t.Errorf("%s %s / %s: kind %s, want limit", scale, s.Name, r.Name, kind)
					}
					floors[r.Group]++
				case s.Name == "spin" && r.Name != refAtomic && r.Name != "runtime.Gosched loop":
					if kind != harness.KindKnit {
						t.Errorf("%s spin / %s / %s: kind %s, want knit (a knit.Pause hint)", scale, r.Group, r.Name, kind)
					}
				case r.Name == "examples/antspool on channels":
					if kind != harness.KindGo {
						t.Errorf("%s %s / %s: kind %s, want go (a pool of this repository on channels)", scale, s.Name, r.Name, kind)
					}
				case kind == harness.KindKnit && (s.Name == "types" || s.Name == "payload"):
					knitRows[r.Group]++
					if !strings.Contains(r.Name, "Call per message") && !strings.Contains(r.Name, "CallBatch") {
						t.Errorf("%s %s / %s / %s: a knit row that does not say which call it uses", scale, s.Name, r.Group, r.Name)
					}
				}
			}
			switch s.Name {
			case "ipc-peers", "types", "payload":
				for g := range groups {
					quickless := s.Name == "payload" && scale == harness.Quick &&
						!slices.ContainsFunc(payloadQuickFloors, func(n int) bool { return payloadGroup(n) == g })
					if quickless {
						if floors[g] != 0 {
							t.Errorf("%s payload / %s: a floor row outside payloadQuickFloors", scale, g)
						}
					} else if floors[g] != 1 {
						t.Errorf("%s %s / %s: %d floor rows, want 1", scale, s.Name, g, floors[g])
					}
				}
			}
			if s.Name == "payload" {
				for g := range groups {
					if knitRows[g] != 2 {
						t.Errorf("%s payload / %s: %d knit rows, want 2 (string and []byte)", scale, g, knitRows[g])
					}
				}
			}
		}
	}
}

// TestRingTrip checks the floor's transport: replies in order, batch
// after batch, and send and recv as the types and payload rows call them.
func TestRingTrip(t *testing.T) {
	r := startRingTrip(4, func(v int64) int64 { return v + 1 })
	msgs, replies := make([]int64, 4), make([]int64, 4)
	for round := range 3 {
		for i := range msgs {
			msgs[i] = int64(round*10 + i*3)
		}
		if err := r.roundTrip(msgs, replies); err != nil {
			t.Fatal(err)
		}
		for i, v := range replies {
			if v != msgs[i]+1 {
				t.Fatalf("round %d reply %d = %d, want %d", round, i, v, msgs[i]+1)
			}
		}
	}
	for round := range 3 {
		for i := range 4 {
			if err := r.send(int64(round*10 + i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.send(99); err == nil {
			t.Fatal("a fifth value in flight on rings of 4 was taken")
		}
		for i := range 4 {
			v, err := r.recv()
			if err != nil || v != int64(round*10+i+1) {
				t.Fatalf("round %d recv %d = %d, %v; want %d", round, i, v, err, round*10+i+1)
			}
		}
	}
	if _, err := r.recv(); err == nil {
		t.Fatal("recv with nothing in flight did not fail")
	}
	if err := r.close(); err != nil {
		t.Fatal(err)
	}
}

// TestPayloadGroupOrder: payload's tables run from the smallest size to
// the largest, whichever sizes have a floor row.
func TestPayloadGroupOrder(t *testing.T) {
	for _, scale := range []harness.Scale{harness.Tiny, harness.Quick, harness.Full} {
		s, err := Lookup("payload")
		if err != nil {
			t.Fatal(err)
		}
		var groups []string
		for _, r := range s[0].Rows(harness.Config{Scale: scale}) {
			if !slices.Contains(groups, r.Group) {
				groups = append(groups, r.Group)
			}
		}
		var want []string
		for _, n := range payloadSizes(scale) {
			want = append(want, payloadGroup(n))
		}
		if !slices.Equal(groups, want) {
			t.Errorf("%s: payload's groups %v, want %v", scale, groups, want)
		}
	}
}
