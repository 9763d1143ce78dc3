package httpiso

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var testSecret = []byte("test-secret-0123456789abcdef-0123")

func fixedNow() time.Time { return time.Date(2026, 8, 24, 12, 34, 56, 789_000_000, time.UTC) }

// testVariants is every variant at the sizes the tests exercise.
var testVariants = []VariantConfig{
	{Name: Inline},
	{Name: Knit, Workers: 1},
	{Name: Knit, Workers: 2, Spin: Spin{Fixed: true}},
	{Name: Knit, Workers: 1, Spin: Spin{Fixed: true, D: 50 * time.Microsecond}},
	{Name: Semaphore, Workers: 1},
	{Name: Ants, Workers: 2},
}

func newTestServer(t *testing.T, v VariantConfig) *Server {
	t.Helper()
	s, err := NewServer(Config{Variant: v, Secret: testSecret, Now: fixedNow, MaxBody: 1024, Nonce: "n"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("closing %s: %v", v, err)
		}
	})
	return s
}

// serve sends one request through the server's handler.
func serve(s *Server, method, path string, body []byte) *httptest.ResponseRecorder {
	var r *http.Request
	if body == nil {
		r = httptest.NewRequest(method, path, nil)
	} else {
		r = httptest.NewRequest(method, path, bytes.NewReader(body))
	}
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	return w
}

func TestPing(t *testing.T) {
	s := newTestServer(t, VariantConfig{Name: Inline})
	w := serve(s, "GET", "/ping", nil)
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET /ping: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	if got, want := w.Body.String(), `{"ok":true,"pong":true,"runtime":"go","ts":"2026-08-24T12:34:56.789Z"}`; got != want {
		t.Errorf("GET /ping = %s, want %s", got, want)
	}
}

func TestSSRRoute(t *testing.T) {
	s := newTestServer(t, VariantConfig{Name: Inline})
	for _, tc := range []struct {
		name, body string
		want       []string // substrings of the card
	}{
		{"example body", `{"name":"Ari","plan":"pro","bio":"Building on Knitting","projects":17}`,
			[]string{"<h1>Ari</h1>", "<p>Building on Knitting</p>", "PRO plan", "<span>17 projects</span>"}},
		{"bad JSON renders defaults", `{"name":`, []string{"<h1>Anonymous</h1>", "<p>No bio yet.</p>", "FREE plan", "<span>0 projects</span>"}},
		{"invalid UTF-8 renders defaults", "{\"name\":\"\xc3\x28\"}", []string{"<h1>Anonymous</h1>"}},
		{"empty body renders defaults", ``, []string{"<h1>Anonymous</h1>"}},
		{"normalised fields", `{"name":"  Bo ","plan":"gold","bio":"","projects":"123456"}`,
			[]string{"<h1>Bo</h1>", "<p>No bio yet.</p>", "FREE plan", "<span>100,000 projects</span>"}},
	} {
		w := serve(s, "POST", "/ssr", []byte(tc.body))
		if w.Code != 200 || w.Header().Get("Content-Type") != contentHTML {
			t.Errorf("%s: %d %q", tc.name, w.Code, w.Header().Get("Content-Type"))
			continue
		}
		for _, want := range tc.want {
			if !strings.Contains(w.Body.String(), want) {
				t.Errorf("%s: card lacks %q", tc.name, want)
			}
		}
	}
}

