package httpiso

import (
	"bytes"
	"html/template"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// SSRInput is the Knitting example's SsrInput after normalisation: every field has a
// usable value, whatever the body held.
type SSRInput struct {
	Name     string
	Plan     string // "free" or "pro"
	Bio      string
	Projects int // 0..MaxProjects
}

// The Knitting example's defaults and bounds (RawSsrInputSchema, SsrInputSchema).
const (
	DefaultName = "Anonymous"
	DefaultPlan = "free"
	DefaultBio  = "No bio yet."
	MaxProjects = 100_000
)

// NormalizeSSR applies the Knitting example's rules to a decoded body, or to nil for
// a body that was not valid UTF-8 or not a JSON object (the Knitting example renders
// the defaults then; it never answers 400 on /ssr):
//
//   - name, bio: strings, trimmed, kept when non-empty; else the default
//   - plan: exactly "free" or "pro"; else "free"
//   - projects: Number(value), kept when finite, floored and clamped to
//     [0, 100000]; else 0
func NormalizeSSR(obj map[string]any) SSRInput {
	in := SSRInput{Name: DefaultName, Plan: DefaultPlan, Bio: DefaultBio}
	if s, ok := obj["name"].(string); ok {
		if s = jsTrim(s); s != "" {
			in.Name = s
		}
	}
	if s, ok := obj["plan"].(string); ok && (s == "free" || s == "pro") {
		in.Plan = s
	}
	if s, ok := obj["bio"].(string); ok {
		if s = jsTrim(s); s != "" {
			in.Bio = s
		}
	}
	if v, present := obj["projects"]; present {
		if n := jsNumber(v); finite(n) {
			in.Projects = int(math.Max(0, math.Min(MaxProjects, math.Floor(n))))
		}
	}
	return in
}

// cardTemplate is the Knitting example's UserCard as React renders it to a string.
// html/template escapes name and bio for their contexts, as React does.
var cardTemplate = template.Must(template.New("card").Parse(`<!doctype html><html lang="en"><head><meta charSet="utf-8"/><meta name="viewport" content="width=device-width, initial-scale=1"/><title>{{.Name}} - SSR Card</title><style>
          body { margin: 0; font-family: ui-sans-serif, system-ui, sans-serif; background: #f7f8fa; color: #111827; }
          main { min-height: 100vh; display: grid; place-items: center; padding: 24px; }
          article { width: min(680px, 100%); background: #fff; border: 1px solid #e5e7eb; border-radius: 16px; padding: 20px; }
          h1 { margin: 0 0 8px; font-size: 1.4rem; }
          p { margin: 0 0 10px; line-height: 1.45; }
          .meta { color: #4b5563; font-size: 0.92rem; display: flex; gap: 12px; flex-wrap: wrap; }
          .pill { display: inline-block; background: #eef2ff; color: #4338ca; border-radius: 999px; padding: 4px 10px; font-weight: 600; }
        </style></head><body><main><article><h1>{{.Name}}</h1><p>{{.Bio}}</p><div class="meta"><span class="pill">{{.Plan}} plan</span><span>{{.Projects}} projects</span><span>Rendered at {{.UpdatedAt}}</span></div></article></main></body></html>`))

// cardData is what the template sees: the display forms of SSRInput.
type cardData struct {
	Name, Bio, Plan, Projects, UpdatedAt string
}

// RenderSSR is the /ssr route's work, the Knitting example's renderSsrPageHost: decode,
// normalise, render. It never fails.
func RenderSSR(body []byte, now time.Time) Reply {
	obj, _ := decodeObject(body)
	in := NormalizeSSR(obj)
	var buf bytes.Buffer
	buf.Grow(1536)
	err := cardTemplate.Execute(&buf, cardData{
		Name:      in.Name,
		Bio:       in.Bio,
		Plan:      strings.ToUpper(in.Plan),
		Projects:  groupThousands(in.Projects),
		UpdatedAt: isoTime(now),
	})
	if err != nil { // the template is fixed and its data are strings
		panic("httpiso: rendering the card: " + err.Error())
	}
	return Reply{Status: http.StatusOK, ContentType: contentHTML, Body: buf.Bytes()}
}

// groupThousands formats n as en-US toLocaleString does: 100000 is
// "100,000".
func groupThousands(n int) string {
	s := strconv.Itoa(n)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	lead := len(s) % 3
	if lead == 0 {
		lead = 3
	}
	b.WriteString(s[:lead])
	for i := lead; i < len(s); i += 3 {
		b.WriteByte(',')
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// isoTime is Date.prototype.toISOString: UTC, milliseconds, a Z.
func isoTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}
