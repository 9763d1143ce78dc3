package httpiso

import (
	"context"

	"github.com/knit-go/knit"
	"github.com/knit-go/knit/pool"
)

// knitExec runs heavy work as knit pool tasks. The handler calls the
// route's task with the body and parks on the Future; the worker decodes,
// validates, renders or signs, and the reply comes back through the
// Future. Its slots are recycled, so a call allocates nothing in the
// pool itself.
type knitExec struct {
	p *pool.Pool
}

func newKnit(workers int, spin Spin) *knitExec {
	cfg := pool.Config{Workers: workers}
	if spin.Fixed {
		cfg.Park.Spin = spin.D
		if spin.D == 0 {
			cfg.Park.Spin = knit.NoSpin // 0 would mean the pool's default
		}
	}
	return &knitExec{p: pool.New(cfg)}
}

func (k *knitExec) Bind(w Work) Runner {
	task := pool.NewTask(k.p, w)
	return func(ctx context.Context, body []byte) (Reply, error) {
		return task.Call(body).Wait(ctx)
	}
}

func (k *knitExec) Close(ctx context.Context) error { return k.p.Shutdown(ctx) }

// Stats exposes the pool's counters for the server's exit line.
func (k *knitExec) Stats() pool.Stats { return k.p.Stats() }
