package knit

// status is what a non-blocking attempt found.
type status uint8

const (
	stOK      status = iota
	stFull           // push: no room
	stEmpty          // pop: nothing ready now (an item may be in flight)
	stClosed         // push: ring closed
	stDrained        // pop: closed and every pushed item has been taken
	stZero           // the ring was never constructed (Words' assembly reports it)
)

// statusErr is the Try calls' error for each status (nil for
// stOK), indexed by status&7: a table keeps those methods small enough to
// be inlined.
var statusErr = [8]error{
	stFull:    ErrFull,
	stEmpty:   ErrEmpty,
	stClosed:  ErrClosed,
	stDrained: ErrClosed,
}
