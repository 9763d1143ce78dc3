// Command httpiso-server is the HTTP isolation example's server: the Hono
// server benchmark of Knitting (github.com/mimiMonads/knitting) in
// net/http, with the heavy routes run inline, on a knit pool, behind a
// semaphore, or on an ants pool.
//
//	HTTPISO_JWT_SECRET=$(head -c 32 /dev/urandom | base64) \
//	  httpiso-server -variant knit -workers 1 -spin default -gomaxprocs 2
//
// Routes: GET /ping, POST /ssr {name?, plan?, bio?, projects?},
// POST /jwt {user: {id, email?, role?}, ttlSec?}, GET /__id. See the
// package httpiso and its README for the flags.
package main

import (
	"os"

	"github.com/knit-go/knit/bench/httpiso"
)

func main() {
	os.Exit(httpiso.Main(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}
