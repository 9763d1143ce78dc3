package knitbench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutsideModule builds and runs examples/outside, a module of its
// own that imports only the bench module's public packages, and checks
// that its suite ran on the harness and wrote its results. It needs the
// go command and the module cache the bench module was built from (no
// network: GOPROXY=off).
func TestOutsideModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module: not in -short")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	dir, err := filepath.Abs(filepath.Join("..", "examples", "outside"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(gobin, "run", ".", "-rounds", "1", "-duration", "1ms", "-q", "-plot", "none", "-out", out)
	cmd.Dir = dir
	// Not knit's go.work: the example is a module outside it.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOFLAGS=-mod=readonly -buildvcs=false")
	stdout, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go run in %s: %v\n%s", dir, err, stderr)
	}
	for _, want := range []string{"## Verdict", "a short critical section", "## locks", "sync.Mutex"} {
		if !strings.Contains(string(stdout), want) {
			t.Errorf("the outside suite's output lacks %q:\n%s", want, stdout)
		}
	}
	if st, err := os.Stat(filepath.Join(out, "results.json")); err != nil || st.Size() == 0 {
		t.Errorf("results.json not written: %v", err)
	}
}
