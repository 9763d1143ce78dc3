package httpiso

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"
)

// The Knitting example validates with zod in JavaScript, so its normalisation rules
// are JavaScript's conversions: Number(value) for projects and ttlSec,
// String.prototype.trim for name and bio. They are reproduced here for
// the values JSON can produce, so that the same body is normalised the
// same way by both servers ("17" is 17, [5] is 5, true is 1, "0x10" is
// 16, "1e400" is not finite).

// jsNumber is JavaScript's Number(v) for a value decoded from JSON with
// UseNumber. It returns NaN where JavaScript does.
func jsNumber(v any) float64 {
	switch v := v.(type) {
	case nil:
		return 0 // Number(null)
	case bool:
		if v {
			return 1
		}
		return 0
	case json.Number:
		return parseDecimal(string(v))
	case string:
		return jsStringToNumber(v)
	case []any:
		// Number(array) is Number(String(array)): the elements joined by
		// commas. Two or more elements always leave a comma, hence NaN.
		switch len(v) {
		case 0:
			return 0
		case 1:
			switch e := v[0].(type) {
			case nil:
				return 0 // String([null]) is ""
			case bool:
				return math.NaN() // "true" and "false" are not numbers
			case map[string]any:
				return math.NaN() // "[object Object]"
			default:
				return jsNumber(e)
			}
		}
	}
	return math.NaN() // objects, and arrays of two or more
}

// finite reports whether f is neither NaN nor infinite, which is
// Number.isFinite.
func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// jsStringToNumber is StringToNumber from ECMA-262: trimmed, empty is 0,
// Infinity with an optional sign, a decimal literal, or a 0b/0o/0x integer
// without a sign. Anything else is NaN. Unlike strconv.ParseFloat it
// takes no "inf", "nan", underscores or hex floats.
func jsStringToNumber(s string) float64 {
	s = jsTrim(s)
	if s == "" {
		return 0
	}
	if len(s) > 2 && s[0] == '0' {
		base := 0
		switch s[1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 0 {
			n, ok := new(big.Int).SetString(s[2:], base)
			if !ok || strings.ContainsAny(s[2:], "+-_") {
				return math.NaN()
			}
			f, _ := new(big.Float).SetInt(n).Float64() // huge values round to +Inf, as in JS
			return f
		}
	}
	body := s
	sign := 1.0
	if body[0] == '+' || body[0] == '-' {
		if body[0] == '-' {
			sign = -1
		}
		body = body[1:]
	}
	if body == "Infinity" {
		return math.Inf(int(sign))
	}
	if !isDecimalLiteral(body) {
		return math.NaN()
	}
	return parseDecimal(s)
}

// isDecimalLiteral reports whether s is an unsigned StrUnsignedDecimalLiteral
// other than Infinity: digits with an optional fraction, or a fraction
// alone, then an optional exponent.
func isDecimalLiteral(s string) bool {
	i, intDigits := digits(s, 0)
	fracDigits := 0
	if i < len(s) && s[i] == '.' {
		i, fracDigits = digits(s, i+1)
	}
	if intDigits+fracDigits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		var n int
		if i, n = digits(s, i); n == 0 {
			return false
		}
	}
	return i == len(s)
}

// digits skips ASCII digits from i and returns the new index and how many
// it skipped.
func digits(s string, i int) (int, int) {
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i, i - start
}

// parseDecimal parses a literal already known to be a valid decimal
// number. Out of range is not an error in JavaScript: overflow is
// ±Infinity and underflow is 0, which is what ParseFloat returns with
// ErrRange.
func parseDecimal(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f
		}
		return math.NaN()
	}
	return f
}

// jsTrim is String.prototype.trim: it strips ECMAScript white space and
// line terminators, which include U+FEFF and exclude U+0085, unlike
// strings.TrimSpace.
func jsTrim(s string) string {
	return strings.TrimFunc(s, jsSpace)
}

func jsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', 0xFEFF, 0x2028, 0x2029:
		return true
	}
	return unicode.Is(unicode.Zs, r)
}
