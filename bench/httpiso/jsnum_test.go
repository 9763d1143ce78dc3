package httpiso

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// decoded is v as decodeObject would hand it to jsNumber.
func decoded(t *testing.T, src string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(src))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %s: %v", src, err)
	}
	return v
}

func TestJSNumber(t *testing.T) {
	nan := math.NaN()
	inf := math.Inf(1)
	for _, tc := range []struct {
		json string
		want float64
	}{
		{`17`, 17},
		{`-2.5`, -2.5},
		{`1e400`, inf}, // JSON.parse gives Infinity; Go's float64 decode would fail
		{`null`, 0},
		{`true`, 1},
		{`false`, 0},
		{`"17"`, 17},
		{`"  17  "`, 17},
		{`"\ufeff17\u00a0"`, 17}, // BOM and NBSP are JS white space
		{`"\u008517"`, nan},      // NEL is not
		{`""`, 0},
		{`"   "`, 0},
		{`"0x10"`, 16},
		{`"0X1f"`, 31},
		{`"0b101"`, 5},
		{`"0o17"`, 15},
		{`"-0x10"`, nan}, // no sign on non-decimal literals
		{`"0x"`, nan},
		{`"0x1_0"`, nan},
		{`"1e3"`, 1000},
		{`"1E-2"`, 0.01},
		{`".5"`, 0.5},
		{`"5."`, 5},
		{`"."`, nan},
		{`"+.5e1"`, 5},
		{`"Infinity"`, inf},
		{`"-Infinity"`, math.Inf(-1)},
		{`"inf"`, nan}, // ParseFloat would take these three
		{`"NaN"`, nan},
		{`"1_000"`, nan},
		{`"12abc"`, nan},
		{`"1e"`, nan},
		{`[]`, 0},
		{`[5]`, 5},
		{`["7"]`, 7},
		{`[[8]]`, 8},
		{`[null]`, 0},
		{`[true]`, nan}, // String([true]) is "true"
		{`[1,2]`, nan},
		{`[{}]`, nan},
		{`{}`, nan},
	} {
		got := jsNumber(decoded(t, tc.json))
		if math.IsNaN(tc.want) != math.IsNaN(got) || !math.IsNaN(got) && got != tc.want {
			t.Errorf("Number(%s) = %v, want %v", tc.json, got, tc.want)
		}
	}
}

func TestJSTrim(t *testing.T) {
	for in, want := range map[string]string{
		"  Ari  ":         "Ari",
		"\t\n\r\v\fAri":   "Ari",
		"\ufeffAri\u3000": "Ari",
		"\u2028Ari\u2029": "Ari",
		"\u0085Ari":       "\u0085Ari", // strings.TrimSpace would strip NEL
		"A r i":           "A r i",
	} {
		if got := jsTrim(in); got != want {
			t.Errorf("jsTrim(%q) = %q, want %q", in, got, want)
		}
	}
}
