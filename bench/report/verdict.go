package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/knit-go/knit/bench/harness"
	"github.com/knit-go/knit/bench/internal/stats"
)

// UseCase is one question the verdict answers, such as "is knit faster
// than a channel for a request/reply worker": which suite and table hold
// the answer, which row answers for the library under test, and (by
// default) every Go and peer row of the same table as its rivals.
//
// Rows are found by Matchers over their names rather than by exact
// names, so a use case keeps its rows when a display name gains a word:
// match on the words that say which API a row uses ("CallBatch", "Call
// per message"), and exclude the variants that are not the answer
// ("spin", "parked").
type UseCase struct {
	Name  string // the question, short: "a request/reply worker"
	Suite string
	// Group picks the table among the suite's groups (in table order);
	// nil is the first. "" when none fits: the use case is then left out.
	Group func(groups []string) string
	// Subject is the row under test: the first row of the table it
	// matches.
	Subject Matcher
	// API is how the subject does it, as a user would write it:
	// "Task.CallBatch + pool.WaitAll".
	API string
	// Rivals narrows the rows the subject is read against, which are
	// always Go (harness.KindGo) and peer (KindPeer) rows of the table;
	// nil keeps them all. The fastest, by median, is the one shown.
	Rivals Matcher
	// Floor picks the floor shown beside them; nil is the fastest limit
	// row (KindLimit) whose rounds are stable (span under
	// harness.WideRange), or the fastest one if none is.
	Floor Matcher
}

// Matcher picks rows by name.
type Matcher func(name string) bool

// Contains matches a name holding every part, ignoring case.
func Contains(parts ...string) Matcher {
	return func(name string) bool {
		n := strings.ToLower(name)
		for _, p := range parts {
			if !strings.Contains(n, strings.ToLower(p)) {
				return false
			}
		}
		return true
	}
}

// Is matches one name exactly.
func Is(name string) Matcher { return func(n string) bool { return n == name } }

// AnyOf matches a name any of ms matches.
func AnyOf(ms ...Matcher) Matcher {
	return func(n string) bool { return slices.ContainsFunc(ms, func(m Matcher) bool { return m(n) }) }
}

// AllOf matches a name every one of ms matches.
func AllOf(ms ...Matcher) Matcher {
	return func(n string) bool {
		for _, m := range ms {
			if !m(n) {
				return false
			}
		}
		return true
	}
}

// Not matches the names m does not.
func Not(m Matcher) Matcher { return func(n string) bool { return !m(n) } }

// GroupContaining picks the first group whose name holds every part.
func GroupContaining(parts ...string) func([]string) string {
	m := Contains(parts...)
	return func(gs []string) string {
		for _, g := range gs {
			if m(g) {
				return g
			}
		}
		return ""
	}
}

// LastGroup picks the suite's last group (the widest of a sweep).
func LastGroup(gs []string) string {
	if len(gs) == 0 {
		return ""
	}
	return gs[len(gs)-1]
}

// Verdict words.
const (
	Faster        = "faster"
	Slower        = "slower"
	NoDifference  = "no significant difference"
	NoInterval    = "n/a: too few rounds"
	verdictNoRows = "n/a: "
)

// Verdict is one use case's answer in one run.
type Verdict struct {
	UseCase   string  `json:"use_case"`
	API       string  `json:"api,omitempty"`
	Suite     string  `json:"suite"`
	Group     string  `json:"group,omitempty"`
	Subject   string  `json:"subject"`
	SubjectNs float64 `json:"subject_ns_per_op"`
	Rival     string  `json:"rival,omitempty"`
	RivalKind string  `json:"rival_kind,omitempty"`
	RivalNs   float64 `json:"rival_ns_per_op,omitempty"`
	Floor     string  `json:"floor,omitempty"`
	FloorNs   float64 `json:"floor_ns_per_op,omitempty"`
	// Ratio is the median over the rounds of the subject's time over the
	// rival's in the same round; CILow and CIHigh its 95 % interval (0
	// with fewer than 6 rounds).
	Ratio  float64 `json:"ratio"`
	CILow  float64 `json:"ratio_ci_low,omitempty"`
	CIHigh float64 `json:"ratio_ci_high,omitempty"`
	Rounds int     `json:"rounds"`
	// Word is Faster or Slower when the interval excludes 1,
	// NoDifference when it holds 1, or "n/a: why".
	Word  string `json:"verdict"`
	Noise string `json:"noise,omitempty"` // the subject's or the rival's noise flag
}

// Verdicts answers each use case from the suites of a run; a use case
// whose suite did not run is left out, one whose rows are missing or
// failed says so in its Word.
func Verdicts(ucs []UseCase, suites []harness.SuiteResult) []Verdict {
	var out []Verdict
	for _, uc := range ucs {
		i := slices.IndexFunc(suites, func(s harness.SuiteResult) bool { return s.Name == uc.Suite })
		if i < 0 {
			continue
		}
		out = append(out, judge(uc, suites[i]))
	}
	return out
}

