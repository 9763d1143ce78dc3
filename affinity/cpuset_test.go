package affinity

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestCPUSetZero(t *testing.T) {
	var s CPUSet
	if s.Len() != 0 || s.Has(0) || s.String() != "" || len(slices.Collect(s.All())) != 0 {
		t.Fatalf("zero CPUSet = %q, Len %d, All %v; want empty", s, s.Len(), slices.Collect(s.All()))
	}
	if s != (CPUSet{}) {
		t.Fatal("zero CPUSet != CPUSet{}")
	}
}

func TestCPUSetAdd(t *testing.T) {
	var s CPUSet
	s.Add(10, 3)
	s.Add()
	s.Add(3, 1000)
	if got, want := slices.Collect(s.All()), []int{3, 10, 1000}; !slices.Equal(got, want) {
		t.Fatalf("All() = %v, want %v", got, want)
	}
	if s.Len() != 3 || !s.Has(1000) || s.Has(999) || s.Has(-1) || s.Has(1<<20) {
		t.Fatalf("Len/Has wrong for %v", s)
	}

	// A copy is independent of the original.
	c := s
	c.Add(4)
	if s.Has(4) || !c.Has(4) {
		t.Fatalf("Add on a copy changed the original: %v, copy %v", s, c)
	}

	// == is set equality, however the set was built.
	var a, b CPUSet
	a.Add(0, 1, 2, 300)
	b.Add(300)
	b.Add(2, 1, 0)
	if a != b {
		t.Fatalf("%v != %v", a, b)
	}
	if p, _ := ParseCPUSet("0-2,300"); p != a {
		t.Fatalf("parsed %v != built %v", p, a)
	}
}

func TestCPUSetAddPanics(t *testing.T) {
	for _, cpu := range []int{-1, 1 << 16, 1 << 30} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "out of range") {
					t.Errorf("Add(%d): recovered %v, want an out-of-range panic", cpu, r)
				}
			}()
			var s CPUSet
			s.Add(1, cpu)
		}()
	}
}

func TestCPUSetAllStops(t *testing.T) {
	s, _ := ParseCPUSet("1-5")
	var got []int
	for c := range s.All() {
		got = append(got, c)
		if c == 3 {
			break
		}
	}
	if !slices.Equal(got, []int{1, 2, 3}) {
		t.Fatalf("All with break yielded %v", got)
	}
}

func TestCPUSetString(t *testing.T) {
	for _, tc := range []struct {
		cpus []int
		want string
	}{
		{nil, ""},
		{[]int{0}, "0"},
		{[]int{0, 1}, "0-1"},
		{[]int{0, 2}, "0,2"},
		{[]int{0, 1, 2, 3, 8, 10, 11}, "0-3,8,10-11"},
		{[]int{7, 8}, "7-8"}, // a run across a byte boundary
		{[]int{1, 3, 5, 6, 7, 63, 64, 65, 4095}, "1,3,5-7,63-65,4095"},
	} {
		var s CPUSet
		s.Add(tc.cpus...)
		if got := s.String(); got != tc.want {
			t.Errorf("%v.String() = %q, want %q", tc.cpus, got, tc.want)
		}
	}
}

func TestParseCPUSet(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []int
	}{
		{"", nil},
		{"\n", nil}, // sysfs's "offline" when none is
		{"0\n", []int{0}},
		{"0-3,8,10-11", []int{0, 1, 2, 3, 8, 10, 11}},
		{"8,0-1", []int{0, 1, 8}},
		{"0-3,2-5,4", []int{0, 1, 2, 3, 4, 5}},
		{"5-5", []int{5}},
		{"007", []int{7}},
		{"65535", []int{65535}},
	} {
		s, err := ParseCPUSet(tc.text)
		if err != nil {
			t.Errorf("ParseCPUSet(%q): %v", tc.text, err)
			continue
		}
		if got := slices.Collect(s.All()); !slices.Equal(got, tc.want) && !(len(got) == 0 && tc.want == nil) {
			t.Errorf("ParseCPUSet(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestParseCPUSetErrors(t *testing.T) {
	for _, tc := range []struct {
		text, part string // part: what the error must quote
	}{
		{"x", `"x"`},
		{"0-3,x", `"x"`},
		{"0-3,,5", "empty element"},
		{",0", "empty element"},
		{"0,", "empty element"},
		{"-1", `"-1"`},
		{"1-", `"1-"`},
		{"3-1", `range "3-1" runs backwards`},
		{"+1", `"+1"`},
		{"1-+2", `"1-+2"`},
		{"0x1", `"0x1"`},
		{"1 ,2", `"1 "`},
		{"0-3:2/4", `"0-3:2/4"`}, // the kernel's stride form is not accepted
		{"1-2-3", `"1-2-3"`},
		{"65536", "out of range"},
		{"0-99999999999999999999", "out of range"},
	} {
		_, err := ParseCPUSet(tc.text)
		if err == nil {
			t.Errorf("ParseCPUSet(%q) succeeded, want an error", tc.text)
			continue
		}
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseCPUSet(%q) error %v does not wrap ErrSyntax", tc.text, err)
		}
		if !strings.Contains(err.Error(), tc.part) {
			t.Errorf("ParseCPUSet(%q) error %q does not name %s", tc.text, err, tc.part)
		}
	}
}

func TestCPUSetRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		var s CPUSet
		n := r.IntN(64)
		for range n {
			// Mostly dense low ids, as real sets are, with some far ones.
			if r.IntN(8) == 0 {
				s.Add(r.IntN(cpuLimit))
			} else {
				s.Add(r.IntN(130))
			}
		}
		p, err := ParseCPUSet(s.String())
		if err != nil || p != s {
			t.Fatalf("ParseCPUSet(%q) = %v, %v; want the set back", s, p, err)
		}
		if got := p.Len(); got != len(slices.Collect(s.All())) {
			t.Fatalf("Len %d != len(All) %d", got, len(slices.Collect(s.All())))
		}
	}
}

func TestSetOps(t *testing.T) {
	a, _ := ParseCPUSet("0-9,100")
	b, _ := ParseCPUSet("5-20")
	if got := intersect(a, b).String(); got != "5-9" {
		t.Errorf("intersect = %q", got)
	}
	if got := without(a, b).String(); got != "0-4,100" {
		t.Errorf("without = %q", got)
	}
	if got := without(b, a).String(); got != "10-20" {
		t.Errorf("without = %q", got)
	}
	// Results are normalised: an empty result equals the zero set.
	if got := intersect(a, without(b, a)); got != (CPUSet{}) || without(a, a) != (CPUSet{}) {
		t.Errorf("empty results not normalised: %q", got.bits)
	}
	for _, tc := range []struct {
		set       string
		cpu, next int
		ok        bool
	}{
		{"0-3", 1, 2, true},
		{"0-3", 3, 0, true},
		{"0,8", 8, 0, true},
		{"0,8", 5, 8, true},
		{"4", 4, -1, false},
		{"", 0, -1, false},
	} {
		s, _ := ParseCPUSet(tc.set)
		if next, ok := s.next(tc.cpu); next != tc.next || ok != tc.ok {
			t.Errorf("%q.next(%d) = %d, %v; want %d, %v", tc.set, tc.cpu, next, ok, tc.next, tc.ok)
		}
	}
}
