package harness

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSmoke runs the whole harness at a tiny load: two configurations,
// one round, both shapes, every process real (driver, servers, loads).
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes and loads them for a few seconds")
	}
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := drive([]string{
		"-configs", "inline,knit:1,ants:1",
		// The window is what every route must answer within: long
		// enough for a server the race detector slows on a loaded
		// machine (0 requests for a route were seen with 700 ms there).
		"-rounds", "1", "-settle", "100ms", "-idle", "300ms", "-warmup", "300ms", "-window", "2s",
		"-conns", "2", "-q", "-out", dir,
	}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s\nstdout:\n%s", code, errb.String(), out.String())
	}
	md := out.String()
	for _, want := range []string{
		"## A. Saturating load", "## B. Open loop", "## C. What the timer policy costs", "## Targets",
		"| inline G=", "| knit w=1 spin=default G=", "| ants w=1 G=",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	file, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil || !bytes.Equal(file, out.Bytes()) {
		t.Errorf("results.md differs from stdout (%v)", err)
	}
	var res struct {
		Rate int   `json:"rate_per_route"`
		Rows []Row `json:"rows"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 6 || res.Rate < 1 {
		t.Fatalf("%d rows, rate %d", len(res.Rows), res.Rate)
	}
	pids := map[int]bool{}
	for _, r := range res.Rows {
		sh := r.Closed
		if r.Shape == Open {
			sh = r.Open
		}
		if r.Err != "" || sh == nil || (r.Closed != nil) == (r.Open != nil) || r.Idle != (r.Shape == Closed) {
			t.Errorf("%s %s: %q closed=%v open=%v idle=%v", r.Name, r.Shape, r.Err, r.Closed != nil, r.Open != nil, r.Idle)
			continue
		}
		pids[r.PID] = true
		{
			for _, rt := range Routes {
				x := sh.Routes[rt.Name]
				if x.Requests == 0 || x.Success != 1 {
					t.Errorf("%s %s /%s: %d requests, success %v, errors %q", r.Name, sh.Mode, rt.Name, x.Requests, x.Success, x.Errors)
				}
			}
			if sh.Threads < 1 || sh.Wall <= 0 {
				t.Errorf("%s %s: threads %d wall %v", r.Name, sh.Mode, sh.Threads, sh.Wall)
			}
		}
		if r.Open != nil && r.Open.Rate != res.Rate {
			t.Errorf("%s: open rate %d, run rate %d", r.Name, r.Open.Rate, res.Rate)
		}
	}
	if len(pids) != 6 {
		t.Errorf("six rows ran in %d distinct processes", len(pids))
	}
}
