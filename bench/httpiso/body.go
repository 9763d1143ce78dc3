package httpiso

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"unicode/utf8"
)

// DefaultMaxBody is the largest request body a route reads. The Knitting example's
// bodies are under 100 bytes; 16 KiB leaves room for a long bio and
// still caps what a client can make the server buffer.
const DefaultMaxBody = 16 << 10

var errTooLarge = errors.New("httpiso: request body too large")

// readBody reads the whole body, at most limit bytes. It runs on the
// request goroutine in every variant, as c.req.arrayBuffer() runs on
// Knitting's host thread: only the parsing and the route's work move.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	b, err := io.ReadAll(body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, errTooLarge
		}
		return nil, err
	}
	return b, nil
}

// utf8BOM is stripped before decoding, as TextDecoder does by default.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// decodeObject is the Knitting example's "fatal" UTF-8 decode followed by
// ParsedJsonObjectSchema: the body must be valid UTF-8 holding one JSON
// object (not an array, null or a scalar). Numbers stay json.Number so
// that huge values reach jsNumber as JavaScript would see them (1e400 is
// Infinity there, not a decoding error).
func decodeObject(body []byte) (map[string]any, bool) {
	if !utf8.Valid(body) {
		return nil, false
	}
	body = bytes.TrimPrefix(body, utf8BOM)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF { // trailing data: JSON.parse rejects it
		return nil, false
	}
	obj, ok := v.(map[string]any)
	return obj, ok
}
