package knitbench

import (
	"fmt"
	"io"
	"os"
	"time"
	"unicode/utf8"

	"github.com/knit-go/knit/bench/harness"
)

// progress shows where a run is: on a terminal one line that it
// rewrites (suite i/n, row, round, elapsed, ETA); elsewhere (a pipe, CI)
// one line per suite as it ends.
type progress struct {
	w      io.Writer
	tty    bool
	width  int
	begin  time.Time
	suites []string
	// units[i] is suite i's work in visits: a timed window counts 1, a
	// calibration ½ (it runs until a quarter of the window, growing).
	units     []float64
	doneUnits float64 // of the suites finished
	cur       int     // the suite running
	curDone   float64 // its units done
}

func newProgress(w io.Writer, names []string, units []float64) *progress {
	p := &progress{w: w, begin: time.Now(), suites: names, units: units}
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		p.tty = true
		p.width = termWidth(f)
		if p.width <= 0 {
			p.width = 100
		}
	}
	return p
}

// isTerminal reports whether f is a character device a person reads
// (not with TERM=dumb, where rewriting a line shows as garbage).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb"
}

func (p *progress) total() float64 {
	t := 0.0
	for _, u := range p.units {
		t += u
	}
	return t
}

// eta is the time left at the pace so far; 0 before any work is done.
func (p *progress) eta() time.Duration {
	done := p.doneUnits + p.curDone
	if done <= 0 {
		return 0
	}
	el := time.Since(p.begin)
	return time.Duration(float64(el) / done * (p.total() - done))
}

// startSuite is called before suite i runs.
func (p *progress) startSuite(i int) {
	p.cur, p.curDone = i, 0
}

// observe is harness.Config.Observe.
func (p *progress) observe(e harness.Event) {
	switch e.Phase {
	case harness.Calibrating:
		if e.Row > 0 {
			p.curDone += 0.5
		}
	case harness.Measuring:
		if e.Row == 0 && e.Round == 1 {
			p.curDone += 0.5 // the last calibration
		} else {
			p.curDone++
		}
	case harness.SuiteDone:
		return
	}
	if !p.tty {
		return
	}
	step := "calibrating"
	if e.Phase == harness.Measuring {
		step = fmt.Sprintf("round %d/%d", e.Round, e.Rounds)
	}
	line := fmt.Sprintf("[%d/%d] %s  row %d/%d  %s  %s  elapsed %s%s  %s",
		p.cur+1, len(p.suites), e.Suite, e.Row+1, e.Rows, step, p.percent(),
		short(time.Since(p.begin)), p.etaText(), e.Name)
	p.rewrite(line)
}

func (p *progress) percent() string {
	t := p.total()
	if t <= 0 {
		return ""
	}
	return fmt.Sprintf("%3.0f%%", 100*(p.doneUnits+p.curDone)/t)
}

func (p *progress) etaText() string {
	if eta := p.eta(); eta > 0 {
		return "  ETA " + short(eta)
	}
	return ""
}

// rewrite replaces the terminal's progress line, cut to its width.
func (p *progress) rewrite(line string) {
	if n := utf8.RuneCountInString(line); n > p.width-1 {
		r := []rune(line)
		line = string(r[:max(p.width-2, 0)]) + "…"
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s", line)
}

// endSuite is called after suite i, with how long it took and whether a
// row failed.
func (p *progress) endSuite(i int, took time.Duration, failed int) {
	p.doneUnits += p.units[i]
	p.curDone = 0
	if p.tty {
		return
	}
	status := ""
	if failed > 0 {
		status = fmt.Sprintf(", %d rows FAILED", failed)
	}
	fmt.Fprintf(p.w, "knitbench: [%d/%d] %s done in %s%s; elapsed %s%s\n",
		i+1, len(p.suites), p.suites[i], short(took), status, short(time.Since(p.begin)), p.etaText())
}

// clear removes the terminal's progress line.
func (p *progress) clear() {
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// short prints a duration as a person reads a clock: 4.2s, 1m05s, 1h02m.
func short(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
