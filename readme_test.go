package knit_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// readmePrelude declares the placeholders the README's snippets use, at
// package level, so that a snippet's own := declares new names beside
// them as it would in a reader's function. Each snippet becomes the body
// of a function of its own.
const readmePrelude = `package readme

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync/atomic"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/affinity"
	"github.com/knit-go/knit/pool"
	"github.com/knit-go/knit/shm"
)

type Job struct{}
type Page struct{}

var (
	ctx     = context.Background()
	err     error
	word    atomic.Uint32
	old     uint32
	n       int
	timeout time.Duration
	e       knit.Event
	cond    func() bool
	j       *Job
	jobs    []*Job
	work    func()
	url     string
	u       string
	in      []int
	fn      func(int) (int, error)
	seq     iter.Seq[int]
	fetch   func(string) (Page, error)
	check   func(context.Context, string) error
	ticker  *time.Ticker
	quit    chan struct{}
	inbox   *knit.MPSC[*Job]
	inboxes []*knit.MPSC[*Job]
	run     func(*Job)
	flush   func(time.Time)
)

var (
	_ = fmt.Sprint
	_ = errors.Is
	_ affinity.CPUSet
	_ shm.Region
)
`

// TestReadmeSnippetsCompile type-checks every Go block in README.md, so a
// snippet that no longer compiles fails here, at its line in README.md.
// Unused names are allowed (the snippets show calls, not programs); every
// other error fails.
func TestReadmeSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds export data for the imports with go list")
	}
	md, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	src.WriteString(readmePrelude)
	blocks := 0
	sc := bufio.NewScanner(bytes.NewReader(md))
	for line, in := 1, false; sc.Scan(); line++ {
		switch text := sc.Text(); {
		case !in && strings.TrimSpace(text) == "```go":
			in = true
			blocks++
			fmt.Fprintf(&src, "func snippet%d() {\n//line README.md:%d\n", blocks, line+1)
		case in && strings.TrimSpace(text) == "```":
			in = false
			src.WriteString("}\n")
		case in:
			src.WriteString(text + "\n")
		}
	}
	if blocks == 0 {
		t.Fatal("no ```go blocks found in README.md")
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "readme_snippets.go", src.String(), parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("README.md snippets do not parse: %v", err)
	}
	exports := exportData(t, "github.com/knit-go/knit/pool", "github.com/knit-go/knit/affinity", "github.com/knit-go/knit/shm", "fmt", "time", "context", "sync/atomic", "iter")
	var errs []string
	conf := types.Config{
		Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
			file, ok := exports[path]
			if !ok {
				return nil, fmt.Errorf("no export data for %s", path)
			}
			return os.Open(file)
		}),
		Error: func(err error) {
			if te, ok := err.(types.Error); ok && te.Soft {
				return // unused variables and imports
			}
			errs = append(errs, err.Error())
		},
	}
	conf.Check("readme", fset, []*ast.File{f}, nil)
	for _, e := range errs {
		t.Error(e)
	}
	t.Logf("%d Go blocks type-checked", blocks)
}

// exportData runs go list -export over pkgs and their dependencies and
// returns each package's export data file.
func exportData(t *testing.T, pkgs ...string) map[string]string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-export", "-deps", "-json=ImportPath,Export"}, pkgs...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	m := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct{ ImportPath, Export string }
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		m[p.ImportPath] = p.Export
	}
	return m
}
