//go:build !knit_checkends

package knit

// checkEnds is off: see ends_check.go for what -tags knit_checkends
// checks. The guards are empty and their calls compile to nothing, so the
// rings' layout and hot paths are those of a build without the checks.
const checkEnds = false

type sideGuard struct{}

func (*sideGuard) enter(ring, side string) {}
func (*sideGuard) leave()                  {}
func (*sideGuard) closing(ring string)     {}
