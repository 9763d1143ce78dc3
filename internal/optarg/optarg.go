// Package optarg reads an optional trailing argument, as knit's ring
// constructors and shm's ring ends take their optional knit.Park.
package optarg

// One returns the single value of args, or the zero value when there is
// none; more than one is a programmer error, and it panics with msg.
func One[T any](args []T, msg string) T {
	var v T
	switch len(args) {
	case 0:
	case 1:
		v = args[0]
	default:
		panic(msg)
	}
	return v
}
