package affinity

import (
	"errors"
	"fmt"
	"iter"
	"math/bits"
	"strconv"
	"strings"
)

// Errors returned by this package, for use with errors.Is. The returned
// errors wrap these with the details: the offending CPU or text, and the
// set that was allowed.
var (
	// ErrInvalidCPU: a CPU id is negative or beyond the largest id a
	// CPUSet holds.
	ErrInvalidCPU = errors.New("affinity: invalid CPU id")
	// ErrEmptySet: a thread cannot be pinned to no CPU.
	ErrEmptySet = errors.New("affinity: empty CPU set")
	// ErrNotAvailable: the CPU is not one this process may run on
	// (see Available).
	ErrNotAvailable = errors.New("affinity: CPU not available to this process")
	// ErrSyntax: text given to ParseCPUSet is not a CPU list.
	ErrSyntax = errors.New("affinity: bad CPU list")
)

// cpuLimit bounds CPU ids. Linux's NR_CPUS tops out at 8192
// (CONFIG_MAXSMP), so this leaves room, while a typo such as Add(1e9)
// panics instead of allocating 125 MB.
const cpuLimit = 1 << 16

// A CPUSet is a set of CPU ids as the operating system numbers them. The
// zero value is the empty set.
//
// A CPUSet is a value: a copy is independent of the original, and ==
// reports whether two sets hold the same CPUs.
type CPUSet struct {
	// bits holds CPU c as bit c%8 of byte c/8. It is a string rather than
	// a slice so that copies never share storage and == compares
	// contents. Invariant: it never ends in a zero byte, so every set has
	// exactly one representation (the empty set is "").
	bits string
}

// Add adds the given CPUs to s. It panics if an id is negative or not
// below 65536, like an index out of range: ids come from the kernel, from
// Topology or from ParseCPUSet, which reports bad text as an error.
func (s *CPUSet) Add(cpus ...int) {
	n := len(s.bits)
	for _, c := range cpus {
		if c < 0 || c >= cpuLimit {
			panic(fmt.Sprintf("affinity: CPU id %d out of range [0, %d)", c, cpuLimit))
		}
		n = max(n, c/8+1)
	}
	b := make([]byte, n)
	copy(b, s.bits)
	for _, c := range cpus {
		b[c/8] |= 1 << (c % 8)
	}
	// Only bits were set, so the last byte is non-zero: still normalised.
	s.bits = string(b)
}

// Has reports whether cpu is in s.
func (s CPUSet) Has(cpu int) bool {
	return cpu >= 0 && cpu/8 < len(s.bits) && s.bits[cpu/8]&(1<<(cpu%8)) != 0
}

// Len returns the number of CPUs in s.
func (s CPUSet) Len() int {
	n := 0
	for i := 0; i < len(s.bits); i++ {
		n += bits.OnesCount8(s.bits[i])
	}
	return n
}

// All returns an iterator over the CPUs in s in ascending order.
func (s CPUSet) All() iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := 0; i < len(s.bits); i++ {
			for w := s.bits[i]; w != 0; w &= w - 1 {
				if !yield(i*8 + bits.TrailingZeros8(w)) {
					return
				}
			}
		}
	}
}

// String formats s in the kernel's CPU list format, as in
// /sys/devices/system/cpu/online or taskset -c: ascending, with runs of
// two or more consecutive CPUs as ranges ("0-3,8,10-11"). The empty set
// formats as "".
func (s CPUSet) String() string {
	var b strings.Builder
	lo, hi := -1, -1 // the run being collected, inclusive
	flush := func() {
		if lo < 0 {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(lo))
		if hi > lo {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(hi))
		}
	}
	for c := range s.All() {
		if c == hi+1 && lo >= 0 {
			hi = c
			continue
		}
		flush()
		lo, hi = c, c
	}
	flush()
	return b.String()
}

// ParseCPUSet parses the kernel's CPU list format: comma-separated CPU ids
// and inclusive ranges ("0-3,8,10-11"), in any order, overlaps allowed.
// Surrounding white space (the newline that ends a sysfs file) is ignored,
// and empty text is the empty set. The kernel's stride form ("0-15:2/4")
// is not accepted. An error wraps ErrSyntax and quotes the offending
// element.
func ParseCPUSet(text string) (CPUSet, error) {
	list := strings.TrimSpace(text)
	if list == "" {
		return CPUSet{}, nil
	}
	var b []byte
	for elem := range strings.SplitSeq(list, ",") {
		lo, hi, err := parseRange(elem)
		if err != nil {
			return CPUSet{}, fmt.Errorf("%w %q: %s", ErrSyntax, text, err)
		}
		if n := hi/8 + 1; n > len(b) {
			b = append(b, make([]byte, n-len(b))...)
		}
		for c := lo; c <= hi; c++ {
			b[c/8] |= 1 << (c % 8)
		}
	}
	return fromBytes(b), nil
}

// parseRange parses one element of a CPU list: "N" or "N-M".
func parseRange(elem string) (lo, hi int, err error) {
	if elem == "" {
		return 0, 0, errors.New("empty element (doubled comma, or a comma at either end)")
	}
	first, last, isRange := strings.Cut(elem, "-")
	if lo, err = parseID(elem, first); err != nil {
		return 0, 0, err
	}
	if !isRange {
		return lo, lo, nil
	}
	if hi, err = parseID(elem, last); err != nil {
		return 0, 0, err
	}
	if hi < lo {
		return 0, 0, fmt.Errorf("range %q runs backwards", elem)
	}
	return lo, hi, nil
}

// parseID parses a decimal CPU id, num, of the list element elem;
// strconv.Atoi alone would accept a sign, which the kernel's format does
// not have.
func parseID(elem, num string) (int, error) {
	where := ""
	if elem != num {
		where = fmt.Sprintf("%q: ", elem)
	}
	if num == "" || strings.Trim(num, "0123456789") != "" {
		return 0, fmt.Errorf("%s%q is not a CPU id", where, num)
	}
	c, err := strconv.Atoi(num)
	if err != nil || c >= cpuLimit {
		return 0, fmt.Errorf("%sCPU id %s out of range [0, %d)", where, num, cpuLimit)
	}
	return c, nil
}

// fromBytes makes a CPUSet of a bitmap laid out like CPUSet.bits,
// trimming trailing zero bytes to keep the invariant.
func fromBytes(b []byte) CPUSet {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return CPUSet{bits: string(b)}
}

// intersect returns the CPUs in both a and b.
func intersect(a, b CPUSet) CPUSet {
	out := make([]byte, min(len(a.bits), len(b.bits)))
	for i := range out {
		out[i] = a.bits[i] & b.bits[i]
	}
	return fromBytes(out)
}

// without returns the CPUs in a that are not in b.
func without(a, b CPUSet) CPUSet {
	out := []byte(a.bits)
	for i := 0; i < len(out) && i < len(b.bits); i++ {
		out[i] &^= b.bits[i]
	}
	return fromBytes(out)
}

// first returns the lowest CPU in s, or -1 if s is empty.
func (s CPUSet) first() int {
	for c := range s.All() {
		return c
	}
	return -1
}

// next returns the CPU of s that follows cpu in cyclic order: the lowest
// one above cpu, else the lowest one. ok is false if s holds no CPU other
// than cpu.
func (s CPUSet) next(cpu int) (next int, ok bool) {
	lowest := -1
	for c := range s.All() {
		if c > cpu {
			return c, true
		}
		if lowest < 0 && c != cpu {
			lowest = c
		}
	}
	return lowest, lowest >= 0
}
