package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestList(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run([]string{"-list"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	for _, name := range []string{"limits", "ipc-peers", "heavy", "types", "payload"} {
		if !strings.Contains(out.String(), name) {
			t.Errorf("-list lacks %s:\n%s", name, out.String())
		}
	}
}

// TestRunLimits drives the command end to end on the limits suite, whose
// rows do not grow with scale, at a window of a few milliseconds.
func TestRunLimits(t *testing.T) {
	dir := t.TempDir()
	var out, errs bytes.Buffer
	code := run([]string{"-suites", "limits", "-rounds", "1", "-duration", "2ms", "-q", "-out", dir}, &out, &errs)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs.String(), out.String())
	}
	if !strings.Contains(out.String(), "| limit: atomic ping-pong (ref) |") {
		t.Errorf("stdout lacks the limits table:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "| CPU-µs/op | ctx-sw/op |") {
		t.Errorf("stdout lacks the context-switch column beside CPU-µs/op:\n%s", out.String())
	}
	for _, f := range []string{"results.md", "results.json", "limits.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}

// TestRunCounters: -counters adds every counter's column, each with a
// figure or the reason there is none.
func TestRunCounters(t *testing.T) {
	var out, errs bytes.Buffer
	code := run([]string{"-suites", "limits", "-rounds", "1", "-duration", "2ms", "-q", "-counters", "-out", t.TempDir()}, &out, &errs)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs.String(), out.String())
	}
	for _, col := range []string{"ctx-sw/op", "migrations/op", "cycles/op", "instr/op", "cache-miss/op", "branch-miss/op"} {
		if !strings.Contains(out.String(), "| "+col+" |") {
			t.Errorf("stdout lacks the %s column:\n%s", col, out.String())
		}
	}
	if !strings.Contains(out.String(), "| counters | ") {
		t.Errorf("the machine table does not describe the counters:\n%s", out.String())
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-suites", "nope"}, {"-plot", "gif"}, {"extra"}, {"-rounds", "x"}} {
		var out, errs bytes.Buffer
		if code := run(args, &out, &errs); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}
