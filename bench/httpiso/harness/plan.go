package harness

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/knit-go/knit/bench/httpiso"
)

// Config is one server configuration: a variant and the server's
// GOMAXPROCS, which is always set explicitly (the runtime's default would
// follow the affinity mask and hide what was measured).
type Config struct {
	Variant    httpiso.VariantConfig
	GOMAXPROCS int
}

// String names the configuration as the tables do: "inline",
// "knit w=1 spin=default", "ants w=2", with " G=n" appended.
func (c Config) String() string {
	return fmt.Sprintf("%s G=%d", c.Variant, c.GOMAXPROCS)
}

// ParseConfigs reads a comma-separated plan. Each item is
//
//	inline | knit:W[:SPIN] | semaphore:W | ants:W
//
// optionally followed by @G for that configuration's GOMAXPROCS (else
// defaultG). SPIN is as ParseSpin reads it: default, 0, 50 (µs), 50us.
// The first item is the reference that ratios and the open-loop rate are
// taken from; it must be inline.
func ParseConfigs(spec string, defaultG int) ([]Config, error) {
	var out []Config
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		c := Config{GOMAXPROCS: defaultG}
		if body, g, ok := strings.Cut(item, "@"); ok {
			n, err := strconv.Atoi(g)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("config %q: bad GOMAXPROCS %q", item, g)
			}
			item, c.GOMAXPROCS = body, n
		}
		parts := strings.Split(item, ":")
		c.Variant.Name = parts[0]
		switch {
		case parts[0] == httpiso.Inline && len(parts) == 1:
		case (parts[0] == httpiso.Semaphore || parts[0] == httpiso.Ants) && len(parts) == 2,
			parts[0] == httpiso.Knit && (len(parts) == 2 || len(parts) == 3):
			w, err := strconv.Atoi(parts[1])
			if err != nil || w < 1 {
				return nil, fmt.Errorf("config %q: bad worker count %q", item, parts[1])
			}
			c.Variant.Workers = w
			if len(parts) == 3 {
				if c.Variant.Spin, err = httpiso.ParseSpin(parts[2]); err != nil {
					return nil, fmt.Errorf("config %q: %v", item, err)
				}
			}
		default:
			return nil, fmt.Errorf("config %q: want inline, knit:W[:SPIN], semaphore:W or ants:W", item)
		}
		if c.GOMAXPROCS < 1 {
			return nil, fmt.Errorf("config %q: GOMAXPROCS must be set", item)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no configurations in %q", spec)
	}
	if out[0].Variant.Name != httpiso.Inline {
		return nil, fmt.Errorf("the first configuration is the reference and must be inline, have %s", out[0])
	}
	return out, nil
}

// QuickPlan is the default plan: the inline reference, each peer at one
// worker, and the knit pool at one and two workers under each spin
// policy (section C's rows at the sizes a 2-CPU machine can tell apart).
const QuickPlan = "inline,semaphore:1,ants:1,knit:1:default,knit:1:0,knit:1:50us,knit:2:default,knit:2:50us"

// FullPlan is the Knitting example's sweep for a 16-core machine: pool sizes 1, 2,
// 4, 8 and 15, each under the default policy, no spin and a flat 50 µs
// (the Knitting example's section C), the peers at 1, 4 and 15, and the inline
// reference. inline@1 is the Knitting example's hono_only (one thread runs every
// request); the reference inline runs at the server's full GOMAXPROCS,
// which is what a Go server is without a pool.
func FullPlan() string {
	items := []string{"inline", "inline@1"}
	for _, n := range []int{1, 2, 4, 8, 15} {
		for _, spin := range []string{"default", "0", "50us"} {
			items = append(items, fmt.Sprintf("knit:%d:%s", n, spin))
		}
	}
	for _, n := range []int{1, 4, 15} {
		items = append(items, fmt.Sprintf("semaphore:%d", n), fmt.Sprintf("ants:%d", n))
	}
	return strings.Join(items, ",")
}