func TestJWTRoute(t *testing.T) {
	s := newTestServer(t, VariantConfig{Name: Inline})
	iat := fixedNow().Unix()
	type claims = map[string]any
	for _, tc := range []struct {
		name, body string
		status     int
		ttl        int64  // when 200
		email      string // when 200; "" means absent
		role       string
	}{
		{"example body", `{"user":{"id":"u_42","email":"ari@example.com","role":"admin"},"ttlSec":900}`, 200, 900, "ari@example.com", "admin"},
		{"id only", `{"user":{"id":"u_1"}}`, 200, DefaultTTL, "", "member"},
		{"extra keys ignored", `{"user":{"id":"u_1","x":1},"y":2}`, 200, DefaultTTL, "", "member"},
		{"BOM stripped", "\xef\xbb\xbf{\"user\":{\"id\":\"u\"}}", 200, DefaultTTL, "", "member"},
		{"ttl below minimum", `{"user":{"id":"u"},"ttlSec":5}`, 200, MinTTL, "", "member"},
		{"ttl above maximum", `{"user":{"id":"u"},"ttlSec":1e9}`, 200, MaxTTL, "", "member"},
		{"ttl floored", `{"user":{"id":"u"},"ttlSec":3600.9}`, 200, 3600, "", "member"},
		{"ttl string", `{"user":{"id":"u"},"ttlSec":"120"}`, 200, 120, "", "member"},
		{"ttl not a number", `{"user":{"id":"u"},"ttlSec":"soon"}`, 200, DefaultTTL, "", "member"},
		{"ttl null is Number(null)=0, clamped", `{"user":{"id":"u"},"ttlSec":null}`, 200, MinTTL, "", "member"},
		{"ttl infinite", `{"user":{"id":"u"},"ttlSec":1e400}`, 200, DefaultTTL, "", "member"},
		{"ttl negative", `{"user":{"id":"u"},"ttlSec":-100}`, 200, MinTTL, "", "member"},

		{"bad JSON", `{"user":`, 400, 0, "", ""},
		{"invalid UTF-8", "{\"user\":{\"id\":\"\xff\"}}", 400, 0, "", ""},
		{"empty body", ``, 400, 0, "", ""},
		{"array body", `[{"user":{"id":"u"}}]`, 400, 0, "", ""},
		{"trailing data", `{"user":{"id":"u"}} x`, 400, 0, "", ""},
		{"no user", `{"ttlSec":60}`, 400, 0, "", ""},
		{"user not an object", `{"user":"u_42"}`, 400, 0, "", ""},
		{"missing id", `{"user":{"email":"a@b.co"}}`, 400, 0, "", ""},
		{"empty id", `{"user":{"id":""}}`, 400, 0, "", ""},
		{"numeric id", `{"user":{"id":42}}`, 400, 0, "", ""},
		{"bad email", `{"user":{"id":"u","email":"not-an-email"}}`, 400, 0, "", ""},
		{"email with ..", `{"user":{"id":"u","email":"a..b@example.com"}}`, 400, 0, "", ""},
		{"email leading dot", `{"user":{"id":"u","email":".a@example.com"}}`, 400, 0, "", ""},
		{"email null", `{"user":{"id":"u","email":null}}`, 400, 0, "", ""},
		{"empty role", `{"user":{"id":"u","role":""}}`, 400, 0, "", ""},
		{"role not a string", `{"user":{"id":"u","role":7}}`, 400, 0, "", ""},
	} {
		w := serve(s, "POST", "/jwt", []byte(tc.body))
		if w.Code != tc.status {
			t.Errorf("%s: status %d, want %d (%s)", tc.name, w.Code, tc.status, w.Body)
			continue
		}
		if tc.status != 200 {
			if w.Body.String() != "Bad request" {
				t.Errorf("%s: body %q, want the Knitting example's \"Bad request\"", tc.name, w.Body)
			}
			continue
		}
		if !strings.HasPrefix(w.Body.String(), `{"ok":true,"token":"`) {
			t.Errorf("%s: reply %s does not start as the Knitting example's", tc.name, w.Body)
		}
		var rep struct {
			OK    bool
			Token string
			Sub   string
			Exp   int64
		}
		if err := json.Unmarshal(w.Body.Bytes(), &rep); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		tok, err := jwt.Parse(rep.Token, func(*jwt.Token) (any, error) { return testSecret, nil },
			jwt.WithValidMethods([]string{"HS256"}), jwt.WithoutClaimsValidation())
		if err != nil {
			t.Fatalf("%s: token does not verify: %v", tc.name, err)
		}
		c := tok.Claims.(jwt.MapClaims)
		want := claims{"sub": rep.Sub, "role": tc.role, "iat": float64(iat), "exp": float64(iat + tc.ttl)}
		if tc.email != "" {
			want["email"] = tc.email
		}
		if fmt.Sprint(map[string]any(c)) != fmt.Sprint(want) {
			t.Errorf("%s: claims %v, want %v", tc.name, c, want)
		}
		if rep.Exp != iat+tc.ttl {
			t.Errorf("%s: exp %d, want %d", tc.name, rep.Exp, iat+tc.ttl)
		}
	}
}

