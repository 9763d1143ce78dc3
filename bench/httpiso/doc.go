// Package httpiso is the HTTP isolation example: the Hono server
// benchmark of Knitting (github.com/mimiMonads/knitting; its docs'
// examples/servers/hono_server) rebuilt with net/http.
//
// Three routes with a Pareto shape. GET /ping returns a small JSON object
// and never touches a pool in any variant; POST /ssr renders a user card
// with html/template; POST /jwt signs an HS256 token. The two heavy routes
// decode, validate and normalise their bodies exactly as the Knitting example's zod
// schemas do, so every variant does the same work for the same bytes.
//
// The variants differ only in where the heavy work runs:
//
//	inline     in the handler goroutine (the Knitting example's hono_only)
//	knit       as knit pool tasks; the handler waits on the Future
//	semaphore  in the handler, at most N at once (x/sync/semaphore)
//	ants       on an ants pool of N goroutines; the handler waits
//
// The request goroutine always reads the body (capped by
// http.MaxBytesReader) and writes the response, as Knitting's host thread
// does; only the route's body function moves.
//
// GET /__id reports the process's identity (pid, variant, workers, spin,
// GOMAXPROCS, nonce) so that a harness can prove it is measuring the
// process it started. Main is the server's command line; the harness in
// httpiso/harness drives it.
package httpiso
