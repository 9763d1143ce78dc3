package harness

import (
	"strings"
	"testing"
	"time"
)

func TestParseConfigs(t *testing.T) {
	cfgs, err := ParseConfigs("inline, knit:1, knit:2:0@3, knit:4:50us, semaphore:2, ants:8@1", 2)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cfgs {
		names = append(names, c.String())
	}
	want := "inline G=2|knit w=1 spin=default G=2|knit w=2 spin=0 G=3|knit w=4 spin=50us G=2|semaphore w=2 G=2|ants w=8 G=1"
	if got := strings.Join(names, "|"); got != want {
		t.Errorf("ParseConfigs:\n got %s\nwant %s", got, want)
	}
	if s := cfgs[3].Variant.Spin; !s.Fixed || s.D != 50*time.Microsecond {
		t.Errorf("knit:4:50us spin = %+v", s)
	}
	for _, bad := range []string{"", "knit:1", "inline,knit", "inline,knit:0", "inline,knit:1:fast", "inline,ants:2:0", "inline:1", "inline,fibers:2", "inline@0", "inline,knit:1@x"} {
		if _, err := ParseConfigs(bad, 2); err == nil {
			t.Errorf("ParseConfigs(%q) accepted", bad)
		}
	}
	for _, plan := range []string{QuickPlan, FullPlan()} {
		if _, err := ParseConfigs(plan, 1); err != nil {
			t.Errorf("built-in plan %q: %v", plan, err)
		}
	}
}

func TestCPUList(t *testing.T) {
	for in, want := range map[string]string{"0": "0", "0-3": "0-3", "3,1,2,0": "0-3", "0-1,4,6-7": "0-1,4,6-7", "": "", "5,5": "5"} {
		l, err := ParseCPUList(in)
		if err != nil || l.String() != want {
			t.Errorf("ParseCPUList(%q) = %v (%v), want %s", in, l, err, want)
		}
	}
	for _, bad := range []string{"a", "3-1", "-1", "1-"} {
		if _, err := ParseCPUList(bad); err == nil {
			t.Errorf("ParseCPUList(%q) accepted", bad)
		}
	}
	for n, want := range map[int]string{1: "0|0", 2: "0|1", 4: "0-2|3", 16: "0-11|12-15"} {
		all := make(CPUList, n)
		for i := range all {
			all[i] = i
		}
		s, l := SplitCPUs(all)
		if got := s.String() + "|" + l.String(); got != want {
			t.Errorf("SplitCPUs(%d CPUs) = %s, want %s", n, got, want)
		}
	}
}
