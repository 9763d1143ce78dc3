//go:build !(amd64 || arm64)

package suites

import "github.com/knit-go/knit/bench/internal/harness"

// haveLimitRing is false: the all-assembly limit rows exist only where
// limitring_$GOARCH.s does.
const haveLimitRing = false

// startLimitStream and startLimitPair stand in for rigtorp_limit.go's so
// that the suites compile; rigtorpRows and peerRows add no row that calls
// them.
func startLimitStream(capacity, slot int) harness.Bench {
	panic("knitbench: no all-assembly limit ring on this GOARCH")
}

func startLimitPair() harness.Bench {
	panic("knitbench: no all-assembly limit ring on this GOARCH")
}
