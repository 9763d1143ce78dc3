package httpiso

import (
	"context"
	"errors"
	"log"
	"net/http"
	"os"
	"runtime"
	"time"
)

// Config is one server: a variant, the JWT secret, and the knobs the
// harness reads back through /__id.
type Config struct {
	Variant VariantConfig
	Secret  []byte // HS256 key; required
	MaxBody int64  // 0 means DefaultMaxBody
	Nonce   string // echoed by /__id so a harness can tell its child apart

	// Now is the clock for /ping's ts, the card's "Rendered at" and the
	// token's iat/exp; nil is time.Now. Tests fix it to compare variants
	// byte for byte.
	Now func() time.Time
}

// Server holds the handler and the variant behind it.
type Server struct {
	cfg  Config
	exec Executor
	mux  *http.ServeMux
}

// NewServer starts cfg's variant and builds the routes. Close the Server
// to stop the variant.
func NewServer(cfg Config) (*Server, error) {
	if len(cfg.Secret) == 0 {
		return nil, errors.New("httpiso: no JWT secret")
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	exec, err := NewExecutor(cfg.Variant)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, exec: exec, mux: http.NewServeMux()}
	now, secret := cfg.Now, cfg.Secret
	ssr := exec.Bind(func(body []byte) Reply { return RenderSSR(body, now()) })
	jwt := exec.Bind(func(body []byte) Reply { return IssueJWT(body, secret, now()) })

	s.mux.HandleFunc("GET /ping", func(w http.ResponseWriter, r *http.Request) {
		Ping(now()).write(w)
	})
	s.mux.Handle("POST /ssr", s.heavy(ssr))
	s.mux.Handle("POST /jwt", s.heavy(jwt))
	s.mux.HandleFunc("GET /__id", s.identity)
	return s, nil
}

// Handler is the server's routes.
func (s *Server) Handler() http.Handler { return s.mux }

// Close stops the variant (its pool, if it has one), bounded by ctx.
func (s *Server) Close(ctx context.Context) error { return s.exec.Close(ctx) }

// heavy is the request goroutine's part of a heavy route: read the body,
// hand it to the variant, write the reply. The same in every variant.
func (s *Server) heavy(run Runner) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := readBody(w, r, s.cfg.MaxBody)
		switch {
		case errors.Is(err, errTooLarge):
			http.Error(w, "Payload too large", http.StatusRequestEntityTooLarge)
			return
		case err != nil:
			// The client went away mid-body; nobody is left to answer.
			return
		}
		reply, err := run(r.Context(), body)
		if err != nil {
			if r.Context().Err() == nil {
				http.Error(w, "Service unavailable", http.StatusServiceUnavailable)
			}
			return
		}
		reply.write(w)
	})
}

// Identity is what GET /__id answers: enough for a harness to prove that
// the process answering on its port is the child it started, configured
// as it asked.
type Identity struct {
	PID        int    `json:"pid"`
	Variant    string `json:"variant"`
	Workers    int    `json:"workers"`
	Spin       string `json:"spin"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	NumCPU     int    `json:"numcpu"` // CPUs in the process's affinity mask at start
	Nonce      string `json:"nonce"`
	GoVersion  string `json:"go"`
}

// ID is the server's Identity now.
func (s *Server) ID() Identity {
	v := s.cfg.Variant
	id := Identity{
		PID:        os.Getpid(),
		Variant:    v.Name,
		Workers:    v.Workers,
		Spin:       v.Spin.String(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		NumCPU:     runtime.NumCPU(),
		Nonce:      s.cfg.Nonce,
		GoVersion:  runtime.Version(),
	}
	if v.Name == Inline {
		id.Workers, id.Spin = 0, ""
	}
	if v.Name != Knit {
		id.Spin = ""
	}
	return id
}

func (s *Server) identity(w http.ResponseWriter, r *http.Request) {
	b, err := jsonMarshal(s.ID())
	if err != nil {
		log.Printf("httpiso: identity: %v", err)
		http.Error(w, "identity", http.StatusInternalServerError)
		return
	}
	Reply{Status: http.StatusOK, ContentType: contentJSON, Body: b}.write(w)
}
