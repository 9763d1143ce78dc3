package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/knit-go/knit/affinity"
	"golang.org/x/sys/unix"
)

// clockTick is the unit of utime and stime in /proc/PID/stat. USER_HZ is
// 100 on every Linux architecture Go supports; reading it properly needs
// sysconf, which is libc.
const clockTick = 10 * time.Millisecond

// procCPU is the CPU time (utime + stime, every thread, living or exited)
// of process pid so far.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces and parentheses: the
	// numeric fields start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime/stime %q %q", pid, f[11], f[12])
	}
	return time.Duration(ut+st) * clockTick, nil
}

// procStatus returns one field of /proc/PID/status (or of a task's status
// when pid is "PID/task/TID").
func procStatus(pid string, field string) (string, error) {
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && k == field {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("/proc/%s/status: no %s", pid, field)
}

// procThreads is the number of OS threads of pid now.
func procThreads(pid int) (int, error) {
	v, err := procStatus(strconv.Itoa(pid), "Threads")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(v)
}

// taskAffinity returns the distinct Cpus_allowed_list values over every
// thread of pid: one entry when the whole process is pinned alike.
func taskAffinity(pid int) ([]string, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, t := range tasks {
		v, err := procStatus(fmt.Sprintf("%d/task/%s", pid, t.Name()), "Cpus_allowed_list")
		if err != nil {
			continue // the thread exited between the listing and the read
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out, nil
}

// procCmdline is pid's argv.
func procCmdline(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"), nil
}

// listenerOwner reports whether process pid holds the socket listening on
// 127.0.0.1:port, by matching the socket's inode in /proc/net/tcp with
// pid's file descriptors. It is the check that a readiness probe cannot
// fake: an old server still on the port answers probes, but its socket
// is not in the new child's fd table.
func listenerOwner(pid, port int) (bool, error) {
	inode, err := listenInode(port)
	if err != nil {
		return false, err
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return false, err
	}
	want := "socket:[" + inode + "]"
	for _, fd := range fds {
		if l, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name())); err == nil && l == want {
			return true, nil
		}
	}
	return false, nil
}

// listenInode finds the inode of the TCP socket in LISTEN state on
// 127.0.0.1:port.
func listenInode(port int) (string, error) {
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return "", err
	}
	// The address is the in-memory u32, so its hex depends on byte order.
	locals := []string{fmt.Sprintf("0100007F:%04X", port), fmt.Sprintf("7F000001:%04X", port)}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 10 || f[3] != "0A" { // 0A: TCP_LISTEN
			continue
		}
		if f[1] == locals[0] || f[1] == locals[1] {
			return f[9], nil
		}
	}
	return "", fmt.Errorf("nothing listens on 127.0.0.1:%d", port)
}

// availableCPUs is the harness's own affinity mask.
func availableCPUs() (CPUList, error) {
	set, err := affinity.Available()
	if err != nil {
		return nil, err
	}
	return slices.Collect(set.All()), nil
}

func cpuSet(cpus CPUList) unix.CPUSet {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	return set
}

// startPinned starts cmd with its affinity mask set to cpus, and its
// nice value set to nice, from its first instruction. A child inherits
// both from the thread that forks it, so the fork happens on a locked
// thread that wears them for the moment: taskset and nice without the
// extra exec, and without the window in which a mask set from outside
// misses threads the runtime already started (both are per thread on
// Linux). An empty cpus leaves the mask alone; nice 0 leaves the
// priority alone.
//
// It sets the mask itself, not through affinity.PinSet: once the driver
// has pinned itself beside the load (pinSelf), its own mask is the load's
// CPUs, and PinSet refuses CPUs outside the process's mask.
func startPinned(cmd *exec.Cmd, cpus CPUList, nice int) error {
	if len(cpus) == 0 && nice == 0 {
		return cmd.Start()
	}
	runtime.LockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	oldNice, err := threadNice()
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	restore := func() bool {
		ok := unix.SchedSetaffinity(0, &old) == nil
		return unix.Setpriority(unix.PRIO_PROCESS, 0, oldNice) == nil && ok
	}
	if len(cpus) > 0 {
		set := cpuSet(cpus)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			runtime.UnlockOSThread()
			return fmt.Errorf("pinning to cpus %s: %v", cpus, err)
		}
	}
	if nice != 0 {
		if err := unix.Setpriority(unix.PRIO_PROCESS, 0, nice); err != nil {
			if restore() {
				runtime.UnlockOSThread()
			}
			return fmt.Errorf("nice %d: %v", nice, err)
		}
	}
	err = cmd.Start()
	if !restore() {
		// The thread keeps a mask or priority the runtime did not give
		// it: leave it locked, so no other goroutine ever runs on it.
		return err
	}
	runtime.UnlockOSThread()
	return err
}

// threadNice is the calling thread's nice value. The raw getpriority
// system call returns 20 - nice, so that it never returns a negative.
func threadNice() (int, error) {
	p, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		return 0, err
	}
	return 20 - p, nil
}

// procNice is the nice value of pid's main thread (field 19 of its stat).
func procNice(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	// f[0] is field 3 (state); nice is field 19.
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 17 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	return strconv.Atoi(f[16])
}

// pinSelf moves every thread of this process to cpus and returns a func
// that puts them back on the mask they had. Threads the runtime starts in
// between inherit the mask from the thread that creates them. The driver
// pins itself next to the load, off the server's CPUs. affinity pins the
// calling thread only, so this sets each thread's mask itself.
func pinSelf(cpus CPUList) (restore func(), err error) {
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return nil, err
	}
	set := cpuSet(cpus)
	if err := setAllThreads(&set); err != nil {
		setAllThreads(&old)
		return nil, fmt.Errorf("pinning the driver to cpus %s: %v", cpus, err)
	}
	return func() { setAllThreads(&old) }, nil
}

func setAllThreads(set *unix.CPUSet) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
			return fmt.Errorf("thread %d: %v", tid, err)
		}
	}
	return nil
}

// cpuModel is the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// loadAverage is the first field of /proc/loadavg: how busy the machine
// was before the run, for the report's noise note.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// selfCPU is this process's CPU time (all threads), for the load
// generator's own cost.
func selfCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// machineBusy is the CPU time every process on the machine has used so
// far: the busy fields of /proc/stat's "cpu" line (user, nice, system,
// irq, softirq, steal; not idle or iowait). Over a window, it minus the
// server and the load is what everything else took: the column that says
// how noisy a shared machine was while it was measured.
func machineBusy() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var busy int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system irq softirq steal
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %v", err)
		}
		busy += n
	}
	return time.Duration(busy) * clockTick, nil
}
