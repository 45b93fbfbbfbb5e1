package rt

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
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

func TestPin(t *testing.T) {
	type res struct {
		r       Result
		err     error
		allowed unix.CPUSet
	}
	done := make(chan res)
	go func() {
		var before unix.CPUSet
		if err := unix.SchedGetaffinity(0, &before); err != nil {
			done <- res{err: err}
			return
		}
		last := -1
		for c := 0; c < len(before)*64; c++ {
			if before.IsSet(c) {
				last = c
			}
		}
		r := Prepare(Options{Priority: 1, PinCPU: true, CPU: last})
		var after unix.CPUSet
		err := unix.SchedGetaffinity(0, &after)
		done <- res{r: r, err: err, allowed: after}
	}()
	got := <-done
	if got.err != nil {
		t.Fatal(got.err)
	}
	t.Logf("%v", got.r)
	if !got.r.FIFO {
		if got.r.CPU != -1 || got.r.CPUErr == nil {
			t.Fatalf("pinned without SCHED_FIFO: %v", got.r)
		}
		t.Skipf("no SCHED_FIFO here (%v): pinning is not tried", got.r.FIFOErr)
	}
	if got.r.CPUErr != nil || got.r.CPU < 0 {
		t.Fatalf("not pinned: %v", got.r)
	}
	if got.allowed.Count() != 1 || !got.allowed.IsSet(got.r.CPU) {
		t.Fatalf("thread may run on %d CPUs after pinning to %d", got.allowed.Count(), got.r.CPU)
	}

	// A CPU the process may not use is refused with the ones it may.
	go func() { done <- res{r: Prepare(Options{Priority: 1, PinCPU: true, CPU: 1 << 20})} }()
	got = <-done
	if got.r.CPUErr == nil || got.r.CPU != -1 || !strings.Contains(got.r.CPUErr.Error(), "may run on (CPUs ") {
		t.Fatalf("CPU 1<<20: %v", got.r)
	}
	// Without PinCPU nothing is pinned; without SCHED_FIFO neither.
	go func() { done <- res{r: Prepare(Options{})} }()
	if got = <-done; got.r.CPU != -1 || got.r.CPUErr != nil {
		t.Fatalf("zero options: %v", got.r)
	}
	go func() { done <- res{r: Prepare(Options{PinCPU: true, CPU: 0})} }()
	if got = <-done; got.r.CPU != -1 || got.r.CPUErr == nil {
		t.Fatalf("pinned under the normal scheduler: %v", got.r)
	}
}

// TestRuntimePriority: the process's other Go threads go under SCHED_FIFO
// at the runtime priority, the calling thread at its own (as root; without
// the capability both report why).
func TestRuntimePriority(t *testing.T) {
	done := make(chan Result)
	go func() { done <- Prepare(Options{Priority: 3, RuntimePriority: 2}) }()
	r := <-done
	t.Logf("%v", r)
	if r.RuntimeErr != nil {
		if r.FIFO {
			t.Fatalf("loop thread under SCHED_FIFO but the runtime's threads not: %v", r.RuntimeErr)
		}
		t.Skipf("no SCHED_FIFO here: %v", r.RuntimeErr)
	}
	if r.RuntimeFIFO == 0 {
		t.Fatal("no runtime thread changed")
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	fifo := 0
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		a, err := unix.SchedGetAttr(tid, 0)
		if err == nil && a.Policy == unix.SCHED_FIFO && a.Priority == 2 {
			fifo++
		}
	}
	if fifo == 0 {
		t.Fatalf("no thread of the process at SCHED_FIFO 2 after %d were changed", r.RuntimeFIFO)
	}
	if _, err := runtimeFIFO(0); err == nil {
		t.Fatal("priority 0 accepted")
	}
}
