// Package rt holds the real-time measures a control loop process takes on
// Linux: locking its memory, running its loop thread under SCHED_FIFO and
// the runtime's other threads just below it, pinning the loop thread to a
// CPU, pre-faulting the loop goroutine's stack and tuning the garbage
// collector. Each measure reports whether it took effect, so a node can
// log clearly what it has and what it lacks (an unprivileged process
// usually gets neither mlockall nor SCHED_FIFO).
package rt

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Options select the measures.
type Options struct {
	// LockMemory calls mlockall(MCL_CURRENT|MCL_FUTURE): no page of the
	// process is swapped out or faulted in lazily during the loop.
	LockMemory bool
	// Priority > 0 runs the calling (loop) thread under SCHED_FIFO at that
	// priority (1…99); 0 leaves it under the normal scheduler.
	Priority int
	// RuntimePriority > 0 puts the process's other Go threads (every thread
	// named as the process: the runtime's, not Cyclone's, which name
	// themselves) under SCHED_FIFO at that priority, below Priority; threads
	// they start later inherit it. A loop goroutine locked to its thread
	// still depends on them: when it loses its P (a system call, a
	// preemption), another thread of the runtime must hand the P back, and
	// under the normal scheduler that thread waited behind every busy
	// process on the machine, for milliseconds (docs/velma.md, "The Go
	// runtime's threads").
	RuntimePriority int
	// PinCPU pins the calling (loop) thread to CPU when it runs under
	// SCHED_FIFO (Priority); otherwise the thread may run on any CPU the
	// process may use. Loops that wake each other every iteration (ve_body,
	// cs and the simulated effectors) belong on one CPU: a wake-up of a
	// thread on another, idle CPU needs an inter-processor interrupt, and
	// on a virtual machine whose host has descheduled that idle virtual CPU
	// it arrived up to 3 ms late (docs/velma.md, "Wake-ups across CPUs").
	// On one CPU the woken loop is queued at once and runs as soon as the
	// waker sleeps.
	PinCPU bool
	CPU    int
	// GCPercent is passed to debug.SetGCPercent when ≠ 0 (a loop that
	// allocates nothing leaves the collector little to do; a higher value
	// makes its rare cycles rarer).
	GCPercent int
	// MemoryLimit is passed to debug.SetMemoryLimit when > 0.
	MemoryLimit int64
	// StackBytes pre-faults that much of the calling goroutine's stack so
	// the loop never grows (copies) it mid-iteration.
	StackBytes int
	// ReserveP adds one to GOMAXPROCS. A loop goroutine blocked in a system
	// call (a futex or nanosleep wait) keeps its P as long as the runtime
	// has idle Ps, and gets it back at once on wake-up; without an idle P
	// it must queue for one behind the process's other goroutines.
	ReserveP bool
}

// Result says what each measure did; a nil error means it took effect or
// was not asked for.
type Result struct {
	MemoryLocked bool
	MemoryErr    error
	FIFO         bool
	FIFOErr      error
	CPU          int // the CPU the thread is pinned to, -1 when not
	CPUErr       error
	RuntimeFIFO  int // other threads put under SCHED_FIFO at RuntimePriority
	RuntimeErr   error
	GCPercent    int // the previous setting when changed
	StackBytes   int
}

// String describes the result for a log line.
func (r Result) String() string {
	s := "mlockall: "
	switch {
	case r.MemoryLocked:
		s += "locked"
	case r.MemoryErr != nil:
		s += "NOT locked (" + r.MemoryErr.Error() + ")"
	default:
		s += "off"
	}
	s += "; SCHED_FIFO: "
	switch {
	case r.FIFO:
		s += "on"
	case r.FIFOErr != nil:
		s += "NOT available (" + r.FIFOErr.Error() + ")"
	default:
		s += "off (normal scheduler)"
	}
	switch {
	case r.RuntimeFIFO > 0:
		s += fmt.Sprintf("; runtime threads SCHED_FIFO: %d", r.RuntimeFIFO)
	case r.RuntimeErr != nil:
		s += "; runtime threads NOT under SCHED_FIFO (" + r.RuntimeErr.Error() + ")"
	}
	switch {
	case r.CPU >= 0:
		s += fmt.Sprintf("; pinned to CPU %d", r.CPU)
	case r.CPUErr != nil:
		s += "; NOT pinned (" + r.CPUErr.Error() + ")"
	}
	return s + fmt.Sprintf("; stack pre-faulted %d KiB", r.StackBytes/1024)
}

