//go:build linux || darwin

package shm

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// What Linux and macOS share: mapping a descriptor, and the file-backed
// region (macOS's only kind; compiled on Linux too so its permissions are
// tested there).

// mapFD maps size bytes of fd read-write and MAP_SHARED.
func mapFD(fd, size int) ([]byte, error) {
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		if err == unix.EACCES {
			return nil, fmt.Errorf("%w: fd %d is not open for reading and writing", ErrNotRegion, fd)
		}
		return nil, os.NewSyscallError("mmap", err)
	}
	return mem, nil
}

func unmap(mem []byte) error {
	if err := unix.Munmap(mem); err != nil {
		return os.NewSyscallError("munmap", err)
	}
	return nil
}

// statRegion checks that fd is a non-empty regular file and returns its
// size.
func statRegion(fd int) (int, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		if err == unix.EBADF {
			return 0, fmt.Errorf("%w: fd %d is not open", ErrNotRegion, fd)
		}
		return 0, os.NewSyscallError("fstat", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return 0, fmt.Errorf("%w: fd %d is not a regular file (mode %#o)", ErrNotRegion, fd, st.Mode)
	}
	if st.Size <= 0 || st.Size > MaxRegionSize {
		return 0, fmt.Errorf("%w: fd %d has size %d", ErrNotRegion, fd, st.Size)
	}
	return int(st.Size), nil
}

// createFile makes a file-backed region: a 0600 file in a new 0700
// directory under os.TempDir, sized, mapped, and then removed with its
// directory, so the open descriptor is the only way to it. The file is
// created with O_EXCL in a directory nobody else can enter, so no other
// user can swap it or read it between creation and unlinking.
func createFile(name string, size int) (_ *Region, err error) {
	dir, err := os.MkdirTemp("", "knit-shm-") // 0700
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "region-"+name)
	defer func() {
		if rerr := os.Remove(path); rerr != nil && !os.IsNotExist(rerr) && err == nil {
			err = rerr
		}
		if rerr := os.Remove(dir); rerr != nil && err == nil {
			err = rerr
		}
	}()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	r, err := fileRegion(f, size, dir, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func fileRegion(f *os.File, size int, dir, path string) (*Region, error) {
	fd := int(f.Fd())
	// The umask can only narrow 0600; make it exact anyway.
	if err := unix.Fchmod(fd, 0o600); err != nil {
		return nil, os.NewSyscallError("fchmod", err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		return nil, os.NewSyscallError("ftruncate", err)
	}
	if h := hooks; h != nil && h.file != nil {
		h.file(dir, path)
	}
	mem, err := mapFD(fd, size)
	if err != nil {
		return nil, err
	}
	return &Region{mem: mem, file: f}, nil
}
