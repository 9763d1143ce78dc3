package report

import (
	"context"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/knit-go/knit"
)

// Provenance is which code a run measured: knit's module as the binary
// was built with it, and the harness's.
type Provenance struct {
	KnitModule  string `json:"knit_module"`            // github.com/knit-go/knit
	KnitVersion string `json:"knit_version,omitempty"` // the module version, "v0.0.0" for a local replace
	KnitReplace string `json:"knit_replace,omitempty"` // the replacement path, when knit is replaced
	// KnitRevision is the commit of knit's source, KnitModified whether
	// that checkout had uncommitted changes; RevisionFrom says how they
	// were learned: "build info" (vcs.* of the main module, when knit is
	// in its repository), "pseudo-version", or "git" (git run in knit's
	// source directory, where the build did not stamp it, as `go run`
	// and -buildvcs=false do not). "" when nothing could tell.
	KnitRevision string `json:"knit_revision,omitempty"`
	KnitModified bool   `json:"knit_modified,omitempty"`
	RevisionFrom string `json:"revision_from,omitempty"`
	RevisionTime string `json:"revision_time,omitempty"`
	MainModule   string `json:"main_module,omitempty"` // the binary's module: knit's bench module, or a user's
	GoVersion    string `json:"go_version"`
	BuildFlags   string `json:"build_flags,omitempty"` // -tags, -race, GOAMD64, ... from the build info
}

const knitModule = "github.com/knit-go/knit"

// ReadProvenance reads the binary's build info, and asks git for the
// revision where the build did not record it.
func ReadProvenance() Provenance {
	p := Provenance{KnitModule: knitModule, GoVersion: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return p
	}
	p.MainModule = bi.Main.Path
	var flags []string
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
		switch s.Key {
		case "-tags", "-race", "-gcflags", "GOAMD64", "GOARM64", "CGO_ENABLED":
			flags = append(flags, s.Key+"="+s.Value)
		}
	}
	p.BuildFlags = strings.Join(flags, " ")
	local := false
	switch {
	case bi.Main.Path == knitModule:
		p.KnitVersion, local = bi.Main.Version, true
	default:
		for _, d := range bi.Deps {
			if d.Path != knitModule {
				continue
			}
			p.KnitVersion = d.Version
			// A workspace module (go.work) is "(devel)", with no replace.
			local = d.Version == "(devel)" || d.Version == ""
			if d.Replace != nil {
				// A directory replacement reads "(devel)" or nothing.
				p.KnitReplace = d.Replace.Path
				if v := d.Replace.Version; v != "" && v != "(devel)" {
					p.KnitVersion, local = v, false
				} else {
					p.KnitVersion, local = "", true
				}
			}
		}
	}
	// The bench module lives in knit's repository: its stamp is knit's.
	sameRepo := local && (bi.Main.Path == knitModule || strings.HasPrefix(bi.Main.Path, knitModule+"/"))
	if rev := settings["vcs.revision"]; rev != "" && sameRepo {
		p.KnitRevision, p.KnitModified = rev, settings["vcs.modified"] == "true"
		p.RevisionTime, p.RevisionFrom = settings["vcs.time"], "build info"
		return p
	}
	if !local {
		if rev := pseudoRevision(p.KnitVersion); rev != "" {
			p.KnitRevision, p.RevisionFrom = rev, "pseudo-version"
		}
		return p
	}
	if dir := knitSourceDir(); dir != "" {
		if rev, modified, when, ok := gitRevision(dir); ok {
			p.KnitRevision, p.KnitModified, p.RevisionTime, p.RevisionFrom = rev, modified, when, "git"
		}
	}
	return p
}

// pseudoRevision is the commit prefix of a pseudo-version
// (v0.0.0-20240101120000-abcdef123456), or "".
func pseudoRevision(v string) string {
	i := strings.LastIndexByte(v, '-')
	if i < 0 || len(v)-i-1 != 12 {
		return ""
	}
	return v[i+1:]
}

// knitSourceDir is the directory knit's package was compiled from, as
// the binary's line table names it; "" under -trimpath.
func knitSourceDir() string {
	fn := runtime.FuncForPC(reflect.ValueOf(knit.CPU).Pointer())
	if fn == nil {
		return ""
	}
	file, _ := fn.FileLine(fn.Entry())
	if !filepath.IsAbs(file) {
		return ""
	}
	return filepath.Dir(file)
}

// gitRevision asks git for dir's HEAD, whether tracked files differ from
// it, and the commit's time; ok is false where git is missing or dir is
// not a checkout. It gives git two seconds.
func gitRevision(dir string) (rev string, modified bool, when string, ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "log", "-1", "--format=%H %cI").Output()
	if err != nil {
		return "", false, "", false
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return "", false, "", false
	}
	st, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	return f[0], err == nil && len(strings.TrimSpace(string(st))) > 0, f[1], true
}

// Short is the revision as a reader quotes it: 12 hex digits, "+dirty"
// when the checkout had changes, or "unknown".
func (p Provenance) Short() string {
	rev := p.KnitRevision
	if rev == "" {
		if p.KnitVersion != "" {
			return p.KnitVersion + " (revision unknown)"
		}
		return "unknown"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if p.KnitModified {
		rev += "+dirty"
	}
	return rev
}
