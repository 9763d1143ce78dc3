package suites

import (
	"context"
	"time"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/bench/internal/harness"
)

// The idle suite reads process CPU while something is started and given
// nothing to do: the column that exposed Knitting's spin policy (6.4 idle
// cores at 15 workers). Its rows are harness.IdleRow rows, one table, a
// goroutine blocked on a channel receive as the baseline.
//
// More rows (the pool's) come from a row provider joined to this suite in
// the registry (withRows(idleSuite, idlePoolRows)), built with idleRow so
// that they share the table, the tick and the settle time:
//
//	func idlePoolRows(cfg harness.Config) []harness.Row {
//		return []harness.Row{idleRow(cfg, "knit pool, 1 worker", startIdlePool(pool.Config{Workers: 1}))}
//	}
var idleSuite = harness.Suite{
	Name: "idle",
	Description: "Process CPU (cores) while a started thing sits with no load, after a settle time; " +
		"each round's window is one tick of sleep, about 2 s in all per row (5 s with -full). " +
		"The cores column has two decimals; for finer readings, cores = CPU-µs/op / (µs/op): " +
		"at a 400 ms tick, 400 CPU-µs/op is 0.001 cores. " +
		"Target for a ring consumer blocked in Pop: < 0.001 cores once its spin budget is over.",
	Unit: "idle tick (read the cores column)",
	Ref:  idleRef,
	Rows: func(cfg harness.Config) []harness.Row {
		rows := []harness.Row{
			idleRow(cfg, idleRef, startIdleChan),
			idleRow(cfg, "knit SPSC consumer in Pop, no spin", startIdleRing(false, 1, knit.Park{Spin: knit.NoSpin})),
			idleRow(cfg, "knit SPSC consumer in Pop, spin 50µs", startIdleRing(false, 1, knit.Park{Spin: 50 * time.Microsecond})),
		}
		if cfg.Scale == harness.Full {
			rows = append(rows,
				idleRow(cfg, "knit SPSC consumer in Pop, locked thread, spin 50µs, futex",
					startIdleRing(true, 1, knit.Park{Spin: 50 * time.Microsecond, Backend: knit.BackendFutex})),
				idleRow(cfg, "knit MPMC, 4 consumers in Pop, spin 50µs",
					startIdleRing(false, 4, knit.Park{Spin: 50 * time.Microsecond})),
			)
		}
		return rows
	},
}

// idleRef is the baseline row: one goroutine blocked in a channel receive.
const idleRef = "Go channel receive (baseline)"

// idleGroup is the idle suite's one table.
const idleGroup = ""

// idleRow makes a row of the idle table. start starts the thing and
// returns how to stop it; idleRow adds the settle time (spin budgets run
// out, workers finish starting) before the window opens.
func idleRow(cfg harness.Config, name string, start func(cfg harness.Config) (stop func(), err error)) harness.Row {
	settle := 20 * time.Millisecond
	if cfg.Scale == harness.Tiny {
		settle = time.Millisecond
	}
	return harness.IdleRow(idleGroup, name, idleTick(cfg), func(cfg harness.Config) (func(), error) {
		stop, err := start(cfg)
		if err != nil {
			return nil, err
		}
		time.Sleep(settle)
		return stop, nil
	})
}

// idleTick is one round's window: about 2 s per row over all rounds in
// quick mode, 5 s with -full, within [100 ms, 1 s] a round. The harness
// times at least one tick per round, so the window is the tick whenever
// the tick exceeds -duration.
func idleTick(cfg harness.Config) time.Duration {
	total := 2 * time.Second
	switch cfg.Scale {
	case harness.Tiny:
		return time.Millisecond
	case harness.Full:
		total = 5 * time.Second
	}
	return min(max(total/time.Duration(max(cfg.Rounds, 1)), 100*time.Millisecond), time.Second)
}

func startIdleChan(harness.Config) (func(), error) {
	ch := make(chan uint64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ch
	}()
	return func() { close(ch); <-done }, nil
}

// startIdleRing starts consumers goroutines blocked in Pop on an empty
// ring (an SPSC for one, an MPMC for more); locked puts each on its own
// locked thread, as BackendFutex expects.
func startIdleRing(locked bool, consumers int, park knit.Park) func(harness.Config) (func(), error) {
	return func(cfg harness.Config) (func(), error) {
		var q knit.Consumer[uint64]
		var closeRing func()
		if consumers == 1 {
			tx, rx := knit.NewSPSC[uint64](ringCap, park).Ends()
			q, closeRing = rx, tx.Close
		} else {
			m := knit.NewMPMC[uint64](ringCap, park)
			q, closeRing = m, m.Close
		}
		done := make(chan struct{}, consumers)
		for i := range consumers {
			go func() {
				defer func() { done <- struct{}{} }()
				if locked {
					release := cfg.LockThread(i)
					defer release()
				}
				q.Pop(context.Background())
			}()
		}
		return func() {
			closeRing()
			for range consumers {
				<-done
			}
		}, nil
	}
}
