package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// kernel is uname's system, release and machine.
func kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Machine[:])
}

// governor is the cpufreq scaling governor of the CPUs (each distinct
// one, with the count of CPUs on it where they differ), and the boost
// state where the driver says; why says what could not be read.
func governor() (gov, boost, why string) {
	files, _ := filepath.Glob("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor")
	count := map[string]int{}
	var order []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		g := strings.TrimSpace(string(b))
		if count[g] == 0 {
			order = append(order, g)
		}
		count[g]++
	}
	switch {
	case len(order) == 0:
		why = "no cpufreq in /sys (a VM, or a kernel without it)"
	case len(order) == 1:
		gov = order[0]
	default:
		slices.Sort(order)
		var parts []string
		for _, g := range order {
			parts = append(parts, g+" ×"+itoa(count[g]))
		}
		gov = strings.Join(parts, ", ")
	}
	if b, err := os.ReadFile("/sys/devices/system/cpu/intel_pstate/no_turbo"); err == nil {
		boost = map[bool]string{true: "off (intel_pstate no_turbo)", false: "on (intel_pstate)"}[strings.TrimSpace(string(b)) == "1"]
	} else if b, err := os.ReadFile("/sys/devices/system/cpu/cpufreq/boost"); err == nil {
		boost = map[bool]string{true: "on (cpufreq boost)", false: "off (cpufreq boost)"}[strings.TrimSpace(string(b)) == "1"]
	}
	return gov, boost, why
}
