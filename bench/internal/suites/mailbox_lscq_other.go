//go:build !(amd64 || arm64)

package suites

import "github.com/knit-go/knit/bench/internal/harness"

// lscqRow is empty where bytedance/gopkg's LSCQ has no assembly.
func lscqRow(string, int) []harness.Row { return nil }