func TestZodEmail(t *testing.T) {
	for s, want := range map[string]bool{
		"ari@example.com":        true,
		"a.b+tag@sub.example.io": true,
		"o'neil@example.com":     true,
		"a@b.c":                  false, // TLD of one letter
		"a@-b.com":               false,
		"a.@example.com":         false, // the last local character may not be a dot
		"a@example":              false,
		"\u212a@example.com":     false, // the Kelvin sign is not K in JavaScript's /i
		"a@example.com\n":        false,
		"":                       false,
	} {
		if got := zodEmail(s); got != want {
			t.Errorf("zodEmail(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestBodyLimit(t *testing.T) {
	for _, v := range testVariants {
		s := newTestServer(t, v) // MaxBody 1024
		for _, path := range []string{"/ssr", "/jwt"} {
			big := []byte(`{"user":{"id":"u"},"pad":"` + strings.Repeat("x", 1024) + `"}`)
			if w := serve(s, "POST", path, big); w.Code != http.StatusRequestEntityTooLarge {
				t.Errorf("%s POST %s with %d bytes: %d, want 413", v, path, len(big), w.Code)
			}
			fits := []byte(`{"user":{"id":"u"},"pad":"` + strings.Repeat("x", 1024-28) + `"}`)
			if len(fits) != 1024 {
				t.Fatalf("fits is %d bytes", len(fits))
			}
			if w := serve(s, "POST", path, fits); w.Code != http.StatusOK {
				t.Errorf("%s POST %s with exactly the limit: %d, want 200", v, path, w.Code)
			}
		}
	}
}

func TestMethods(t *testing.T) {
	s := newTestServer(t, VariantConfig{Name: Inline})
	for _, c := range []struct{ method, path string }{{"POST", "/ping"}, {"GET", "/ssr"}, {"GET", "/jwt"}, {"POST", "/__id"}} {
		if w := serve(s, c.method, c.path, nil); w.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: %d, want 405", c.method, c.path, w.Code)
		}
	}
	if w := serve(s, "GET", "/nope", nil); w.Code != http.StatusNotFound {
		t.Errorf("GET /nope: %d, want 404", w.Code)
	}
}

// variantInputs are the bodies every variant must answer identically.
var variantInputs = []struct{ method, path, body string }{
	{"GET", "/ping", ""},
	{"POST", "/ssr", `{"name":"Ari","plan":"pro","bio":"Building on Knitting","projects":17}`},
	{"POST", "/ssr", `{"name":"<b>x</b>","projects":"0x2710"}`},
	{"POST", "/ssr", `garbage`},
	{"POST", "/ssr", "\xff"},
	{"POST", "/jwt", `{"user":{"id":"u_42","email":"ari@example.com","role":"admin"},"ttlSec":900}`},
	{"POST", "/jwt", `{"user":{"id":"u_1"},"ttlSec":"7"}`},
	{"POST", "/jwt", `{"user":{}}`},
	{"POST", "/jwt", "\xff"},
	{"POST", "/jwt", `{"user":{"id":"u"},"pad":"` + strings.Repeat("x", 2000) + `"}`},
}

// TestVariantsIdentical: with the clock fixed, every variant gives the
// same status, content type and bytes as inline for every input, including
// the token (same iat and exp, same signature). With a live clock only the
// timestamps would differ.
func TestVariantsIdentical(t *testing.T) {
	want := make([]string, len(variantInputs))
	ref := newTestServer(t, VariantConfig{Name: Inline})
	for i, in := range variantInputs {
		want[i] = describe(serve(ref, in.method, in.path, []byte(in.body)))
	}
	for _, v := range testVariants[1:] {
		s := newTestServer(t, v)
		for i, in := range variantInputs {
			if got := describe(serve(s, in.method, in.path, []byte(in.body))); got != want[i] {
				t.Errorf("%s %s %s %.20q:\n got %s\nwant %s", v, in.method, in.path, in.body, got, want[i])
			}
		}
	}
}

// TestVariantsConcurrent sends many requests at once through a real
// listener, so the pools queue, hand off and wake under the race
// detector; every answer must still be inline's.
func TestVariantsConcurrent(t *testing.T) {
	ref := newTestServer(t, VariantConfig{Name: Inline})
	want := make([]string, len(variantInputs))
	for i, in := range variantInputs {
		want[i] = describe(serve(ref, in.method, in.path, []byte(in.body)))
	}
	for _, v := range testVariants[1:] {
		hs := httptest.NewServer(newTestServer(t, v).Handler())
		var wg sync.WaitGroup
		errs := make(chan string, 64)
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range 10 {
					i := (g + k) % len(variantInputs)
					in := variantInputs[i]
					req, _ := http.NewRequest(in.method, hs.URL+in.path, strings.NewReader(in.body))
					resp, err := hs.Client().Do(req)
					if err != nil {
						errs <- err.Error()
						return
					}
					rec := httptest.NewRecorder()
					rec.Code = resp.StatusCode
					rec.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
					rec.Body.ReadFrom(resp.Body)
					resp.Body.Close()
					if got := describe(rec); got != want[i] {
						errs <- fmt.Sprintf("%s %s: got %.80s, want %.80s", in.method, in.path, got, want[i])
						return
					}
				}
			}()
		}
		wg.Wait()
		hs.Close()
		close(errs)
		for e := range errs {
			t.Errorf("%s: %s", v, e)
		}
	}
}

