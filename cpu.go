package knit

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/klauspost/cpuid/v2"

	"github.com/knit-go/knit/internal/spinpolicy"
)

// SpinKind names the instruction a spin-wait uses while it waits for a word
// to change. Which kinds exist depends on the CPU and the build: see
// SpinKind.Available. The zero value, SpinAuto, asks for the automatic
// choice.
type SpinKind uint8

const (
	// SpinAuto picks the best kind this CPU and build offer: SpinTPause
	// or SpinMWaitX where the CPU reports them, else SpinPause on amd64;
	// SpinISB on arm64; SpinLoop in pure Go.
	SpinAuto SpinKind = iota
	// SpinNone disables spinning: every spin budget is treated as zero, so
	// callers go straight to parking. For boxes with fewer cores than busy
	// threads, where a spinner steals the CPU of the thread it waits for.
	SpinNone
	// SpinLoop is a plain load loop with no hint instruction: the pure-Go
	// path (purego builds and GOARCHes without assembly).
	SpinLoop
	// SpinPause is the x86 PAUSE instruction.
	SpinPause
	// SpinTPause waits with UMONITOR/UMWAIT (WAITPKG; Intel Tremont,
	// Sapphire Rapids and later): the core sleeps in C0.1 until the watched
	// line is written or the TSC deadline passes. Pause(n) still uses PAUSE.
	SpinTPause
	// SpinMWaitX waits with MONITORX/MWAITX (AMD Zen): like SpinTPause,
	// with a timer in TSC ticks.
	SpinMWaitX
	// SpinISB is the arm64 instruction barrier, the spin hint Rust and
	// HotSpot use on arm64: it stalls for a pipeline flush, tens of ns.
	SpinISB
	// SpinYield is the arm64 YIELD hint; a NOP on cores without SMT.
	SpinYield
	// SpinWFE waits with LDAXR then WFE (arm64): the core sleeps until the
	// exclusive monitor on the watched word is cleared by a store, or the
	// kernel's event stream (100 µs on Linux) ticks. Pause(n) uses ISB.
	SpinWFE

	numSpinKinds
)

var spinNames = [numSpinKinds]string{
	SpinAuto:   "auto",
	SpinNone:   "none",
	SpinLoop:   "loop",
	SpinPause:  "pause",
	SpinTPause: "tpause",
	SpinMWaitX: "mwaitx",
	SpinISB:    "isb",
	SpinYield:  "yield",
	SpinWFE:    "wfe",
}

func (k SpinKind) String() string {
	if k < numSpinKinds {
		return spinNames[k]
	}
	return fmt.Sprintf("SpinKind(%d)", uint8(k))
}

// Available reports whether this CPU and build can use k. SpinAuto,
// SpinNone and SpinLoop are always available.
func (k SpinKind) Available() bool {
	ok, _ := spinSupported(k)
	return ok
}

// ErrSpinUnsupported is returned (wrapped) by SetSpin and ParseSpinKind
// when a spin kind is unknown or this CPU or build cannot use it.
var ErrSpinUnsupported = errors.New("knit: spin kind unsupported")

// ParseSpinKind maps a name ("pause", "tpause", "mwaitx", "isb", "yield",
// "wfe", "loop", "none", "auto") to its SpinKind. Case and surrounding
// space are ignored; the empty string is SpinAuto.
func ParseSpinKind(s string) (SpinKind, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return SpinAuto, nil
	}
	for k, name := range spinNames {
		if s == name {
			return SpinKind(k), nil
		}
	}
	return SpinAuto, fmt.Errorf("%w: unknown name %q (want one of %s)",
		ErrSpinUnsupported, s, strings.Join(spinNames[:], ", "))
}

func spinSupported(k SpinKind) (bool, string) {
	switch k {
	case SpinAuto, SpinNone, SpinLoop:
		return true, ""
	}
	if k >= numSpinKinds {
		return false, "unknown kind"
	}
	return archSpinSupported(k)
}

// CPUInfo is what knit detected and what it chose from that.
type CPUInfo struct {
	Arch       string // GOARCH
	Vendor     string // CPU vendor as cpuid reports it ("AMD", "Intel", "Apple", ...)
	Brand      string // brand string, empty where the CPU does not report one
	Family     int    // x86 family (0 elsewhere)
	Model      int    // x86 model (0 elsewhere)
	CacheLine  int    // detected cache-line size in bytes (0 if unknown)
	Hypervisor bool   // running under a hypervisor (x86 CPUID.1:ECX[31])
	Hybrid     bool   // the part mixes core types (Intel hybrid, Apple P/E)
	// Features lists the detected features that matter for spinning and
	// atomics: "waitpkg", "monitorx", "invariant-tsc" on x86; "atomics"
	// (LSE), "sb", "wfxt" on arm64.
	Features []string
	Asm      bool // the assembly spin routines are in use (false under purego)

	Spin      SpinKind // the spin kind in force
	SpinNs    float64  // calibrated cost of one Pause hint, in ns
	CounterHz int64    // cycle-counter frequency (TSC, CNTVCT_EL0, or 1e9 for the monotonic clock)
	Warning   string   // why the requested kind was not used, or a calibration problem; empty when all went to plan
}

