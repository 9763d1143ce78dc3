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
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
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

// The Go blocks of README.md and docs/*.md are compiled by the tests
// below. A block is one of two kinds:
//
//   - a fragment (the usual kind): calls as a reader would write them in
//     a function of their own. Each becomes the body of a function in a
//     file that starts with readmePrelude, so it may use the prelude's
//     placeholders and leave names unused;
//   - a program: a block whose first line starts with "package". It is
//     type-checked as a file of its own, with its own imports, and every
//     error counts, as go build would count it.
//
// Errors are reported at their line in the markdown file.

// TestReadmeSnippetsCompile type-checks every Go block in README.md, so a
// snippet that no longer compiles fails here, at its line in README.md.
func TestReadmeSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds export data for the imports with go list")
	}
	n := checkMarkdownSnippets(t, []string{"README.md"})
	if n["README.md"] == 0 {
		t.Fatal("no ```go blocks found in README.md")
	}
}

// TestDocsSnippetsCompile is TestReadmeSnippetsCompile for every page of
// docs/ (docs/*.md).
func TestDocsSnippetsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds export data for the imports with go list")
	}
	pages := docPages(t)
	if len(pages) == 0 {
		t.Fatal("no docs/*.md pages found")
	}
	checkMarkdownSnippets(t, pages)
}

// docPages lists docs/*.md, sorted.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(pages)
	return pages
}

// snippetUnit is what one markdown file's Go blocks compile to: one file
// of fragments (prelude and a function per block) and a file per program.
type snippetUnit struct {
	md        string   // the markdown file's path
	fragments string   // prelude + functions; "" when the file has no fragment
	programs  []string // whole files, each starting with its //line directive
	blocks    int
}

// extractSnippets splits md's ```go blocks into fragments and programs.
func extractSnippets(path string, md []byte) snippetUnit {
	u := snippetUnit{md: path}
	var frag strings.Builder
	var block []string
	start := 0
	in := false
	sc := bufio.NewScanner(bytes.NewReader(md))
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		switch {
		case !in && strings.TrimSpace(text) == "```go":
			in, block, start = true, block[:0], line+1
		case in && strings.TrimSpace(text) == "```":
			in = false
			u.blocks++
			body := strings.Join(block, "\n") + "\n"
			if strings.HasPrefix(strings.TrimSpace(body), "package ") {
				u.programs = append(u.programs, fmt.Sprintf("//line %s:%d\n%s", path, start, body))
				continue
			}
			if frag.Len() == 0 {
				frag.WriteString(readmePrelude)
			}
			fmt.Fprintf(&frag, "func snippet%d() {\n//line %s:%d\n%s}\n", u.blocks, path, start, body)
		case in:
			block = append(block, text)
		}
	}
	u.fragments = frag.String()
	return u
}

// softIgnored reports whether a fragment may have the error: a name or
// import left unused, which a snippet that shows calls does on purpose.
// go/types marks other errors soft too (some failed inferences): those
// count.
func softIgnored(err error) bool {
	te, ok := err.(types.Error)
	if !ok || !te.Soft {
		return false
	}
	for _, s := range []string{"declared and not used", "imported and not used", "defined and not used"} {
		if strings.Contains(te.Msg, s) {
			return true
		}
	}
	return false
}

// snippetImports are the packages readmePrelude imports.
var snippetImports = []string{
	"github.com/knit-go/knit", "github.com/knit-go/knit/pool", "github.com/knit-go/knit/affinity", "github.com/knit-go/knit/shm",
	"context", "errors", "fmt", "iter", "sync/atomic", "time",
}

