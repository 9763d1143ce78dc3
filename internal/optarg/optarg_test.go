package optarg

import "testing"

func TestOne(t *testing.T) {
	if v := One[int](nil, "x"); v != 0 {
		t.Fatalf("no argument: %d", v)
	}
	if v := One([]int{7}, "x"); v != 7 {
		t.Fatalf("one argument: %d", v)
	}
	defer func() {
		if r := recover(); r != "two" {
			t.Fatalf("two arguments: recovered %v", r)
		}
	}()
	One([]int{1, 2}, "two")
}
