package knit_test

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"strings"
	"testing"
)

// TestKeepFencedRefusesNonRings type-checks calls of knit.KeepFenced as a
// user's package would make them: every ring and end compiles, and
// anything else does not (an Event, a channel, a ring held as a Queue, a
// user's type with a method of the same name), since Watchable's method
// is unexported.
func TestKeepFencedRefusesNonRings(t *testing.T) {
	if testing.Short() {
		t.Skip("builds export data for the imports with go list")
	}
	const prelude = "package user\n\nimport \"github.com/knit-go/knit\"\n\nvar _ = knit.KeepFenced[knit.Watchable]\n\n"
	good := []string{
		`q := knit.KeepFenced(knit.NewMPMC[int](8, knit.Park{})); _ = q.TryPush(1)`,
		`knit.KeepFenced(knit.NewMPSC[int](8, knit.Park{})); knit.KeepFenced(knit.NewSPMC[int](8, knit.Park{}))`,
		`s := knit.NewSPSC[int](8, knit.Park{}); p, c := s.Ends(); knit.KeepFenced(s); knit.KeepFenced(p); knit.KeepFenced(c)`,
		`w := knit.NewWords(8, knit.Park{}); p, c := w.Ends(); knit.KeepFenced(w); knit.KeepFenced(p); knit.KeepFenced(c)`,
		`knit.KeepFenced(knit.NewMailbox[int](knit.Park{})); knit.KeepFenced(knit.NewBacklog[int](knit.Park{}))`,
		`b := knit.NewBroadcast[int](8, knit.Park{}); knit.KeepFenced(b); knit.KeepFenced(b.Subscribe())`,
	}
	bad := []string{
		`knit.KeepFenced(new(knit.Event))`,
		`knit.KeepFenced(make(chan int))`,
		`knit.KeepFenced(42)`,
		`var q knit.Queue[int] = knit.NewMPMC[int](8, knit.Park{}); knit.KeepFenced(q)`,
		`p, _ := knit.NewSPSC[int](8, knit.Park{}).Ends(); var q knit.Producer[int] = p; knit.KeepFenced(q)`,
		`var q knit.MPMC[int]; knit.KeepFenced(q)`,
		`knit.KeepFenced(fake{})`,
	}
	const fake = "type fake struct{}\n\nfunc (fake) watchBells() {}\n\n"
	exports := exportData(t, "github.com/knit-go/knit")
	check := func(body string) []string {
		fset := token.NewFileSet()
		src := prelude + fake + "func f() {\n" + body + "\n}\n"
		f, err := parser.ParseFile(fset, "user.go", src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		var errs []string
		conf := types.Config{
			Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
				file, ok := exports[path]
				if !ok {
					return nil, fmt.Errorf("no export data for %s", path)
				}
				return os.Open(file)
			}),
			// Every error counts, soft ones included: go/types reports
			// KeepFenced(42)'s as soft, and the snippets leave nothing
			// unused.
			Error: func(err error) { errs = append(errs, err.Error()) },
		}
		conf.Check("user", fset, []*ast.File{f}, nil)
		return errs
	}
	for _, body := range good {
		if errs := check(body); len(errs) != 0 {
			t.Errorf("%s: does not compile: %s", body, strings.Join(errs, "; "))
		}
	}
	for _, body := range bad {
		errs := check(body)
		if len(errs) == 0 {
			t.Errorf("%s: compiles; want KeepFenced to refuse it", body)
			continue
		}
		t.Logf("%s: %s", body, errs[0])
	}
}
