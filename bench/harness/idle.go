package harness

import (
	"fmt"
	"time"
)

// Idle is process CPU over a window in which nothing was asked of the
// thing under test.
type Idle struct {
	Wall  time.Duration `json:"wall_ns"`
	CPU   time.Duration `json:"cpu_ns"`
	Cores float64       `json:"cores"` // CPU / Wall
}

// MeasureIdle starts a thing, lets it settle (workers finish starting,
// spin budgets run out), then reads process CPU across window with no
// load. Cores near 0 means it parks; near 1 per spinning thread means it
// burns a core doing nothing. This is the column that exposed Knitting's
// spin policy (6.4 idle cores at 15 workers), so it is measured, never
// assumed.
func MeasureIdle(start func() (stop func(), err error), settle, window time.Duration) (Idle, error) {
	stop, err := start()
	if err != nil {
		return Idle{}, err
	}
	defer stop()
	time.Sleep(settle)
	c0, ok0 := processCPU()
	t0 := time.Now()
	time.Sleep(window)
	wall := time.Since(t0)
	c1, ok1 := processCPU()
	if !ok0 || !ok1 {
		return Idle{}, fmt.Errorf("process CPU time is not available on this OS")
	}
	return Idle{Wall: wall, CPU: c1 - c0, Cores: float64(c1-c0) / float64(wall)}, nil
}

// IdleRow makes a row whose op is one tick of sleeping while the thing
// start made sits idle; read its cores column (CPU-µs/op over µs/op).
// It lets an idle measurement sit in a suite table beside timed rows.
func IdleRow(group, name string, tick time.Duration, start func(cfg Config) (stop func(), err error)) Row {
	return Row{
		Group: group,
		Name:  name,
		Start: func(cfg Config) (Bench, error) {
			stop, err := start(cfg)
			if err != nil {
				return nil, err
			}
			return idleBench{tick: tick, stop: stop}, nil
		},
	}
}

type idleBench struct {
	tick time.Duration
	stop func()
}

func (b idleBench) Run(n int) error {
	time.Sleep(time.Duration(n) * b.tick)
	return nil
}

func (b idleBench) Close() error {
	b.stop()
	return nil
}
