package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// squash collapses the padding of aligned tables to one space.
func squash(s string) string {
	for strings.Contains(s, "  ") {
		s = strings.ReplaceAll(s, "  ", " ")
	}
	return s
}

// TestList: every suite is listed, names in one aligned column.
func TestList(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run([]string{"-list"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	for _, name := range []string{"limits", "ipc-peers", "heavy", "types", "payload", "spsc-rigtorp", "pool-submit"} {
		if !strings.Contains(out.String(), name) {
			t.Errorf("-list lacks %s:\n%s", name, out.String())
		}
	}
	col := -1
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		i := strings.Index(line, "  ")
		for i >= 0 && i+2 < len(line) && line[i+2] == ' ' {
			i++
		}
		if col < 0 {
			col = i
		} else if i != col && !strings.HasPrefix(line, " ") {
			t.Errorf("-list: %q starts its description at %d, the first line at %d", line, i, col)
		}
	}
}

// TestRunLimits drives the command end to end on two suites at one
// round of a few milliseconds, as CI does: no interval can be computed,
// and that is reported, not an error.
func TestRunLimits(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	var out, errs bytes.Buffer
	code := run([]string{"-suites", "limits,pool-call", "-rounds", "1", "-duration", "2ms", "-q", "-out", dir}, &out, &errs)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs.String(), out.String())
	}
	md := squash(out.String())
	if !strings.HasPrefix(md, "# knitbench\n\n## Verdict\n") {
		t.Errorf("stdout does not start with the verdict:\n%s", out.String()[:min(out.Len(), 600)])
	}
	for _, want := range []string{
		"| a request/reply worker | knit Call+Wait, default policy [Task.Call + Future.Wait] |",
		"n/a: too few rounds", "## limits", "| limit: atomic ping-pong", "| CPU/op | ctx-sw/op |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
	for _, f := range []string{"results.md", "results.json", "results.txt", "limits.svg", "limits.png", "pool-call.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	var js struct {
		Schema int `json:"schema_version"`
		Run    struct {
			Code map[string]any `json:"code"`
		} `json:"run"`
		Machine map[string]any `json:"machine"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "results.json"))
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatal(err)
	}
	if js.Schema < 2 || js.Run.Code["knit_module"] != "github.com/knit-go/knit" || js.Machine["kernel"] == nil {
		t.Errorf("results.json lacks its provenance: schema %d, code %v, kernel %v", js.Schema, js.Run.Code, js.Machine["kernel"])
	}
	if strings.Contains(string(b), "_us_") {
		t.Errorf("results.json has a field in µs; every time is in ns")
	}
	if !strings.Contains(errs.String(), "warning: -duration 2ms") || !strings.Contains(errs.String(), "warning: -rounds 1") {
		t.Errorf("a 2 ms window and one round do not warn:\n%s", errs.String())
	}
}

// TestRunCounters: -counters adds every counter's column, each with a
// figure or the reason there is none.
func TestRunCounters(t *testing.T) {
	var out, errs bytes.Buffer
	code := run([]string{"-suites", "limits", "-rounds", "1", "-duration", "2ms", "-q", "-counters", "-plot", "none", "-out", filepath.Join(t.TempDir(), "r")}, &out, &errs)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs.String(), out.String())
	}
	md := squash(out.String())
	for _, col := range []string{"ctx-sw/op", "migrations/op", "cycles/op", "instr/op", "cache-miss/op", "branch-miss/op"} {
		if !strings.Contains(md, "| "+col+" |") {
			t.Errorf("stdout lacks the %s column:\n%s", col, out.String())
		}
	}
	if !strings.Contains(md, "| counters | ") {
		t.Errorf("the machine table does not describe the counters:\n%s", out.String())
	}
}

// TestBadFlags: every out-of-range or malformed flag exits 2 at once,
// with a message that names the flag.
func TestBadFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"-suites", "nope"}, "-suites"},
		{[]string{"-suites="}, "-suites"},
		{[]string{"-suites", " , "}, "-suites"},
		{[]string{"-plot", "gif"}, "-plot"},
		{[]string{"-plot", "svg,none"}, "-plot"},
		{[]string{"extra"}, "unexpected"},
		{[]string{"-rounds", "x"}, "-rounds"},
		{[]string{"-rounds", "-1"}, "-rounds -1: out of range; want 1 to 1000"},
		{[]string{"-rounds", "0"}, "-rounds"},
		{[]string{"-rounds", "1001"}, "-rounds"},
		{[]string{"-duration", "-1s"}, "-duration -1s: out of range"},
		{[]string{"-duration", "0"}, "-duration"},
		{[]string{"-duration", "2h"}, "-duration"},
		{[]string{"-gomaxprocs", "-3"}, "-gomaxprocs -3: out of range"},
		{[]string{"-q", "-v"}, "-q and -v"},
		{[]string{"-compare", "only-one.json"}, "-compare"},
	} {
		var out, errs bytes.Buffer
		t0 := time.Now()
		code := run(append(tt.args, "-out", filepath.Join(t.TempDir(), "r")), &out, &errs)
		if code != 2 {
			t.Errorf("%q: exit %d, want 2", tt.args, code)
		}
		if !strings.Contains(errs.String(), tt.says) {
			t.Errorf("%q: stderr %q does not say %q", tt.args, errs.String(), tt.says)
		}
		if out.Len() > 0 || time.Since(t0) > 2*time.Second {
			t.Errorf("%q: ran something before failing (%v, stdout %q)", tt.args, time.Since(t0), out.String())
		}
	}
}

// TestOutChecked: a results directory that cannot be written, or that
// holds an earlier run, fails with exit 2 before any suite runs.
func TestOutChecked(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	used := filepath.Join(tmp, "used")
	if err := os.MkdirAll(used, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(used, "limits.svg"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(file, "sub"), used} {
		var out, errs bytes.Buffer
		t0 := time.Now()
		code := run([]string{"-suites", "limits", "-out", dir}, &out, &errs)
		if code != 2 || !strings.Contains(errs.String(), "-out") {
			t.Errorf("-out %s: exit %d, stderr %q; want 2 naming -out", dir, code, errs.String())
		}
		if el := time.Since(t0); el > 2*time.Second || out.Len() > 0 {
			t.Errorf("-out %s: failed after %v with stdout %q; want at once", dir, el, out.String())
		}
	}
}

// TestCompareRuns: two short runs compare row by row, with the columns
// benchstat has and a geomean; a file that is not a run exits 2.
func TestCompareRuns(t *testing.T) {
	tmp := t.TempDir()
	var dirs []string
	for _, name := range []string{"a", "b"} {
		dir := filepath.Join(tmp, name)
		var out, errs bytes.Buffer
		if code := run([]string{"-suites", "limits", "-rounds", "6", "-duration", "1ms", "-q", "-plot", "none", "-out", dir}, &out, &errs); code != 0 {
			t.Fatalf("run %s: exit %d: %s", name, code, errs.String())
		}
		dirs = append(dirs, dir)
	}
	var out, errs bytes.Buffer
	if code := run([]string{"-compare", dirs[0], filepath.Join(dirs[1], "results.json")}, &out, &errs); code != 0 {
		t.Fatalf("-compare: exit %d: %s", code, errs.String())
	}
	for _, want := range []string{"old: ", "new: ", "limits", "old", "new", "delta", "limit: atomic ping-pong", "(p=", "n=6+6", "geomean", "rows compared"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-compare output lacks %q:\n%s", want, out.String())
		}
	}
	bad := filepath.Join(tmp, "bad.json")
	os.WriteFile(bad, []byte("{}"), 0o644)
	out.Reset()
	errs.Reset()
	if code := run([]string{"-compare", bad, dirs[0]}, &out, &errs); code != 2 {
		t.Errorf("-compare of a file that is not a run: exit %d, want 2 (%s)", code, errs.String())
	}
}
