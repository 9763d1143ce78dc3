package httpiso

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// Reply is what a route's body function produces: the status, content
// type and body the request goroutine writes. A value, so a pool can carry
// it back without the handler's ResponseWriter ever leaving the handler.
type Reply struct {
	Status      int
	ContentType string
	Body        []byte
}

const (
	contentJSON = "application/json; charset=utf-8"
	contentHTML = "text/html; charset=utf-8"
	contentText = "text/plain; charset=utf-8"
)

// badRequest is the Knitting example's reply to a JWT body it cannot use.
var badRequest = Reply{Status: http.StatusBadRequest, ContentType: contentText, Body: []byte("Bad request")}

// write sends r. The length is set so that small replies go out in one
// write without chunked encoding.
func (r Reply) write(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", r.ContentType)
	h["Content-Length"] = []string{strconv.Itoa(len(r.Body))}
	w.WriteHeader(r.Status)
	w.Write(r.Body)
}

// jsonMarshal is json.Marshal without HTML escaping, as JSON.stringify.
func jsonMarshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
