package shm

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// On Linux a region is a memfd: anonymous shared memory with a descriptor
// and no name in any file system. It is sealed against growing and
// shrinking (and against further sealing) before it is mapped, and
// OpenFD accepts only descriptors carrying F_SEAL_SHRINK: a peer that
// could shrink the file would make this process's next access to the lost
// pages raise SIGBUS, a crash no bounds check can prevent.

const regionSeals = unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_SEAL

func create(name string, size int) (*Region, error) {
	fd, err := unix.MemfdCreate("knit-"+name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, os.NewSyscallError("memfd_create", err)
	}
	f := os.NewFile(uintptr(fd), "memfd:knit-"+name)
	mem, err := sizeAndMap(fd, size)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Region{mem: mem, file: f}, nil
}

func sizeAndMap(fd, size int) ([]byte, error) {
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		if err == unix.EINVAL || err == unix.EFBIG || err == unix.ENOSPC {
			return nil, fmt.Errorf("%w: %d: %v", ErrBadSize, size, os.NewSyscallError("ftruncate", err))
		}
		return nil, os.NewSyscallError("ftruncate", err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, regionSeals); err != nil {
		return nil, os.NewSyscallError("fcntl(F_ADD_SEALS)", err)
	}
	return mapFD(fd, size)
}

func openFD(fd int) ([]byte, error) {
	size, err := statRegion(fd)
	if err != nil {
		return nil, err
	}
	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: fd %d is not a memfd (F_GET_SEALS: %v)", ErrNotRegion, fd, err)
	}
	if seals&unix.F_SEAL_SHRINK == 0 {
		return nil, fmt.Errorf("%w: fd %d is not sealed against shrinking (seals %#x)", ErrNotRegion, fd, seals)
	}
	return mapFD(fd, size)
}
