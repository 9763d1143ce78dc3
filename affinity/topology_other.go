//go:build !linux && !darwin

package affinity

// Topology returns an error wrapping errors.ErrUnsupported on this
// system. ParseTopology works everywhere.
func Topology() (Layout, error) { return Layout{}, errUnsupported }
