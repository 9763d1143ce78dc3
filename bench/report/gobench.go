package report

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// GoBench is the report in the Go benchmark format (`go test -bench`'s
// output), one line per row per round, so that benchstat reads a
// knitbench run as it reads `go test -count N`:
//
//	benchstat old/results.txt new/results.txt
//
// A row is Benchmark<Suite>/<group>/<row>-<GOMAXPROCS> (the suite's
// first letter in upper case, as the format asks), spaces in names
// turned to underscores and slashes to U+2215 (∕, which reads the same
// and does not split a sub-benchmark). Each line carries the round's
// ops, ns/op, and where measured cpu-ns/op (process CPU), allocs/op
// (process heap allocations) and one column per counter
// (context-switches/op, ...).
func GoBench(r Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "goos: %s\ngoarch: %s\npkg: knitbench\n", r.Machine.GOOS, r.Machine.GOARCH)
	if r.Machine.CPU != "" {
		fmt.Fprintf(&b, "cpu: %s\n", r.Machine.CPU)
	}
	fmt.Fprintf(&b, "knit-revision: %s\nknitbench-schema: %d\n", r.Run.Code.Short(), SchemaVersion)
	procs := r.Machine.GOMAXPROCS
	for _, s := range r.Suites {
		for _, row := range s.Rows {
			if row.Error != "" {
				continue
			}
			name := "Benchmark" + upperFirst(benchName(s.Name))
			if row.Group != "" {
				name += "/" + benchName(row.Group)
			}
			name += "/" + benchName(row.Name)
			if procs > 0 {
				name += "-" + strconv.Itoa(procs)
			}
			for _, smp := range row.Samples {
				fmt.Fprintf(&b, "%s\t%d\t%s ns/op", name, smp.Ops, num(smp.NsPerOp()))
				if row.HasCPU {
					fmt.Fprintf(&b, "\t%s cpu-ns/op", num(smp.CPUNsPerOp()))
				}
				fmt.Fprintf(&b, "\t%s allocs/op", num(smp.AllocsPerOp()))
				for _, c := range s.Counters {
					if v, ok := smp.Counters[c.Name]; ok {
						fmt.Fprintf(&b, "\t%s %s/op", num(float64(v)/float64(smp.Ops)), c.Name)
					}
				}
				if row.Bytes > 0 && smp.Wall > 0 {
					fmt.Fprintf(&b, "\t%s MB/s", num(float64(row.Bytes)*float64(smp.Ops)/float64(smp.Wall)*1e3))
				}
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

// upperFirst capitalises the first letter: the format wants an upper
// case letter after "Benchmark".
func upperFirst(s string) string {
	for i, r := range s {
		return string(unicode.ToUpper(r)) + s[i+utf8.RuneLen(r):]
	}
	return s
}

// benchName makes a name one field of a benchmark line: no spaces, no
// sub-benchmark slash, no key=value.
func benchName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return '_'
		case r == '/':
			return '∕'
		case r == '=':
			return ':'
		}
		return r
	}, s)
	return s
}

// num prints a figure with enough digits for benchstat and no exponent
// for ordinary values.
func num(v float64) string {
	return strconv.FormatFloat(v, 'g', 6, 64)
}
