//go:build !unix

package report

import "runtime"

func kernel() string { return runtime.GOOS }

func governor() (gov, boost, why string) {
	return "", "", "no cpufreq governor on this OS"
}
