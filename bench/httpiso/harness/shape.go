package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Shape is one load shape's outcome against one server.
type Shape struct {
	Mode  string `json:"mode"`
	Conns int    `json:"conns,omitempty"`
	Rate  int    `json:"rate_per_route,omitempty"`

	Routes map[string]RouteResult `json:"routes"`

	Wall       time.Duration `json:"wall_ns"`       // the window as the driver saw it
	ServerCPU  time.Duration `json:"server_cpu_ns"` // utime+stime of the server over Wall
	Cores      float64       `json:"server_cores"`  // ServerCPU / Wall
	LoadCores  float64       `json:"load_cores"`    // the load process's CPU / window
	OtherCores float64       `json:"other_cores"`   // the rest of the machine over Wall: other processes, the driver, the kernel
	Threads    int           `json:"os_threads"`    // the server's OS threads at the window's end
	TotalRPS   float64       `json:"total_rps"`
	CPUPerReq  float64       `json:"cpu_us_per_req"` // server CPU-µs per completed request
	RPSPerCore float64       `json:"rps_per_core"`
}

// Success is the lowest success rate over the routes.
func (s *Shape) Success() float64 {
	lo := 1.0
	for _, r := range s.Routes {
		lo = min(lo, r.Success)
	}
	return lo
}

// runShape starts a load process pinned to cpus (at the server's nice
// value, so that neither is favoured), reads the server's CPU
// at the load's window markers, and collects the load's report. The load
// is a separate process so that its CPU, its goroutines and its garbage
// are never charged to the server, and vice versa.
func (l Launcher) runShape(spec LoadSpec, serverPID int, cpus CPUList, nice int) (*Shape, error) {
	in, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(l.Exe, "load")
	cmd.Env = append(os.Environ(), l.Env...)
	cmd.Stdin = bytes.NewReader(in)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := startPinned(cmd, cpus, nice); err != nil {
		return nil, fmt.Errorf("starting the load: %v", err)
	}
	// Bound the whole load: warm-up, window, and the requests still in
	// flight at its end.
	limit := time.AfterFunc(spec.Warmup+spec.Window+spec.Timeout+30*time.Second, func() { cmd.Process.Kill() })
	defer limit.Stop()

	shape := &Shape{Mode: spec.Mode, Conns: spec.Conns, Rate: spec.Rate}
	var (
		c0, c1 time.Duration
		m0, m1 time.Duration // the whole machine's busy time
		t0, t1 time.Time
		res    *LoadResult
		errs   []error
	)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == markStart:
			t0 = time.Now()
			if c0, err = procCPU(serverPID); err != nil {
				errs = append(errs, err)
			}
			m0, _ = machineBusy()
		case line == markEnd:
			t1 = time.Now()
			if c1, err = procCPU(serverPID); err != nil {
				errs = append(errs, err)
			}
			m1, _ = machineBusy()
			if shape.Threads, err = procThreads(serverPID); err != nil {
				errs = append(errs, err)
			}
		case strings.HasPrefix(line, markResult):
			res = new(LoadResult)
			if err := json.Unmarshal([]byte(line[len(markResult):]), res); err != nil {
				errs = append(errs, fmt.Errorf("load result: %v", err))
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		errs = append(errs, fmt.Errorf("load process: %v\n%s", err, stderr.String()))
	}
	if res == nil || t0.IsZero() || t1.IsZero() {
		errs = append(errs, fmt.Errorf("load process gave no complete report\n%s", stderr.String()))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	shape.Routes = res.Routes
	shape.Wall = t1.Sub(t0)
	shape.ServerCPU = c1 - c0
	shape.Cores = shape.ServerCPU.Seconds() / shape.Wall.Seconds()
	shape.LoadCores = res.LoadCPU.Seconds() / spec.Window.Seconds()
	shape.OtherCores = max(0, (m1-m0).Seconds()/shape.Wall.Seconds()-shape.Cores-shape.LoadCores)
	for _, r := range res.Routes {
		shape.TotalRPS += r.RPS
	}
	if shape.TotalRPS > 0 {
		shape.CPUPerReq = shape.Cores * 1e6 / shape.TotalRPS
	}
	if shape.Cores > 0 {
		shape.RPSPerCore = shape.TotalRPS / shape.Cores
	}
	return shape, nil
}
