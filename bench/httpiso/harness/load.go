package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/knit-go/knit/bench/internal/stats"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Route is one loaded route: the Knitting example's load.sh requests.
type Route struct {
	Name, Method, Path string
	Body               []byte
}

// Routes are loaded all at once, one load per route, so that they compete
// for the same server as in the Knitting example.
var Routes = []Route{
	{Name: "ping", Method: http.MethodGet, Path: "/ping"},
	{Name: "ssr", Method: http.MethodPost, Path: "/ssr", Body: []byte(`{"name":"Ari","plan":"pro","bio":"Building on Knitting","projects":17}`)},
	{Name: "jwt", Method: http.MethodPost, Path: "/jwt", Body: []byte(`{"user":{"id":"u_42","email":"ari@example.com","role":"admin"},"ttlSec":900}`)},
}

// Load shapes.
const (
	Closed = "closed" // saturating: Conns connections per route, each sends as soon as it has an answer
	Open   = "open"   // fixed rate per route (vegeta), whatever the server does
)

// LoadSpec is what the driver asks of one load process.
type LoadSpec struct {
	Addr       string        `json:"addr"`
	Mode       string        `json:"mode"`
	Conns      int           `json:"conns"` // closed: connections per route; open: vegeta's initial workers
	Rate       int           `json:"rate"`  // open: requests per second per route
	Warmup     time.Duration `json:"warmup"`
	Window     time.Duration `json:"window"`
	MaxSamples int           `json:"max_samples"` // per route: a bound on memory and on requests sent
	GOMAXPROCS int           `json:"gomaxprocs"`
	Timeout    time.Duration `json:"timeout"` // per request
}

// RouteResult is one route's outcome over the measured window.
type RouteResult struct {
	Requests int      `json:"requests"` // started in the window and finished
	OK       int      `json:"ok"`       // of those, answered 200
	RPS      float64  `json:"rps"`      // Requests / window
	P50      float64  `json:"p50_ms"`
	P99      float64  `json:"p99_ms"`
	Success  float64  `json:"success"` // OK / Requests
	Errors   []string `json:"errors,omitempty"`
}

// LoadResult is a load process's report.
type LoadResult struct {
	Routes  map[string]RouteResult `json:"routes"`
	LoadCPU time.Duration          `json:"load_cpu_ns"` // the load process's own CPU over the window
}

// Markers the load process prints so that the driver reads the server's
// CPU at the edges of the measured window, not of the warm-up.
const (
	markStart  = "WINDOW START"
	markEnd    = "WINDOW END"
	markResult = "RESULT "
)

// RunLoad is the load process ("httpiso-bench load"): it reads a LoadSpec
// as JSON from in, loads every route at once, prints the window markers
// and finally one RESULT line to out.
func RunLoad(in io.Reader, out io.Writer) error {
	var spec LoadSpec
	if err := json.NewDecoder(in).Decode(&spec); err != nil {
		return fmt.Errorf("load spec: %v", err)
	}
	if spec.GOMAXPROCS > 0 {
		runtime.GOMAXPROCS(spec.GOMAXPROCS)
	}
	if spec.Timeout <= 0 {
		spec.Timeout = 10 * time.Second
	}
	if spec.MaxSamples <= 0 {
		spec.MaxSamples = 1 << 21
	}
	w := bufio.NewWriter(out)
	var wmu sync.Mutex
	say := func(s string) {
		wmu.Lock()
		defer wmu.Unlock()
		w.WriteString(s + "\n")
		w.Flush()
	}

	t0 := time.Now()
	start, end := t0.Add(spec.Warmup), t0.Add(spec.Warmup+spec.Window)
	var cpu0, cpu1 time.Duration
	var marks sync.WaitGroup
	marks.Add(1)
	go func() {
		defer marks.Done()
		time.Sleep(time.Until(start))
		cpu0 = selfCPU()
		say(markStart)
		time.Sleep(time.Until(end))
		cpu1 = selfCPU()
		say(markEnd)
	}()

	results := make([]RouteResult, len(Routes))
	var wg sync.WaitGroup
	for i, r := range Routes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var rec recorder
			switch spec.Mode {
			case Closed:
				rec = closedLoop(spec, r, start, end)
			case Open:
				rec = openLoop(spec, r, t0, start, end)
			default:
				rec.errs = []string{fmt.Sprintf("unknown load mode %q", spec.Mode)}
			}
			results[i] = rec.result(spec.Window)
		}()
	}
	wg.Wait()
	marks.Wait()
	res := LoadResult{Routes: map[string]RouteResult{}, LoadCPU: cpu1 - cpu0}
	for i, r := range Routes {
		res.Routes[r.Name] = results[i]
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	say(markResult + string(b))
	return nil
}

// recorder collects one route's latencies for requests started inside
// the window.
type recorder struct {
	lat      []time.Duration
	ok       int
	errs     []string
	errCount int
}

