//go:build !unix

package knitbench

import "os"

func termWidth(*os.File) int { return 0 }