// checkMarkdownSnippets type-checks the Go blocks of each file in paths
// (a subtest per file when there are several) and returns how many
// blocks each held.
func checkMarkdownSnippets(t *testing.T, paths []string) map[string]int {
	t.Helper()
	type parsed struct {
		u     snippetUnit
		fset  *token.FileSet
		frag  *ast.File
		progs []*ast.File
	}
	var all []parsed
	counts := map[string]int{}
	need := map[string]bool{}
	for _, p := range snippetImports {
		need[p] = true
	}
	for _, path := range paths {
		md, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		pu := parsed{u: extractSnippets(path, md), fset: token.NewFileSet()}
		counts[path] = pu.u.blocks
		if pu.u.fragments != "" {
			// A file name with no directory: a //line directive's relative
			// path is taken relative to the directory of the file it is in.
			pu.frag, err = parser.ParseFile(pu.fset, "snippets.go", pu.u.fragments, parser.SkipObjectResolution)
			if err != nil {
				t.Errorf("%s: snippets do not parse: %v", path, err)
				continue
			}
		}
		for i, src := range pu.u.programs {
			f, err := parser.ParseFile(pu.fset, fmt.Sprintf("program%d.go", i), src, parser.SkipObjectResolution)
			if err != nil {
				t.Errorf("%s: program does not parse: %v", path, err)
				continue
			}
			for _, imp := range f.Imports {
				need[strings.Trim(imp.Path.Value, `"`)] = true
			}
			pu.progs = append(pu.progs, f)
		}
		all = append(all, pu)
	}
	pkgs := make([]string, 0, len(need))
	for p := range need {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	exports := exportData(t, pkgs...)
	check := func(t *testing.T, pu parsed) {
		imp := importer.ForCompiler(pu.fset, "gc", func(path string) (io.ReadCloser, error) {
			file, ok := exports[path]
			if !ok {
				return nil, fmt.Errorf("no export data for %s", path)
			}
			return os.Open(file)
		})
		if pu.frag != nil {
			var errs []string
			conf := types.Config{Importer: imp, Error: func(err error) {
				if !softIgnored(err) {
					errs = append(errs, err.Error())
				}
			}}
			conf.Check("snippets", pu.fset, []*ast.File{pu.frag}, nil)
			for _, e := range errs {
				t.Error(e)
			}
		}
		for i, f := range pu.progs {
			var errs []string
			conf := types.Config{Importer: imp, Error: func(err error) { errs = append(errs, err.Error()) }}
			conf.Check(fmt.Sprintf("program%d", i), pu.fset, []*ast.File{f}, nil)
			for _, e := range errs {
				t.Error(e)
			}
		}
		t.Logf("%s: %d Go blocks type-checked (%d programs)", pu.u.md, pu.u.blocks, len(pu.progs))
	}
	for _, pu := range all {
		if len(all) == 1 {
			check(t, pu)
			continue
		}
		t.Run(filepath.Base(pu.u.md), func(t *testing.T) { check(t, pu) })
	}
	return counts
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

// TestDocLinks checks every relative link in README.md and docs/*.md: the
// file or directory it names exists, and a #fragment on a markdown page
// (or alone, for the page itself) names one of that page's headings as
// GitHub anchors them. Links to other sites are not followed.
func TestDocLinks(t *testing.T) {
	pages := append([]string{"README.md"}, docPages(t)...)
	anchors := map[string]map[string]bool{} // markdown file -> its heading anchors
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		md, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		a := headingAnchors(string(md))
		anchors[path] = a
		return a
	}
	links := 0
	for _, page := range pages {
		md, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range markdownLinks(string(md)) {
			target := l.target
			if i := strings.IndexAny(target, " \t"); i >= 0 { // [x](path "title")
				target = target[:i]
			}
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			file, frag, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link %q: %v", page, l.line, l.target, err)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(path, ".md") && !anchorsOf(path)[frag] {
				t.Errorf("%s:%d: link %q: %s has no heading with the anchor #%s", page, l.line, l.target, path, frag)
			}
		}
	}
	t.Logf("%d relative links in %d pages checked", links, len(pages))
}

type mdLink struct {
	target string
	line   int
}

var mdLinkRE = regexp.MustCompile(`\]\(([^()\s]+(?:\s+"[^"]*")?)\)`)

// markdownLinks returns the inline links of md ([text](target)) outside
// fenced blocks and code spans.
func markdownLinks(md string) []mdLink {
	var links []mdLink
	fenced := false
	for i, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range mdLinkRE.FindAllStringSubmatch(stripCodeSpans(line), -1) {
			links = append(links, mdLink{target: m[1], line: i + 1})
		}
	}
	return links
}

// stripCodeSpans blanks what lies between backticks on one line.
func stripCodeSpans(line string) string {
	parts := strings.Split(line, "`")
	for i := 1; i < len(parts); i += 2 {
		parts[i] = ""
	}
	return strings.Join(parts, "`")
}

// headingAnchors returns the anchors GitHub gives md's headings:
// lowercased, every character but letters, digits, marks, '_', '-' and
// ' ' dropped, spaces made hyphens, and -1, -2, ... after a repeat.
func headingAnchors(md string) map[string]bool {
	seen := map[string]int{}
	anchors := map[string]bool{}
	fenced := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// TestReadmeCommands: the README's two commands, the ones .ci/run runs
// (the tests with -race and a timeout; knitbench short), stay in it
// verbatim, each on a code line of its own; and the README stays a page a
// newcomer reads, under 1,500 words (wc -w), with the rest in docs/.
func TestReadmeCommands(t *testing.T) {
	md, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		"go run ./bench/cmd/knitbench",
		"go test -race ./... ./bench/...",
	} {
		found := false
		for _, line := range strings.Split(string(md), "\n") {
			if strings.TrimSpace(line) == cmd && (strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t")) {
				found = true
			}
		}
		if !found {
			t.Errorf("README.md: no code line %q", cmd)
		}
	}
	if n := len(strings.Fields(string(md))); n >= 1500 {
		t.Errorf("README.md has %d words; keep it under 1,500 and move the rest to docs/", n)
	}
}