func (r *recorder) add(lat time.Duration, ok bool, errMsg string) {
	r.lat = append(r.lat, lat)
	if ok {
		r.ok++
		return
	}
	r.errCount++
	if len(r.errs) < 5 && errMsg != "" && !slices.Contains(r.errs, errMsg) {
		r.errs = append(r.errs, errMsg)
	}
}

func (r *recorder) merge(o *recorder) {
	r.lat = append(r.lat, o.lat...)
	r.ok += o.ok
	r.errCount += o.errCount
	for _, e := range o.errs {
		if len(r.errs) < 5 && !slices.Contains(r.errs, e) {
			r.errs = append(r.errs, e)
		}
	}
}

func (r *recorder) result(window time.Duration) RouteResult {
	slices.Sort(r.lat)
	n := len(r.lat)
	res := RouteResult{Requests: n, OK: r.ok, Errors: r.errs}
	if n == 0 {
		return res
	}
	res.RPS = float64(n) / window.Seconds()
	res.P50 = ms(stats.NearestRank(r.lat, 50))
	res.P99 = ms(stats.NearestRank(r.lat, 99))
	res.Success = float64(r.ok) / float64(n)
	return res
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// closedLoop is the saturating shape, oha -c C: C connections, each sending
// its next request as soon as the last one is answered, until end.
func closedLoop(spec LoadSpec, r Route, start, end time.Time) recorder {
	tr := &http.Transport{
		MaxConnsPerHost:     spec.Conns,
		MaxIdleConnsPerHost: spec.Conns,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: spec.Timeout}
	url := "http://" + spec.Addr + r.Path
	per := make([]recorder, spec.Conns)
	perConnCap := spec.MaxSamples/spec.Conns + 1
	var wg sync.WaitGroup
	for c := range per {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := &per[c]
			for {
				t := time.Now()
				if !t.Before(end) || len(rec.lat) >= perConnCap {
					return
				}
				ok, msg := do(client, r, url)
				if !t.Before(start) {
					rec.add(time.Since(t), ok, msg)
				}
			}
		}()
	}
	wg.Wait()
	var all recorder
	for i := range per {
		all.merge(&per[i])
	}
	return all
}

// do sends one request and reads the whole answer, as a client would.
func do(client *http.Client, r Route, url string) (ok bool, errMsg string) {
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(context.Background(), r.Method, url, body)
	if err != nil {
		return false, err.Error()
	}
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err.Error()
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return false, err.Error()
	}
	if resp.StatusCode != http.StatusOK {
		return false, resp.Status
	}
	return true, ""
}

// openLoop is the fixed-rate shape, oha -q R: vegeta sends Rate requests
// per second from began, adding workers when answers are slow (up to a
// bound), so a slow server is offered the same load as a fast one. A
// request's latency is measured from when vegeta sent it.
//
// The bound is also the number of connections, each kept alive: every
// window's connections end in TIME_WAIT on the load side when it stops,
// for 60 s, and they come out of the 28,232 ephemeral ports Linux gives
// loopback by default. At 16 per closed-loop connection (512 a route, and
// more with the transport's churn above its idle pool) a quick run's
// windows used up the range by its ninth open-loop row, and every row
// after it read as a server answering 150 req/s at p99 2 s, its dials
// waiting for ports. Four per connection (128 a route) covers the
// rate's concurrency at any latency a server that keeps up can have.
func openLoop(spec LoadSpec, r Route, began, start, end time.Time) recorder {
	maxWorkers := uint64(max(spec.Conns, 1) * 4)
	atk := vegeta.NewAttacker(
		vegeta.Workers(uint64(max(spec.Conns, 1))),
		vegeta.MaxWorkers(maxWorkers),
		vegeta.Connections(int(maxWorkers)),
		vegeta.MaxConnections(int(maxWorkers)),
		vegeta.KeepAlive(true),
		vegeta.Timeout(spec.Timeout),
		vegeta.MaxBody(0), // read and discard: only the status matters here
	)
	hdr := http.Header{}
	if r.Body != nil {
		hdr.Set("Content-Type", "application/json")
	}
	tgt := vegeta.Target{Method: r.Method, URL: "http://" + spec.Addr + r.Path, Body: r.Body, Header: hdr}
	pace := vegeta.ConstantPacer{Freq: spec.Rate, Per: time.Second}
	var rec recorder
	for res := range atk.Attack(vegeta.NewStaticTargeter(tgt), pace, end.Sub(began), r.Name) {
		if res.Timestamp.Before(start) || !res.Timestamp.Before(end) {
			continue
		}
		if len(rec.lat) >= spec.MaxSamples {
			atk.Stop()
			continue
		}
		rec.add(res.Latency, res.Code == http.StatusOK, res.Error)
	}
	return rec
}