func judge(uc UseCase, s harness.SuiteResult) Verdict {
	v := Verdict{UseCase: uc.Name, API: uc.API, Suite: s.Name}
	pick := uc.Group
	if pick == nil {
		pick = func(gs []string) string { return gs[0] }
	}
	groups := s.Groups()
	if len(groups) == 0 {
		v.Word = verdictNoRows + "no rows"
		return v
	}
	v.Group = pick(groups)
	var table []harness.RowResult
	for _, r := range s.Rows {
		if r.Group == v.Group {
			table = append(table, r)
		}
	}
	ok := func(r harness.RowResult) bool { return r.Error == "" && r.MedianNs > 0 }
	var subject, rival, floor *harness.RowResult
	for i := range table {
		r := &table[i]
		if subject == nil && uc.Subject != nil && uc.Subject(r.Name) {
			subject = r
		}
	}
	if subject == nil {
		v.Word = verdictNoRows + "no row under test in " + s.Name + " / " + v.Group
		return v
	}
	v.Subject = subject.Name
	if !ok(*subject) {
		v.Word = verdictNoRows + "the row under test failed"
		return v
	}
	v.SubjectNs = subject.MedianNs
	for i := range table {
		r := &table[i]
		if r == subject || !ok(*r) {
			continue
		}
		isRival := (r.Kind == harness.KindGo || r.Kind == harness.KindPeer) && (uc.Rivals == nil || uc.Rivals(r.Name))
		if isRival && (rival == nil || r.MedianNs < rival.MedianNs) {
			rival = r
		}
		if uc.Floor != nil {
			if floor == nil && uc.Floor(r.Name) {
				floor = r
			}
		} else if r.Kind == harness.KindLimit {
			stable := func(x *harness.RowResult) bool { return x.MaxNs < harness.WideRange*x.MinNs }
			if floor == nil || (stable(r) && !stable(floor)) ||
				(stable(r) == stable(floor) && r.MedianNs < floor.MedianNs) {
				floor = r
			}
		}
	}
	if floor != nil {
		v.Floor, v.FloorNs = floor.Name, floor.MedianNs
	}
	if rival == nil {
		v.Word = verdictNoRows + "no Go or peer row beside it"
		return v
	}
	v.Rival, v.RivalKind, v.RivalNs = rival.Name, string(rival.Kind), rival.MedianNs
	per := harness.PairedRatios(*subject, *rival)
	v.Rounds = len(per)
	if len(per) == 0 {
		v.Word = verdictNoRows + "no round measured both"
		return v
	}
	v.Ratio = stats.Median(per)
	var notes []string
	for _, r := range []*harness.RowResult{subject, rival} {
		if r.Noise != "" {
			notes = append(notes, r.Name+": "+r.Noise)
		}
	}
	v.Noise = strings.Join(notes, "; ")
	lo, hi, has := stats.MedianCI(per, stats.Confidence)
	switch {
	case !has:
		v.Word = fmt.Sprintf("%s (%d; an interval needs %d)", NoInterval, len(per), stats.MinCISamples)
	case hi < 1:
		v.CILow, v.CIHigh, v.Word = lo, hi, Faster
	case lo > 1:
		v.CILow, v.CIHigh, v.Word = lo, hi, Slower
	default:
		v.CILow, v.CIHigh, v.Word = lo, hi, NoDifference
	}
	return v
}

// VerdictMarkdown is the verdict section: one line per use case, or ""
// when the report has none.
func VerdictMarkdown(r Report) string {
	if len(r.Verdicts) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Verdict\n\n")
	who := r.Subject
	if who == "" {
		who = "knit"
	}
	fmt.Fprintf(&b, "Each use case reads %s's row against the fastest Go or peer row of the same table, "+
		"measured in the same interleaved rounds: \"ratio\" is the median over the rounds of %s's time "+
		"over that row's in the same round (below 1: %s is faster), with its 95%% interval; "+
		"\"faster\" or \"slower\" when the interval excludes 1. The floor is the hardware limit of the same table. "+
		"Times are medians per op on this machine only.\n\n", who, who, who)
	t := table{}
	t.col("use case", false)
	t.col(who+" (API)", false)
	t.col("time", true)
	t.col("best Go or peer row", false)
	t.col("time", true)
	t.col("floor", false)
	t.col("time", true)
	t.col("ratio", true)
	t.col("95% CI", true)
	t.col("verdict", false)
	var notes []string
	for _, v := range r.Verdicts {
		subject := v.Subject
		if v.API != "" {
			subject += " [" + v.API + "]"
		}
		if subject == "" {
			subject = "—"
		}
		floor, floorNs := "—", ""
		if v.Floor != "" {
			floor, floorNs = v.Floor, FormatNs(v.FloorNs)
		}
		rival, rivalNs := "—", ""
		if v.Rival != "" {
			rival, rivalNs = v.Rival, FormatNs(v.RivalNs)
		}
		subjNs := ""
		if v.SubjectNs > 0 {
			subjNs = FormatNs(v.SubjectNs)
		}
		word := v.Word
		if v.Noise != "" {
			word += " (noisy)"
			notes = append(notes, v.UseCase+": "+v.Noise)
		}
		t.add(escape(v.UseCase), escape(subject), subjNs, escape(rival), rivalNs, escape(floor), floorNs,
			FormatRatio(v.Ratio), ratioCI(v.CILow, v.CIHigh), escape(word))
	}
	b.WriteString(t.String())
	if len(notes) > 0 {
		b.WriteString("\nNoisy rows: " + escape(strings.Join(notes, "; ")) + ".\n")
	}
	b.WriteString("\n")
	return b.String()
}
