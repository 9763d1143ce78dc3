package httpiso

import (
	"encoding/json"
	"net/http"
	"time"
)

// pingReply is the Knitting example's /ping body. runtime is "go" where the Knitting example has
// the JavaScript runtime's name.
type pingReply struct {
	OK      bool   `json:"ok"`
	Pong    bool   `json:"pong"`
	Runtime string `json:"runtime"`
	TS      string `json:"ts"`
}

// Ping is the /ping route: small, cheap, and never run on a pool in any
// variant. It is the probe: whatever moves its latency is the variant
// changing the request goroutines' environment, not the variant doing
// /ping's work.
func Ping(now time.Time) Reply {
	b, err := json.Marshal(pingReply{OK: true, Pong: true, Runtime: "go", TS: isoTime(now)})
	if err != nil {
		panic("httpiso: encoding the ping reply: " + err.Error())
	}
	return Reply{Status: http.StatusOK, ContentType: "application/json", Body: b}
}
