//go:build unix

package knitbench

import (
	"os"

	"golang.org/x/sys/unix"
)

// termWidth is the terminal's width in columns, 0 if unknown.
func termWidth(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
