package rt

import (
	"runtime/debug"
	"testing"
)

func TestPrepare(t *testing.T) {
	done := make(chan Result)
	go func() {
		r := Prepare(Options{Priority: 1, GCPercent: 400, StackBytes: 64 << 10})
		// the goroutine ends locked: its thread (SCHED_FIFO now) ends too
		done <- r
	}()
	r := <-done
	t.Logf("%v", r)
	if r.FIFO == (r.FIFOErr != nil) {
		t.Fatalf("FIFO %v with error %v", r.FIFO, r.FIFOErr)
	}
	if old := debug.SetGCPercent(r.GCPercent); old != 400 {
		t.Fatalf("GC percent %d, want 400", old)
	}
	if r.StackBytes != 64<<10 {
		t.Fatal("stack not pre-faulted")
	}
	if err := SetFIFO(0); err == nil {
		t.Fatal("priority 0 accepted")
	}
}

func TestPrefaultStackAllocatesNothing(t *testing.T) {
	if a := testing.AllocsPerRun(10, func() { PrefaultStack(32 << 10) }); a != 0 {
		t.Fatalf("%v allocations", a)
	}
}
