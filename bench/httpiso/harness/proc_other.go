//go:build !linux

package harness

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"time"
)

// The harness reads /proc for everything it asserts and measures; it
// runs on Linux only. These stubs keep the module building elsewhere.

var errNoProc = fmt.Errorf("httpiso harness: needs Linux /proc, have %s: %w", runtime.GOOS, errors.ErrUnsupported)

func procCPU(int) (time.Duration, error)                { return 0, errNoProc }
func procThreads(int) (int, error)                      { return 0, errNoProc }
func taskAffinity(int) ([]string, error)                { return nil, errNoProc }
func procCmdline(int) ([]string, error)                 { return nil, errNoProc }
func listenerOwner(int, int) (bool, error)              { return false, errNoProc }
func availableCPUs() (CPUList, error)                   { return nil, errNoProc }
func startPinned(cmd *exec.Cmd, _ CPUList, _ int) error { return cmd.Start() }
func procNice(int) (int, error)                         { return 0, errNoProc }
func pinSelf(CPUList) (func(), error)                   { return nil, errNoProc }
func cpuModel() string                                  { return runtime.GOARCH }
func loadAverage() string                               { return "?" }
func selfCPU() time.Duration                            { return 0 }
func machineBusy() (time.Duration, error)               { return 0, errNoProc }
