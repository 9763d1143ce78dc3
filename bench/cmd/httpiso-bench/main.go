// Command httpiso-bench measures the HTTP isolation example (package
// httpiso): the Hono server benchmark of Knitting
// (github.com/mimiMonads/knitting) with the server, the load and the
// driver as separate processes on one machine, pinned apart.
//
//	httpiso-bench                      # quick plan, about 3 minutes on 2 CPUs
//	httpiso-bench -full                # the Knitting example's sweep, for a 16-core machine
//	httpiso-bench -configs inline,knit:1,ants:1 -rounds 3
//
// Tables go to stdout, progress to stderr, results.md and results.json to
// -out. The same binary is the server ("httpiso-bench serve ...") and the
// load generator ("httpiso-bench load"); the driver re-executes itself in
// those roles. See bench/httpiso/README.md.
package main

import (
	"os"

	"github.com/knit-go/knit/bench/httpiso/harness"
)

func main() {
	os.Exit(harness.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
