package goid

import "testing"

func TestCurrentDiffersBetweenGoroutines(t *testing.T) {
	here := Current()
	if here == 0 {
		t.Fatal("Current() = 0 on the test goroutine")
	}
	if again := Current(); again != here {
		t.Fatalf("Current() changed on one goroutine: %d then %d", here, again)
	}
	other := make(chan uint64)
	go func() { other <- Current() }()
	if o := <-other; o == 0 || o == here {
		t.Fatalf("another goroutine got %d, this one %d", o, here)
	}
}
