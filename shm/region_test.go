package shm

import (
	"errors"
	"os"
	"runtime"
	"testing"
)

func TestCreateBadSize(t *testing.T) {
	for _, size := range []int{0, -1, MaxRegionSize + 1} {
		if r, err := Create("bad", size); !errors.Is(err, ErrBadSize) {
			t.Errorf("Create(%d): %v, want ErrBadSize", size, err)
			if r != nil {
				r.Close()
			}
		}
	}
}

func TestRegionRoundsAndZeroes(t *testing.T) {
	r := newRegion(t, 1)
	if r.Len() != os.Getpagesize() {
		t.Errorf("Len %d, want one page (%d)", r.Len(), os.Getpagesize())
	}
	for i, b := range r.Bytes() {
		if b != 0 {
			t.Fatalf("byte %d is %d, want zero", i, b)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestOpenNotARegion(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no regions on", runtime.GOOS)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	if _, err := OpenFile(pr); !errors.Is(err, ErrNotRegion) {
		t.Errorf("pipe: %v, want ErrNotRegion", err)
	}
	empty, err := os.CreateTemp(t.TempDir(), "empty")
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	if _, err := OpenFile(empty); !errors.Is(err, ErrNotRegion) {
		t.Errorf("empty file: %v, want ErrNotRegion", err)
	}
	if _, err := OpenFile(nil); !errors.Is(err, ErrNotRegion) {
		t.Errorf("nil file: %v, want ErrNotRegion", err)
	}
	if _, err := OpenFD(1 << 30); !errors.Is(err, ErrNotRegion) {
		t.Errorf("unopened fd: %v, want ErrNotRegion", err)
	}
	if runtime.GOOS == "linux" {
		// A plain file is not a sealed memfd: a peer could shrink it.
		empty.Truncate(8192)
		if _, err := OpenFile(empty); !errors.Is(err, ErrNotRegion) {
			t.Errorf("unsealed file: %v, want ErrNotRegion", err)
		}
	}
}