func (c CPUInfo) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", c.Arch, c.Vendor)
	if c.Brand != "" {
		fmt.Fprintf(&b, " %q", c.Brand)
	}
	if c.Family != 0 || c.Model != 0 {
		fmt.Fprintf(&b, " family %d model %d", c.Family, c.Model)
	}
	fmt.Fprintf(&b, ", line %d B", c.CacheLine)
	if c.Hypervisor {
		b.WriteString(", hypervisor")
	}
	if c.Hybrid {
		b.WriteString(", hybrid")
	}
	if len(c.Features) > 0 {
		fmt.Fprintf(&b, ", features [%s]", strings.Join(c.Features, " "))
	}
	asm := "asm"
	if !c.Asm {
		asm = "pure Go"
	}
	fmt.Fprintf(&b, "; spin %s (%s, %.1f ns/hint), counter %.3f MHz", c.Spin, asm, c.SpinNs, float64(c.CounterHz)/1e6)
	if c.Warning != "" {
		fmt.Fprintf(&b, "; warning: %s", c.Warning)
	}
	return b.String()
}

// The spin choice lives in spinConf so SetSpin can replace it without a
// lock on the read path. It is resolved at first use (KNIT_SPIN, then
// the CPU's best kind), not at init, so importing knit costs nothing;
// see loadClock for the counter.
var (
	spinConf atomic.Pointer[spinConfig] // nil until the first use or SetSpin
	setMu    sync.Mutex                 // serialises SetSpin and the first use
)

// spinConfig is immutable once published, but for the hint's cost, which
// only CPU() needs and measures on its first call.
type spinConfig struct {
	kind     SpinKind
	warning  string
	hintOnce sync.Once
	hint     float64 // ns per Pause hint
}

func (c *spinConfig) hintNs() float64 {
	c.hintOnce.Do(func() { c.hint = calibrateHint(c.kind) })
	return c.hint
}

// loadSpin returns the spin choice in force, resolving it on the first
// call. The fast path is one load and a branch, and inlines.
// Every budget in knit's other packages reads zero under SpinNone too:
// they ask internal/spinpolicy, which asks this. The init only stores a
// function; the choice itself is still made at first use.
func init() { spinpolicy.SetOff(func() bool { return loadSpin().kind == SpinNone }) }

func loadSpin() *spinConfig {
	if c := spinConf.Load(); c != nil {
		return c
	}
	return initSpin()
}

func initSpin() *spinConfig {
	setMu.Lock()
	defer setMu.Unlock()
	if c := spinConf.Load(); c != nil {
		return c // SetSpin or another first use got here first
	}
	req, err := ParseSpinKind(os.Getenv("KNIT_SPIN"))
	warning := ""
	if err != nil {
		warning = "KNIT_SPIN: " + err.Error() + "; using auto"
	}
	applySpin(req, warning)
	return spinConf.Load()
}

// detected is what cpuid reports, gathered on the first CPU().
var detected = sync.OnceValue(detectCPU)

func detectCPU() CPUInfo {
	c := cpuid.CPU
	info := CPUInfo{
		Arch:       runtime.GOARCH,
		Vendor:     c.VendorString,
		Brand:      strings.TrimSpace(c.BrandName),
		Family:     c.Family,
		Model:      c.Model,
		CacheLine:  c.CacheLine,
		Hypervisor: c.Supports(cpuid.HYPERVISOR),
		Hybrid:     c.Supports(cpuid.HYBRID_CPU),
		Asm:        haveAsm,
	}
	if info.Vendor == "" {
		info.Vendor = c.VendorID.String()
	}
	if info.CacheLine == 0 {
		info.CacheLine = CacheLineSize
	}
	info.Features = archFeatures()
	return info
}

// SetSpin replaces the spin kind for the whole process; SpinAuto restores
// the automatic choice. A kind this CPU or build cannot use is not an
// error that stops anything: the automatic choice stays in force, CPU()
// carries the warning, and the returned error (wrapping
// ErrSpinUnsupported) says why.
func SetSpin(k SpinKind) error {
	setMu.Lock()
	defer setMu.Unlock()
	if ok, why := spinSupported(k); !ok {
		err := fmt.Errorf("%w: %s: %s", ErrSpinUnsupported, k, why)
		applySpin(SpinAuto, err.Error()+"; using auto")
		return err
	}
	applySpin(k, "")
	return nil
}

// applySpin resolves req (falling back to auto when unsupported) and
// publishes it; setMu must be held.
func applySpin(req SpinKind, warning string) {
	k := req
	if ok, why := spinSupported(req); !ok {
		warning = joinWarn(warning, fmt.Sprintf("spin %s unsupported (%s); using auto", req, why))
		k = SpinAuto
	}
	if k == SpinAuto {
		k = autoSpin()
	}
	spinConf.Store(&spinConfig{kind: k, warning: warning})
}

func joinWarn(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// CPU returns what knit detected and the spin choice in force. The first
// call measures the cycle counter and the hint, about 100 µs.
func CPU() CPUInfo {
	info := detected()
	info.Features = append([]string(nil), info.Features...)
	conf := loadSpin()
	clk := loadClock()
	info.Spin = conf.kind
	info.SpinNs = conf.hintNs()
	info.CounterHz = clk.hz
	info.Warning = joinWarn(conf.warning, clk.warning)
	return info
}
