package shm

import (
	"testing"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/internal/spinpolicy"
)

// TestSpinPolicyAgrees: a ring end's spin budget, from the Park
// of CreateRing and AttachRing, and the budget of Workers follow the one
// rule of internal/spinpolicy, as knit's rings and the pool do: with
// GOMAXPROCS 8 on two CPUs the default does not spin. Backend does not
// change the budget.
func TestSpinPolicyAgrees(t *testing.T) {
	region := newRegion(t, RingSize(64))
	spinpolicy.EachShape(func(cpus, procs int, spins bool) {
		def := knit.DefaultWorkerSpin
		if !spins {
			def = 0
		}
		explicit := time.Microsecond
		if spinpolicy.Off() {
			explicit = 0
		}
		for _, tc := range []struct {
			name string
			park knit.Park
			want time.Duration
		}{
			{"the zero Park", knit.Park{}, def},
			{"NoSpin", knit.Park{Spin: knit.NoSpin}, 0},
			{"a negative Spin", knit.Park{Spin: -time.Second}, 0},
			{"1µs", knit.Park{Spin: time.Microsecond}, explicit},
			{"BackendFutex", knit.Park{Backend: knit.BackendFutex}, def},
			{"BackendRuntime, 1µs", knit.Park{Spin: time.Microsecond, Backend: knit.BackendRuntime}, explicit},
		} {
			p, err := CreateRing(region, 0, 64, RoleProducer, tc.park)
			if err != nil {
				t.Fatal(err)
			}
			c, err := AttachRing(region, 0, RoleConsumer, tc.park)
			if err != nil {
				t.Fatal(err)
			}
			if p.spin != tc.want || c.spin != tc.want {
				t.Errorf("%d CPUs, GOMAXPROCS %d, %s: ends spin %v and %v, want %v", cpus, procs, tc.name, p.spin, c.spin, tc.want)
			}
			p.Close()
			c.Close()
		}
		// Workers: Knitting's policy, a zero budget spins for one worker
		// only; an explicit one reads as everywhere.
		for _, tc := range []struct {
			spin    time.Duration
			workers int
			want    time.Duration
		}{
			{0, 1, def},
			{0, 2, 0},
			{knit.NoSpin, 1, 0},
			{knit.NoSpin, 4, 0},
			{time.Microsecond, 1, explicit},
			{time.Microsecond, 4, explicit},
		} {
			if got := workersSpin(tc.spin, tc.workers); got != tc.want {
				t.Errorf("%d CPUs, GOMAXPROCS %d: %d workers with Park.Spin %v spin %v, want %v", cpus, procs, tc.workers, tc.spin, got, tc.want)
			}
		}
	})
}
