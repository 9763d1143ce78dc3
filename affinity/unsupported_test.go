//go:build !linux

package affinity

import (
	"errors"
	"runtime"
	"testing"
)

func TestUnsupported(t *testing.T) {
	var one CPUSet
	one.Add(0)
	calls := map[string]error{}
	_, calls["Pin"] = Pin(0)
	_, calls["PinSet"] = PinSet(one)
	_, calls["Current"] = Current()
	if runtime.GOOS != "darwin" {
		_, calls["Available"] = Available()
		_, calls["Topology"] = Topology()
	}
	for name, err := range calls {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s on %s: %v, want errors.ErrUnsupported", name, runtime.GOOS, err)
		}
	}
}
