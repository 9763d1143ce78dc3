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

// Hint names the instruction a spin-wait uses while it waits for a word
// to change. Which hints exist depends on the CPU and the build: see
// Hint.Available. The zero value, HintAuto, asks for the automatic
// choice.
type Hint uint8

const (
	// HintAuto picks the best hint this CPU and build offer: HintTPause
	// or HintMWaitX where the CPU reports them, else HintPause on amd64;
	// HintISB on arm64; HintLoop in pure Go.
	HintAuto Hint = iota
	// HintNone disables spinning: every spin budget is treated as zero, so
	// callers go straight to parking. For boxes with fewer cores than busy
	// threads, where a spinner steals the CPU of the thread it waits for.
	HintNone
	// HintLoop is a plain load loop with no hint instruction: the pure-Go
	// path (purego builds and GOARCHes without assembly).
	HintLoop
	// HintPause is the x86 PAUSE instruction.
	HintPause
	// HintTPause waits with UMONITOR/UMWAIT (WAITPKG; Intel Tremont,
	// Sapphire Rapids and later): the core sleeps in C0.1 until the watched
	// line is written or the TSC deadline passes. Pause(n) still uses PAUSE.
	HintTPause
	// HintMWaitX waits with MONITORX/MWAITX (AMD Zen): like HintTPause,
	// with a timer in TSC ticks.
	HintMWaitX
	// HintISB is the arm64 instruction barrier, the spin hint Rust and
	// HotSpot use on arm64: it stalls for a pipeline flush, tens of ns.
	HintISB
	// HintYield is the arm64 YIELD hint; a NOP on cores without SMT.
	HintYield
	// HintWFE waits with LDAXR then WFE (arm64): the core sleeps until the
	// exclusive monitor on the watched word is cleared by a store, or the
	// kernel's event stream ticks (its period: BENCHMARKS.md, "Spin
	// layer"). Pause(n) uses ISB.
	HintWFE

	numHints
)

var hintNames = [numHints]string{
	HintAuto:   "auto",
	HintNone:   "none",
	HintLoop:   "loop",
	HintPause:  "pause",
	HintTPause: "tpause",
	HintMWaitX: "mwaitx",
	HintISB:    "isb",
	HintYield:  "yield",
	HintWFE:    "wfe",
}

func (k Hint) String() string {
	if k < numHints {
		return hintNames[k]
	}
	return fmt.Sprintf("Hint(%d)", uint8(k))
}

// Available reports whether this CPU and build can use k. HintAuto,
// HintNone and HintLoop are always available.
func (k Hint) Available() bool {
	ok, _ := spinSupported(k)
	return ok
}

// ErrHintUnsupported is returned (wrapped) by SetHint and ParseHint
// when a hint is unknown or this CPU or build cannot use it.
var ErrHintUnsupported = errors.New("knit: hint unsupported")

// ParseHint maps a name ("pause", "tpause", "mwaitx", "isb", "yield",
// "wfe", "loop", "none", "auto") to its Hint. Case and surrounding
// space are ignored; the empty string is HintAuto.
func ParseHint(s string) (Hint, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return HintAuto, nil
	}
	for k, name := range hintNames {
		if s == name {
			return Hint(k), nil
		}
	}
	return HintAuto, fmt.Errorf("%w: unknown name %q (want one of %s)",
		ErrHintUnsupported, s, strings.Join(hintNames[:], ", "))
}

func spinSupported(k Hint) (bool, string) {
	switch k {
	case HintAuto, HintNone, HintLoop:
		return true, ""
	}
	if k >= numHints {
		return false, "unknown hint"
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

	Hint      Hint    // the hint in force
	HintNs    float64 // calibrated cost of one Pause hint, in ns
	CounterHz int64   // cycle-counter frequency (TSC, CNTVCT_EL0, or 1e9 for the monotonic clock)
	Warning   string  // why the requested hint was not used, or a calibration problem; empty when all went to plan
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
	fmt.Fprintf(&b, "; hint %s (%s, %.1f ns each), counter %.3f MHz", c.Hint, asm, c.HintNs, float64(c.CounterHz)/1e6)
	if c.Warning != "" {
		fmt.Fprintf(&b, "; warning: %s", c.Warning)
	}
	return b.String()
}

// The hint in force lives in spinConf so SetHint can replace it without a
// lock on the read path. It is resolved at first use (KNIT_HINT, then
// the CPU's best hint), not at init, so importing knit costs nothing;
// see loadClock for the counter.
var (
	spinConf atomic.Pointer[spinConfig] // nil until the first use or SetHint
	setMu    sync.Mutex                 // serialises SetHint and the first use
)

// spinConfig is immutable once published, but for the hint's cost, which
// only CPU() needs and measures on its first call.
type spinConfig struct {
	kind     Hint
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
// Every budget in knit's other packages reads zero under HintNone too:
// they ask internal/spinpolicy, which asks this. The init only stores a
// function; the choice itself is still made at first use.
func init() { spinpolicy.SetOff(func() bool { return loadSpin().kind == HintNone }) }

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
		return c // SetHint or another first use got here first
	}
	req, err := ParseHint(os.Getenv("KNIT_HINT"))
	warning := ""
	if err != nil {
		warning = "KNIT_HINT: " + err.Error() + "; using auto"
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

// SetHint replaces the hint for the whole process; HintAuto restores
// the automatic choice. A hint this CPU or build cannot use is not an
// error that stops anything: the automatic choice stays in force, CPU()
// carries the warning, and the returned error (wrapping
// ErrHintUnsupported) says why.
func SetHint(k Hint) error {
	setMu.Lock()
	defer setMu.Unlock()
	if ok, why := spinSupported(k); !ok {
		err := fmt.Errorf("%w: %s: %s", ErrHintUnsupported, k, why)
		applySpin(HintAuto, err.Error()+"; using auto")
		return err
	}
	applySpin(k, "")
	return nil
}

// applySpin resolves req (falling back to auto when unsupported) and
// publishes it; setMu must be held.
func applySpin(req Hint, warning string) {
	k := req
	if ok, why := spinSupported(req); !ok {
		warning = joinWarn(warning, fmt.Sprintf("hint %s unsupported (%s); using auto", req, why))
		k = HintAuto
	}
	if k == HintAuto {
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

// CPU returns what knit detected and the hint in force. The first call
// measures the cycle counter and the hint, which takes a while; its cost
// is measured with the benchmarks (BENCHMARKS.md, "Import cost").
func CPU() CPUInfo {
	info := detected()
	info.Features = append([]string(nil), info.Features...)
	conf := loadSpin()
	clk := loadClock()
	info.Hint = conf.kind
	info.HintNs = conf.hintNs()
	info.CounterHz = clk.hz
	info.Warning = joinWarn(conf.warning, clk.warning)
	return info
}
