package testutil

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestWatchdogFires: a test that hangs past its watchdog dies with its
// name, the state it reports and the goroutines' stacks; one that ends in
// time, or stops its watchdog, does not.
func TestWatchdogFires(t *testing.T) {
	if os.Getenv("TESTUTIL_HANG") == "1" {
		Watchdog(t, 20*time.Millisecond, func() string { return "state: 7 waiters" })
		<-make(chan struct{}) // hang
	}
	cmd := SelfCommand("-test.run=^TestWatchdogFires$", "-test.timeout=60s")
	cmd.Env = append(os.Environ(), "TESTUTIL_HANG=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the hanging child passed:\n%s", out)
	}
	for _, want := range []string{"watchdog: TestWatchdogFires made no progress for 20ms", "state: 7 waiters", "goroutine "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("child output lacks %q:\n%s", want, out)
		}
	}
	stop := Watchdog(t, 10*time.Millisecond)
	stop()
	time.Sleep(30 * time.Millisecond) // past d: a stopped watchdog must not fire
}

//go:noinline
func blockedHere(c chan struct{}) { <-c }

// TestBlocked: a goroutine parked on a channel counts once it is parked,
// and not after it has gone.
func TestBlocked(t *testing.T) {
	const frame = "testutil.blockedHere("
	if n := Blocked(frame); n != 0 {
		t.Fatalf("Blocked before the goroutine started = %d", n)
	}
	c, done := make(chan struct{}), make(chan struct{})
	go func() { blockedHere(c); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for Blocked(frame) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the goroutine parked on a channel never counted as blocked")
		}
		time.Sleep(time.Millisecond)
	}
	close(c)
	<-done
	if n := Blocked(frame); n != 0 {
		t.Fatalf("Blocked after the goroutine returned = %d", n)
	}
}
