package shm

// On macOS a region is a file-backed mapping (see createFile): there is no
// memfd, and shm_open is reachable only through libc with names visible
// to every process of the user. The file is unlinked before Create
// returns. macOS has no file seals: a peer holding the descriptor could
// truncate it, and this process would then fault on the lost pages.

func create(name string, size int) (*Region, error) { return createFile(name, size) }

func openFD(fd int) ([]byte, error) {
	size, err := statRegion(fd)
	if err != nil {
		return nil, err
	}
	return mapFD(fd, size)
}
