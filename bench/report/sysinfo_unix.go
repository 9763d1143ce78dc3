//go:build unix && !linux

package report

import "golang.org/x/sys/unix"

// kernel is uname's system, release and machine.
func kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Machine[:])
}

// governor: only Linux has cpufreq's files.
func governor() (gov, boost, why string) {
	return "", "", "no cpufreq governor on this OS"
}
