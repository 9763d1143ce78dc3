package httpiso

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Work is a heavy route's body function: the part of the request that a
// variant may move off the request goroutine.
type Work func(body []byte) Reply

// Runner runs one route's Work where its variant puts it and returns the
// reply. It fails only when the variant cannot run the work (closed, or
// ctx ended while waiting); the request goroutine then answers 503.
type Runner func(ctx context.Context, body []byte) (Reply, error)

// Executor is a variant: where heavy work runs.
type Executor interface {
	// Bind returns the Runner for one route's Work. The knit variant makes
	// one pool task per route, as the Knitting example makes one Knitting task each
	// for SSR and JWT.
	Bind(w Work) Runner
	// Close stops the variant's goroutines, bounded by ctx.
	Close(ctx context.Context) error
}

// Variant names.
const (
	Inline    = "inline"
	Knit      = "knit"
	Semaphore = "semaphore"
	Ants      = "ants"
)

// Variants lists the variant names in the order reports use.
var Variants = []string{Inline, Knit, Semaphore, Ants}

// VariantConfig selects and sizes a variant.
type VariantConfig struct {
	Name    string
	Workers int  // pool size or semaphore weight; ignored by inline
	Spin    Spin // knit only
}

// String is the configuration as reports and /__id name it, e.g.
// "knit w=1 spin=default".
func (c VariantConfig) String() string {
	switch c.Name {
	case Inline:
		return Inline
	case Knit:
		return fmt.Sprintf("knit w=%d spin=%s", c.Workers, c.Spin)
	}
	return fmt.Sprintf("%s w=%d", c.Name, c.Workers)
}

// NewExecutor starts the variant c names.
func NewExecutor(c VariantConfig) (Executor, error) {
	if c.Name != Inline && c.Workers < 1 {
		return nil, fmt.Errorf("httpiso: variant %s needs workers >= 1, have %d", c.Name, c.Workers)
	}
	switch c.Name {
	case Inline:
		return inline{}, nil
	case Knit:
		return newKnit(c.Workers, c.Spin), nil
	case Semaphore:
		return newSemaphore(c.Workers), nil
	case Ants:
		return newAnts(c.Workers)
	}
	return nil, fmt.Errorf("httpiso: unknown variant %q (want one of %s)", c.Name, strings.Join(Variants, ", "))
}

// inline runs the work in the handler: the Knitting example's hono_only, and in Go
// the scheduler's own answer, since every request already has its own
// goroutine spread over GOMAXPROCS Ps.
type inline struct{}

func (inline) Bind(w Work) Runner {
	return func(_ context.Context, body []byte) (Reply, error) { return w(body), nil }
}

func (inline) Close(context.Context) error { return nil }

// Spin is the knit pool's spin budget as the Knitting example's KNIT_SPIN sets it:
// the pool's default policy, no spin, or a fixed budget at every size.
type Spin struct {
	Fixed bool          // false: the pool's default policy
	D     time.Duration // the budget when Fixed; 0 never spins
}

// ParseSpin reads "default" (or ""), a bare integer in microseconds as
// KNIT_SPIN has it ("0", "50"), or a Go duration ("50us").
func ParseSpin(s string) (Spin, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "default" {
		return Spin{}, nil
	}
	if us, err := strconv.Atoi(s); err == nil {
		if us < 0 {
			return Spin{}, fmt.Errorf("httpiso: negative spin %q", s)
		}
		return Spin{Fixed: true, D: time.Duration(us) * time.Microsecond}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return Spin{}, fmt.Errorf("httpiso: spin %q is not default, microseconds or a duration", s)
	}
	return Spin{Fixed: true, D: d}, nil
}

// String is "default", "0" or the budget in microseconds with a unit
// ("50us"), and reads back through ParseSpin.
func (s Spin) String() string {
	switch {
	case !s.Fixed:
		return "default"
	case s.D == 0:
		return "0"
	case s.D%time.Microsecond == 0:
		return strconv.FormatInt(int64(s.D/time.Microsecond), 10) + "us"
	}
	return s.D.String()
}
