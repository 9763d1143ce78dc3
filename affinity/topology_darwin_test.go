package affinity

import "testing"

func TestTopologyDarwin(t *testing.T) {
	l, err := Topology()
	if err != nil {
		t.Fatal(err)
	}
	avail, err := Available()
	if err != nil {
		t.Fatal(err)
	}
	if len(l.CPUs) != avail.Len() || l.Source != "sysctl" {
		t.Errorf("Topology() has %d CPUs from %q; Available() %v", len(l.CPUs), l.Source, avail)
	}
	checkLayout(t, l)
	for _, c := range l.CPUs {
		t.Logf("%+v", c)
	}
}
