package velma_test

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/velma"
	"github.com/fsmnodes/fsmnodes/internal/velma/kin"
)

func benchRig(b *testing.B) *rig {
	t := &testing.T{}
	r := newRig(t)
	r.t = t
	r.bringUp(true)
	if r.rep.CS.State != velma.CSSafe {
		b.Fatal("bring-up failed")
	}
	return r
}

// BenchmarkIteration measures one full iteration (ve_body twice, cs, sim
// step) in each cs behaviour.
func BenchmarkIteration(b *testing.B) {
	for _, tc := range []struct {
		name string
		cmd  func(r *rig) *velma.TaskCommand
	}{
		{"safe", func(*rig) *velma.TaskCommand { return nil }},
		{"relax", func(*rig) *velma.TaskCommand { return &velma.TaskCommand{Relax: true} }},
		{"jnt_imp", func(r *rig) *velma.TaskCommand { return &velma.TaskCommand{Jnt: holdCommand(r, 1)} }},
		{"cart_imp", func(r *rig) *velma.TaskCommand {
			w := r.rep.CS.Wrist[kin.Right]
			return &velma.TaskCommand{Cart: [2]*velma.CartImpCommand{kin.Right: {ID: 1,
				Points: []velma.CartPoint{{Pose: w, TimeFromStart: time.Second}}}}}
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			r := benchRig(b)
			r.step(tc.cmd(r))
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ReportAllocs()
			b.ResetTimer()
			c0 := threadCPU()
			for range b.N {
				r.step(nil)
			}
			cpu := threadCPU() - c0
			b.StopTimer()
			// CPU time of this thread only: the cost of an iteration even
			// when other processes compete for the cores.
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
			if r.rep.BodyState != velma.BodyTransp {
				b.Fatalf("ve_body %v", r.rep.BodyState)
			}
		})
	}
}

// BenchmarkLoopJitter runs the real-time 500 Hz loop with the full
// iteration for 10 s (use -benchtime=1x) and reports the period jitter.
func BenchmarkLoopJitter(b *testing.B) {
	r := benchRig(b)
	r.step(&velma.TaskCommand{Relax: true})
	l, err := velma.NewLoop(2*time.Millisecond, velma.RealClock{}, 5000)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b.ResetTimer()
	_ = l.Run(ctx, func(time.Time) bool { r.step(nil); return true })
	s := l.Stats()
	b.ReportMetric(float64(s.P50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(s.P99.Microseconds()), "p99-µs")
	b.ReportMetric(float64(s.Max.Microseconds()), "max-µs")
	b.ReportMetric(float64(s.Overruns), "overruns")
	b.Logf("%v", s)
}

// threadCPU returns the user+system CPU time of the calling OS thread.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
