package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/knit-go/knit/bench/httpiso"
)

// Expect is what the harness knows about the child it started.
type Expect struct {
	PID    int
	Nonce  string
	Config Config
	CPUs   CPUList // the affinity every thread must have; empty skips the check
	Nice   int     // the nice value the child was started with
}

// AssertIdentity proves that the server answering on addr is the process
// the harness started, configured as asked, before any load is offered.
// It checks, and reports every mismatch at once:
//
//   - /__id's pid is the child's pid, and its nonce is the one passed on
//     the child's command line (a server left over from an earlier
//     configuration has another nonce);
//   - variant, workers, spin and GOMAXPROCS read back as configured;
//   - /proc/PID/cmdline carries the nonce, so the pid is that child's;
//   - the listening socket on addr is in that pid's fd table;
//   - every thread of the pid has the affinity the harness gave it, and
//     the main thread the nice value.
func AssertIdentity(addr string, want Expect) error {
	id, err := fetchIdentity(addr, 2*time.Second)
	if err != nil {
		return err
	}
	var errs []error
	mismatch := func(what string, got, exp any) {
		errs = append(errs, fmt.Errorf("%s: server says %v, harness expects %v", what, got, exp))
	}
	if id.PID != want.PID {
		mismatch("pid", id.PID, want.PID)
	}
	if id.Nonce != want.Nonce {
		mismatch("nonce", id.Nonce, want.Nonce)
	}
	v := want.Config.Variant
	if id.Variant != v.Name {
		mismatch("variant", id.Variant, v.Name)
	}
	if v.Name != httpiso.Inline && id.Workers != v.Workers {
		mismatch("workers", id.Workers, v.Workers)
	}
	if v.Name == httpiso.Knit && id.Spin != v.Spin.String() {
		mismatch("spin", id.Spin, v.Spin.String())
	}
	if g := want.Config.GOMAXPROCS; g > 0 && id.GOMAXPROCS != g {
		mismatch("gomaxprocs", id.GOMAXPROCS, g)
	}

	// The rest is read from /proc for the pid the harness holds, so it
	// holds even against a server that lies in /__id.
	if args, err := procCmdline(want.PID); err != nil {
		errs = append(errs, fmt.Errorf("cmdline of pid %d: %v", want.PID, err))
	} else if i := slices.Index(args, "-nonce"); i < 0 || i+1 >= len(args) || args[i+1] != want.Nonce {
		errs = append(errs, fmt.Errorf("pid %d was not started with -nonce %s: %q", want.PID, want.Nonce, args))
	}
	_, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	if own, err := listenerOwner(want.PID, port); err != nil {
		errs = append(errs, fmt.Errorf("listener on %s: %v", addr, err))
	} else if !own {
		errs = append(errs, fmt.Errorf("pid %d does not own the socket listening on %s", want.PID, addr))
	}
	if len(want.CPUs) > 0 {
		masks, err := taskAffinity(want.PID)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("affinity of pid %d: %v", want.PID, err))
		case len(masks) != 1 || masks[0] != want.CPUs.String():
			mismatch("thread affinity (Cpus_allowed_list)", masks, want.CPUs.String())
		}
	}
	if n, err := procNice(want.PID); err != nil {
		errs = append(errs, fmt.Errorf("nice of pid %d: %v", want.PID, err))
	} else if n != want.Nice {
		mismatch("nice (/proc/PID/stat)", n, want.Nice)
	}
	return errors.Join(errs...)
}

// fetchIdentity reads GET /__id from addr.
func fetchIdentity(addr string, timeout time.Duration) (httpiso.Identity, error) {
	var id httpiso.Identity
	c := http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get("http://" + addr + "/__id")
	if err != nil {
		return id, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return id, err
	}
	if resp.StatusCode != http.StatusOK {
		return id, fmt.Errorf("GET /__id: %s", resp.Status)
	}
	if err := json.Unmarshal(b, &id); err != nil {
		return id, fmt.Errorf("GET /__id: %v", err)
	}
	return id, nil
}
