package main

import "github.com/knit-go/knit/bench/report"

// useCases are the verdict's questions: "is knit faster than what a Go
// programmer would use instead, for ...". Each names the table that
// answers it and the knit row a user of that API would write; its rivals
// are every Go and peer row of the same table (the fastest is shown) and
// its floor the table's fastest stable limit row, unless the use case
// names one.
//
// Rows are matched by the words that say which API they use, so a row
// keeps its place when its display name gains words: the ipc-peers knit
// rows are matched as "CallBatch", never "Call per message", "spin" or
// "parked".
var useCases = []report.UseCase{
	{
		Name:    "streaming one to one",
		Suite:   "rings",
		Group:   report.GroupContaining("SPSC throughput", "batch 1"),
		Subject: report.AllOf(report.Contains("knit SPSC["), report.Not(report.Contains("try"))),
		API:     "SPSC Push/Pop, blocking",
	},
	{
		Name:    "a job queue (fire and forget)",
		Suite:   "pool",
		Group:   report.LastGroup, // GOMAXPROCS workers
		Subject: report.Contains("knit pool.Go"),
		API:     "pool.Go",
	},
	{
		Name:    "a request/reply worker",
		Suite:   "pool-call",
		Subject: report.AllOf(report.Contains("knit", "Call"), report.Contains("default")),
		API:     "Task.Call + Future.Wait",
	},
	{
		Name:  "fire 100 calls, then collect them",
		Suite: "ipc-peers",
		Group: report.GroupContaining("100 messages"),
		Subject: report.AllOf(
			report.Contains("knit", "CallBatch"),
			report.Not(report.Contains("per message")), report.Not(report.Contains("spin")), report.Not(report.Contains("parked"))),
		API: "Task.CallBatch + pool.WaitAll",
		// The floor of the pool's own shape: the batch to a worker
		// goroutine and back through two bare knit rings, waiting as the
		// pool does; not the atomic limit's two locked threads, which on
		// a loaded VM reads many times the rows it would bound.
		Floor: report.Contains("limit", "SPSC rings there and back"),
	},
	{
		Name:    "many producers, one consumer",
		Suite:   "mailbox",
		Group:   report.GroupContaining("4 producer"),
		Subject: report.Contains("knit Mailbox"),
		API:     "Mailbox Push/Pop",
	},
	{
		Name:    "a shared MPMC queue, 2 producers 2 consumers",
		Suite:   "peers",
		Group:   report.GroupContaining("8 B items", "2P2C"),
		Subject: report.Contains("knit MPMC", "blocking"),
		API:     "MPMC Push/Pop, blocking",
	},
	{
		Name:    "waking a parked goroutine",
		Suite:   "park",
		Subject: report.AllOf(report.Contains("knit Event"), report.Not(report.Contains("ctx")), report.Not(report.Contains("locked"))),
		API:     "Event Wait/Notify",
		// What a Go programmer parks on: a channel or a sync.Cond (the
		// runtime semaphore row is the runtime's own, out of reach).
		Rivals: report.AnyOf(report.Contains("chan"), report.Contains("sync.Cond")),
	},
	{
		Name:    "one producer, 4 subscribers",
		Suite:   "broadcast",
		Group:   report.GroupContaining("4 subscriber", "batch 1"),
		Subject: report.Contains("knit Broadcast"),
		API:     "Broadcast Push/Pop",
	},
	{
		Name:    "a group of 10,000 tasks",
		Suite:   "pool-group",
		Group:   report.GroupContaining("group of"),
		Subject: report.Contains("knit NewGroup"),
		API:     "pool.NewGroup, Go, Wait",
	},
}
