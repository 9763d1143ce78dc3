package httpiso

import (
	"strings"
	"testing"
)

func TestNormalizeSSR(t *testing.T) {
	def := SSRInput{Name: DefaultName, Plan: DefaultPlan, Bio: DefaultBio}
	with := func(f func(*SSRInput)) SSRInput { in := def; f(&in); return in }
	for _, tc := range []struct {
		body string
		want SSRInput
	}{
		{`{"name":"Ari","plan":"pro","bio":"Building on Knitting","projects":17}`,
			SSRInput{Name: "Ari", Plan: "pro", Bio: "Building on Knitting", Projects: 17}},
		{`{}`, def},
		{`not json`, def},
		{`[1,2,3]`, def},
		{`null`, def},
		{`"string"`, def},
		{"\xff\xfe{}", def}, // invalid UTF-8: decoded as "", then {}
		{`{"name":"  Ari  "}`, with(func(i *SSRInput) { i.Name = "Ari" })},
		{`{"name":"   "}`, def},
		{`{"name":42}`, def},
		{`{"name":null}`, def},
		{`{"bio":" hi "}`, with(func(i *SSRInput) { i.Bio = "hi" })},
		{`{"bio":["x"]}`, def},
		{`{"plan":"free"}`, def},
		{`{"plan":"PRO"}`, def},
		{`{"plan":" pro"}`, def},
		{`{"plan":"enterprise"}`, def},
		{`{"projects":"17"}`, with(func(i *SSRInput) { i.Projects = 17 })},
		{`{"projects":12.9}`, with(func(i *SSRInput) { i.Projects = 12 })},
		{`{"projects":-5}`, def},
		{`{"projects":-0.5}`, def},
		{`{"projects":1e9}`, with(func(i *SSRInput) { i.Projects = MaxProjects })},
		{`{"projects":1e400}`, def},
		{`{"projects":"abc"}`, def},
		{`{"projects":true}`, with(func(i *SSRInput) { i.Projects = 1 })},
		{`{"projects":[42]}`, with(func(i *SSRInput) { i.Projects = 42 })},
		{`{"projects":"0x10"}`, with(func(i *SSRInput) { i.Projects = 16 })},
		{`{"projects":null}`, def},
		{"\xef\xbb\xbf{\"name\":\"Bom\"}", with(func(i *SSRInput) { i.Name = "Bom" })}, // TextDecoder strips a BOM
		{`{"name":"a"} {"name":"b"}`, def},                                             // JSON.parse rejects trailing data
	} {
		obj, _ := decodeObject([]byte(tc.body))
		if got := NormalizeSSR(obj); got != tc.want {
			t.Errorf("NormalizeSSR(%q) = %+v, want %+v", tc.body, got, tc.want)
		}
	}
}

func TestGroupThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 17: "17", 999: "999", 1000: "1,000", 12345: "12,345", 100000: "100,000", 1234567: "1,234,567"} {
		if got := groupThousands(n); got != want {
			t.Errorf("groupThousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestRenderSSREscapes(t *testing.T) {
	r := RenderSSR([]byte(`{"name":"<script>alert(1)</script>","bio":"a & b","plan":"pro","projects":1234}`), fixedNow())
	body := string(r.Body)
	for _, want := range []string{
		"<!doctype html>",
		"<title>&lt;script&gt;alert(1)&lt;/script&gt; - SSR Card</title>",
		"<h1>&lt;script&gt;alert(1)&lt;/script&gt;</h1>",
		"<p>a &amp; b</p>",
		`<span class="pill">PRO plan</span>`,
		"<span>1,234 projects</span>",
		"<span>Rendered at 2026-08-24T12:34:56.789Z</span>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("card lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "<script>") {
		t.Errorf("card holds an unescaped <script>")
	}
}