// Prepare must be called on the loop goroutine, which it locks to its OS
// thread (the thread then keeps its scheduling policy); the caller should
// defer runtime.UnlockOSThread only if it wants the thread back.
func Prepare(o Options) Result {
	runtime.LockOSThread()
	r := Result{CPU: -1}
	if o.LockMemory {
		if err := unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE); err != nil {
			r.MemoryErr = fmt.Errorf("mlockall: %w (needs CAP_IPC_LOCK or a RLIMIT_MEMLOCK large enough)", err)
		} else {
			r.MemoryLocked = true
		}
	}
	if o.RuntimePriority > 0 {
		r.RuntimeFIFO, r.RuntimeErr = runtimeFIFO(o.RuntimePriority)
	}
	if o.Priority > 0 {
		if err := SetFIFO(o.Priority); err != nil {
			r.FIFOErr = err
		} else {
			r.FIFO = true
		}
	}
	switch {
	case o.PinCPU && !r.FIFO:
		// Under the normal scheduler a pinned thread would wait on its CPU
		// behind whatever runs there while another CPU idles.
		r.CPUErr = fmt.Errorf("CPU %d not taken: the thread does not run under SCHED_FIFO", o.CPU)
	case o.PinCPU:
		if err := Pin(o.CPU); err != nil {
			r.CPUErr = err
		} else {
			r.CPU = o.CPU
		}
	}
	if o.GCPercent != 0 {
		r.GCPercent = debug.SetGCPercent(o.GCPercent)
	}
	if o.MemoryLimit > 0 {
		debug.SetMemoryLimit(o.MemoryLimit)
	}
	if o.ReserveP {
		runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
	}
	if o.StackBytes > 0 {
		PrefaultStack(o.StackBytes)
		r.StackBytes = o.StackBytes
	}
	return r
}

// SetFIFO puts the calling OS thread under SCHED_FIFO with the given
// priority. Lock the goroutine to its thread first.
func SetFIFO(priority int) error {
	if priority < 1 || priority > 99 {
		return fmt.Errorf("SCHED_FIFO priority %d, want 1…99", priority)
	}
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: uint32(priority)}
	if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
		return fmt.Errorf("sched_setattr SCHED_FIFO %d: %w (needs CAP_SYS_NICE or RLIMIT_RTPRIO)", priority, err)
	}
	return nil
}

// runtimeFIFO puts every other thread of the process that carries the
// process's name under SCHED_FIFO at priority, twice over the thread list
// so a thread started during the first pass is caught by the second. It
// returns how many threads it changed.
func runtimeFIFO(priority int) (int, error) {
	if priority < 1 || priority > 99 {
		return 0, fmt.Errorf("SCHED_FIFO priority %d, want 1…99", priority)
	}
	name, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		return 0, fmt.Errorf("process name: %w", err)
	}
	self := unix.Gettid()
	done := map[int]bool{self: true}
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: uint32(priority)}
	for pass := 0; pass < 2; pass++ {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return len(done) - 1, fmt.Errorf("thread list: %w", err)
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || done[tid] {
				continue
			}
			comm, err := os.ReadFile("/proc/self/task/" + t.Name() + "/comm")
			if err != nil || !bytes.Equal(comm, name) {
				continue // gone, or a thread of a C library that named itself
			}
			if err := unix.SchedSetAttr(tid, &attr, 0); err != nil {
				return len(done) - 1, fmt.Errorf("sched_setattr SCHED_FIFO %d on thread %d: %w (needs CAP_SYS_NICE or RLIMIT_RTPRIO)", priority, tid, err)
			}
			done[tid] = true
		}
	}
	return len(done) - 1, nil
}

// Pin restricts the calling OS thread to one CPU. Lock the goroutine to its
// thread first. A CPU the process may not use (offline, outside its
// cpuset) is an error that names the CPUs it may use.
func Pin(cpu int) error {
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		return fmt.Errorf("sched_getaffinity: %w", err)
	}
	if cpu < 0 || cpu >= len(allowed)*64 || !allowed.IsSet(cpu) {
		return fmt.Errorf("CPU %d is not one this process may run on (%s)", cpu, cpuList(&allowed))
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("sched_setaffinity CPU %d: %w", cpu, err)
	}
	return nil
}

// cpuList formats a CPU set as "CPUs 0, 1, 3".
func cpuList(s *unix.CPUSet) string {
	var b strings.Builder
	b.WriteString("CPUs")
	sep := " "
	for c := 0; c < len(s)*64; c++ {
		if s.IsSet(c) {
			fmt.Fprintf(&b, "%s%d", sep, c)
			sep = ", "
		}
	}
	if sep == " " {
		b.WriteString(" none")
	}
	return b.String()
}

// stackChunk is the frame size of one PrefaultStack level.
const stackChunk = 4096

// PrefaultStack grows the calling goroutine's stack to at least n bytes by
// recursing with large frames; Go keeps the grown stack (it shrinks only
// at a GC when less than a quarter is used, so call this again after long
// pauses if it matters).
//
//go:noinline
func PrefaultStack(n int) byte {
	var buf [stackChunk]byte
	buf[0] = byte(n)
	if n > stackChunk {
		buf[1] = PrefaultStack(n - stackChunk)
	}
	return buf[0] + buf[1]
}
