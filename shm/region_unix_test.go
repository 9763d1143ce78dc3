//go:build linux || darwin

package shm

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func dupFile(f *os.File) (*os.File, error) {
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// The file-backed region (macOS's kind, tested here on every unix): the
// file is 0600 in a 0700 directory while it exists, and both are gone
// once Create returns.
func TestFileRegionPermissions(t *testing.T) {
	old := unix.Umask(0) // the modes must not depend on the umask
	defer unix.Umask(old)
	var dir, path string
	check := func(d, p string) {
		dir, path = d, p
		for _, c := range []struct {
			name string
			want os.FileMode
		}{{d, os.ModeDir | 0o700}, {p, 0o600}} {
			fi, err := os.Stat(c.name)
			if err != nil {
				t.Errorf("stat %s: %v", c.name, err)
				continue
			}
			if fi.Mode() != c.want {
				t.Errorf("%s: mode %v, want %v", c.name, fi.Mode(), c.want)
			}
		}
	}
	defer setHooks(func(h *testHooks) { h.file = check })()
	r, err := createFile("perm/../test", 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if dir == "" {
		t.Fatal("hook not called")
	}
	for _, p := range []string{path, dir} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s still exists after Create: %v", p, err)
		}
	}
	r.Bytes()[100] = 1
	if len(r.Bytes()) != 4096 {
		t.Errorf("mapped %d bytes", len(r.Bytes()))
	}
}

// Two mappings of one region see each other's writes, as a child's
// OpenFD mapping would.
func TestOpenFileSharesMemory(t *testing.T) {
	a := newRegion(t, 8192)
	dup, err := dupFile(a.File())
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenFile(dup)
	if err != nil {
		dup.Close()
		t.Fatal(err)
	}
	defer b.Close()
	if b.Len() != a.Len() {
		t.Fatalf("Len %d, want %d", b.Len(), a.Len())
	}
	a.Bytes()[4097] = 42
	if b.Bytes()[4097] != 42 {
		t.Error("write through one mapping not seen through the other")
	}
}