func describe(w *httptest.ResponseRecorder) string {
	return fmt.Sprintf("%d %s %s", w.Code, w.Header().Get("Content-Type"), w.Body.String())
}

func TestIdentity(t *testing.T) {
	s := newTestServer(t, VariantConfig{Name: Knit, Workers: 2, Spin: Spin{Fixed: true, D: 50 * time.Microsecond}})
	w := serve(s, "GET", "/__id", nil)
	var id Identity
	if err := json.Unmarshal(w.Body.Bytes(), &id); err != nil {
		t.Fatal(err)
	}
	if id.Variant != Knit || id.Workers != 2 || id.Spin != "50us" || id.Nonce != "n" || id.PID == 0 || id.GOMAXPROCS < 1 {
		t.Errorf("identity %+v", id)
	}
}

func TestParseSpin(t *testing.T) {
	for in, want := range map[string]string{"": "default", "default": "default", "0": "0", "50": "50us", "50us": "50us", "1ms": "1000us", "1.5us": "1.5µs"} {
		s, err := ParseSpin(in)
		if err != nil || s.String() != want {
			t.Errorf("ParseSpin(%q) = %v, %v; want %s", in, s, err, want)
		}
		if back, err := ParseSpin(s.String()); err != nil || back != s {
			t.Errorf("ParseSpin(%q).String() does not read back: %v, %v", in, back, err)
		}
	}
	for _, bad := range []string{"-1", "-5us", "fast", "50 us"} {
		if _, err := ParseSpin(bad); err == nil {
			t.Errorf("ParseSpin(%q) accepted", bad)
		}
	}
}

func TestNewExecutorRejects(t *testing.T) {
	for _, v := range []VariantConfig{{Name: "threads", Workers: 1}, {Name: Knit}, {Name: Ants, Workers: -1}, {Name: Semaphore}} {
		if e, err := NewExecutor(v); err == nil {
			e.Close(context.Background())
			t.Errorf("NewExecutor(%+v) accepted", v)
		}
	}
}

func TestMainRefuses(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	withSecret := env(map[string]string{SecretEnv: "s"})
	for _, tc := range []struct {
		name   string
		args   []string
		getenv func(string) string
		want   string
	}{
		{"no secret", []string{"-addr", "127.0.0.1:0"}, env(nil), SecretEnv + " is not set"},
		{"public address", []string{"-addr", "0.0.0.0:0"}, withSecret, "only 127.0.0.1"},
		{"any address", []string{"-addr", ":0"}, withSecret, "only 127.0.0.1"},
		{"localhost name", []string{"-addr", "localhost:0"}, withSecret, "only 127.0.0.1"},
		{"unknown variant", []string{"-addr", "127.0.0.1:0", "-variant", "fibers"}, withSecret, "unknown variant"},
		{"bad spin", []string{"-addr", "127.0.0.1:0", "-variant", "knit", "-spin", "lots"}, withSecret, "spin"},
		{"bad workers from KNIT_THREADS", []string{"-addr", "127.0.0.1:0", "-variant", "knit"},
			env(map[string]string{SecretEnv: "s", "KNIT_THREADS": "0"}), "workers >= 1"},
	} {
		var out, errb bytes.Buffer
		if code := Main(tc.args, tc.getenv, &out, &errb); code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", tc.name, code, errb.String(), tc.want)
		}
	}
}
