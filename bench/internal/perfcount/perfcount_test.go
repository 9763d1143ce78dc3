package perfcount

import (
	"strings"
	"testing"
)

// TestInfo: every counter of a set is either available or says why not,
// and Read has a figure for exactly the available ones: an unavailable
// counter reads as absent, never as zero.
func TestInfo(t *testing.T) {
	s := Open(All...)
	defer s.Close()
	infos := s.Info()
	if len(infos) != len(All) {
		t.Fatalf("Info has %d entries for %d counters", len(infos), len(All))
	}
	got := s.Read()
	for i, in := range infos {
		if in.Name != All[i].String() {
			t.Errorf("Info[%d].Name = %q, want %q", i, in.Name, All[i])
		}
		_, read := got[in.Name]
		switch {
		case in.Available && !read:
			t.Errorf("%s is available but Read has no figure for it", in.Name)
		case !in.Available && read:
			t.Errorf("%s is unavailable (%s) but Read reports %d", in.Name, in.Why, got[in.Name])
		case !in.Available && (in.Why == "" || in.Detail == ""):
			t.Errorf("%s is unavailable without a reason: %+v", in.Name, in)
		}
		t.Logf("%s: available %v, user only %v, %s %s", in.Name, in.Available, in.UserOnly, in.Why, in.Detail)
	}
}

func TestCounterNames(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range All {
		n := c.String()
		if n == "" || strings.HasPrefix(n, "Counter(") || seen[n] {
			t.Errorf("counter %d has name %q", int(c), n)
		}
		seen[n] = true
	}
	if Counter(99).String() != "Counter(99)" {
		t.Errorf("unknown counter prints as %q", Counter(99).String())
	}
	if ContextSwitches.Hardware() || CPUMigrations.Hardware() || !Cycles.Hardware() || !BranchMisses.Hardware() {
		t.Error("Hardware() misclassifies a counter")
	}
}

func TestCountsSub(t *testing.T) {
	a := Counts{"cycles": 10, "instructions": 25}
	b := Counts{"cycles": 4, "instructions": 5}
	d := a.Sub(b)
	if d["cycles"] != 6 || d["instructions"] != 20 || len(d) != 2 {
		t.Errorf("Sub = %v", d)
	}
	if Counts(nil).Sub(b) != nil {
		t.Error("nil.Sub is not nil")
	}
}

// TestNilSet: a nil set (no counters asked for) reads nothing.
func TestNilSet(t *testing.T) {
	var s *Set
	if s.Read() != nil || s.Info() != nil || s.Available() || s.Close() != nil {
		t.Error("nil Set is not empty")
	}
}
