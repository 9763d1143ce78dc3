//go:build !(amd64 || arm64)

package suites

// haveLimitRing is false: the all-assembly limit rows exist only where
// limitring_$GOARCH.s does.
const haveLimitRing = false
