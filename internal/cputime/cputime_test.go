package cputime

import (
	"runtime"
	"testing"
	"time"
)

func TestProcessGrowsWithWork(t *testing.T) {
	before, ok := Process()
	if !ok {
		if runtime.GOOS != "windows" && runtime.GOOS != "plan9" {
			t.Fatalf("no process CPU time on %s", runtime.GOOS)
		}
		t.Skip("no getrusage on", runtime.GOOS)
	}
	x := 0
	for start := time.Now(); time.Since(start) < 30*time.Millisecond; {
		x++
	}
	after, _ := Process()
	if after <= before {
		t.Fatalf("CPU time did not grow over 30 ms of spinning: %v then %v (%d)", before, after, x)
	}
}
