// Command velma measures the Velma core agent's 500 Hz loop as separate
// processes (velma_sim, ve_body, cs exchanging io buffers, as the
// executables run them, without their ROS nodes) against the
// single-process loop of velma_bridge, in one run, with and without the
// real-time measures of package rt:
//
//	single            one process: agent + simulator, normal scheduler
//	single+rt         the same with SCHED_FIFO, mlockall, pre-faulted stack, GC at 400 %
//	multi             three processes, normal scheduler
//	multi+fifo        three processes, loop threads under SCHED_FIFO
//	multi+rt          three processes, SCHED_FIFO + mlockall + stack + GC
//	multi+pin         three processes, SCHED_FIFO, the loop threads pinned to one CPU
//	                  (velma.launch.xml's settings)
//
// Each variant runs quiet and then beside -load busy-looping processes of
// the normal scheduler (default: two per CPU; -load 0 skips the loaded runs).
//
// For each it prints the loop period p50/p99/p99.9/max and its error
// against 2 ms, overruns, ve_body's misses, cs's answer latency (ve_body
// publishing its status → reading cs's command, i.e. two io buffers and
// cs's iteration) and the CPU time of each process. Figures only: it
// never fails on timing. SCHED_FIFO and mlockall need root or the
// capabilities; without them the +rt variants say so and run without.
//
// Usage: go run ./test/bench/velma [-seconds 60] [-only multi+rt,single] [-load 4] [-cpu N]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/rt"
	"github.com/fsmnodes/fsmnodes/internal/velma"
	"github.com/fsmnodes/fsmnodes/internal/velma/sim"
	"github.com/fsmnodes/fsmnodes/internal/velma/subsys"
	"golang.org/x/sys/unix"
)

const period = 2 * time.Millisecond

// warmUp is how long ve_body waits before its loop starts.
const warmUp = 1500 * time.Millisecond

// result is what a role process prints as JSON when it ends.
type result struct {
	Role                string
	RT                  string
	CPU                 time.Duration // user + system
	Iterations          uint64
	Overruns            uint64
	P50, P99, P999, Max time.Duration
	CmdMissed           uint64
	StartupMissed       uint64 // of CmdMissed, those before cs's first answer
	StatusMissed        uint64
	Lat                 subsys.LatencyStats
}

func main() {
	if role := os.Getenv("VELMA_BENCH_ROLE"); role != "" {
		if err := runRole(role); err != nil {
			fmt.Fprintln(os.Stderr, role+":", err)
			os.Exit(1)
		}
		return
	}
	secs := flag.Int("seconds", 60, "seconds per variant")
	only := flag.String("only", "", "comma-separated variants to run (default all)")
	load := flag.Int("load", 2*numCPU(), "busy-looping processes beside the loaded runs (0: quiet runs only)")
	cpu := flag.Int("cpu", lastCPU(), "the CPU multi+pin pins the loop threads to")
	flag.Parse()
	variants := []variant{{"single", false, ""}, {"single+rt", false, "full"}, {"multi", true, ""}, {"multi+fifo", true, "fifo"}, {"multi+rt", true, "full"}, {"multi+pin", true, "pin"}}
	fmt.Printf("Velma core agent loop, %d s per variant, period %v, %d CPUs (multi+pin on CPU %d)\n", *secs, period, numCPU(), *cpu)
	loads := []int{0}
	if *load > 0 {
		loads = append(loads, *load)
	}
	for _, l := range loads {
		fmt.Println()
		if l == 0 {
			fmt.Println("quiet (nothing else started; the machine's own load is what it is)")
		} else {
			fmt.Printf("beside %d busy-looping processes of the normal scheduler\n", l)
		}
		stop, err := burn(l)
		if err != nil {
			fmt.Println("load:", err)
			continue
		}
		runVariants(*secs, *only, *cpu, variants)
		stop()
	}
}

type variant = struct {
	name  string
	multi bool
	rt    string
}

func runVariants(secs int, only string, cpu int, variants []variant) {
	fmt.Printf("%-11s %10s %9s %9s %9s %9s %9s %9s %8s %9s %8s  %-26s %s\n", "variant", "iterations", "p50", "p99", "p99.9", "max", "|p99-2ms|", "overruns", "cmd miss", "(at start)", "st miss", "cs answer p50/p99/p99.9/max", "CPU per process (s)")
	for _, v := range variants {
		if only != "" && !strings.Contains(","+only+",", ","+v.name+",") {
			continue
		}
		res, err := runVariant(v.multi, v.rt, cpu, time.Duration(secs)*time.Second)
		if err != nil {
			fmt.Printf("%-11s error: %v\n", v.name, err)
			continue
		}
		printRow(v.name, res)
	}
}

func numCPU() int { return runtime.NumCPU() }

// lastCPU is the highest-numbered CPU this process may run on.
func lastCPU() int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return 0
	}
	last := 0
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			last = c
		}
	}
	return last
}

// burn starts n processes that loop on the CPU until stop is called.
func burn(n int) (stop func(), err error) {
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
	for i := 0; i < n; i++ {
		c := exec.Command(os.Args[0])
		c.Env = append(os.Environ(), "VELMA_BENCH_ROLE=burn")
		if err := c.Start(); err != nil {
			stop()
			return nil, err
		}
		cmds = append(cmds, c)
	}
	return stop, nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3fms", float64(d)/1e6) }

func printRow(name string, rs []result) {
	var loop result
	var cpu []string
	rtNote := ""
	for _, r := range rs {
		if r.Role == "vebody" || r.Role == "single" {
			loop = r
		}
		cpu = append(cpu, fmt.Sprintf("%s %.2f", r.Role, r.CPU.Seconds()))
		if r.RT != "" && r.RT != "off" {
			rtNote = r.RT
		}
	}
	errp99 := loop.P99 - period
	if errp99 < 0 {
		errp99 = -errp99
	}
	lat := "-"
	if loop.Lat.N > 0 {
		lat = fmt.Sprintf("%s/%s/%s/%s", us(loop.Lat.P50), us(loop.Lat.P99), us(loop.Lat.P999), us(loop.Lat.Max))
	}
	fmt.Printf("%-11s %10d %9s %9s %9s %9s %9s %9d %8d %9d %8d  %-26s %s\n", name, loop.Iterations, ms(loop.P50), ms(loop.P99), ms(loop.P999), ms(loop.Max),
		ms(errp99), loop.Overruns, loop.CmdMissed-loop.StartupMissed, loop.StartupMissed, loop.StatusMissed, lat, strings.Join(cpu, ", "))
	if rtNote != "" {
		fmt.Printf("%-11s   real-time measures: %s\n", "", rtNote)
	}
}

func us(d time.Duration) string { return fmt.Sprintf("%.0fµs", float64(d)/1e3) }

// runVariant starts the role processes and collects their results.
func runVariant(multi bool, rtMode string, cpu int, d time.Duration) ([]result, error) {
	dir, err := os.MkdirTemp("/dev/shm", "velma-bench-")
	if err != nil {
		dir, err = os.MkdirTemp("", "velma-bench-")
		if err != nil {
			return nil, err
		}
	}
	defer os.RemoveAll(dir)
	roles := []string{"single"}
	if multi {
		roles = []string{"sim", "vebody", "cs"}
	}
	type proc struct {
		cmd *exec.Cmd
		out strings.Builder
	}
	var procs []*proc
	for _, role := range roles {
		p := &proc{cmd: exec.Command(os.Args[0])}
		p.cmd.Env = append(os.Environ(), "VELMA_BENCH_ROLE="+role, "VELMA_BENCH_RT="+rtMode, fmt.Sprintf("VELMA_BENCH_CPU=%d", cpu),
			"VELMA_BENCH_PREFIX="+filepath.Join(dir, "velma"), fmt.Sprintf("VELMA_BENCH_SECONDS=%g", d.Seconds()))
		p.cmd.Stdout = &p.out
		p.cmd.Stderr = os.Stderr
		if err := p.cmd.Start(); err != nil {
			return nil, err
		}
		procs = append(procs, p)
	}
	var rs []result
	var firstErr error
	for _, p := range procs {
		if err := p.cmd.Wait(); err != nil && firstErr == nil {
			firstErr = err
		}
		var r result
		if err := json.Unmarshal([]byte(p.out.String()), &r); err == nil {
			rs = append(rs, r)
		}
	}
	return rs, firstErr
}

func rtOptions(mode string, cpu int) rt.Options {
	switch mode {
	case "fifo":
		return rt.Options{Priority: 20, ReserveP: true}
	case "full":
		return rt.Options{Priority: 20, LockMemory: true, GCPercent: 400, StackBytes: 256 << 10, ReserveP: true}
	case "pin":
		return rt.Options{Priority: 20, PinCPU: true, CPU: cpu, LockMemory: true, GCPercent: 400, StackBytes: 256 << 10, ReserveP: true}
	}
	return rt.Options{ReserveP: true}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runRole runs one process of a variant for VELMA_BENCH_SECONDS and prints
// its result as JSON.
func runRole(role string) error {
	if role == "burn" {
		for x := uint64(0); ; x++ {
			if x == ^uint64(0) {
				return nil
			}
		}
	}
	var cpu int
	fmt.Sscan(os.Getenv("VELMA_BENCH_CPU"), &cpu)
	var secs float64
	fmt.Sscan(os.Getenv("VELMA_BENCH_SECONDS"), &secs)
	mode := os.Getenv("VELMA_BENCH_RT")
	bufs := subsys.Buffers{Prefix: os.Getenv("VELMA_BENCH_PREFIX")}
	// ve_body starts its clock once the others have taken their real-time
	// measures (mlockall alone takes a few hundred ms), and they outlive
	// its run a little so its last iterations find their partners
	extra := time.Duration(0)
	switch role {
	case "sim", "cs":
		extra = warmUp + 500*time.Millisecond
	case "vebody":
		extra = warmUp
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs*float64(time.Second))+extra)
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	res := result{Role: role}
	o := rtOptions(mode, cpu)
	done := make(chan error, 1)
	go func() {
		r := rt.Prepare(o)
		if mode != "" {
			res.RT = r.String()
		}
		done <- loop(ctx, role, bufs, &res)
	}()
	err := <-done
	res.CPU = cpuTime()
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	return err
}

func loop(ctx context.Context, role string, bufs subsys.Buffers, res *result) error {
	switch role {
	case "single":
		s, err := sim.New(sim.DefaultConfig())
		if err != nil {
			return err
		}
		a, err := velma.NewAgent(velma.DefaultAgentConfig(), s)
		if err != nil {
			return err
		}
		l, err := velma.NewLoop(period, nil, 100000)
		if err != nil {
			return err
		}
		_ = l.Run(ctx, func(time.Time) bool { a.Iterate(nil); return true })
		st := l.Stats()
		res.Iterations, res.Overruns, res.P50, res.P99, res.P999, res.Max = st.Iterations, st.Overruns, st.P50, st.P99, st.P999, st.Max
	case "sim":
		s, err := subsys.NewSim(sim.DefaultConfig(), bufs)
		if err != nil {
			return err
		}
		defer s.Close()
		for ctx.Err() == nil {
			s.Step(20 * time.Millisecond)
		}
	case "cs":
		c, err := subsys.NewCS(velma.DefaultCSConfig(), subsys.CSOptions{Buffers: bufs, StatusTimeout: 20 * time.Millisecond, TaskTimeout: 500 * time.Millisecond})
		if err != nil {
			return err
		}
		defer c.Close()
		for ctx.Err() == nil {
			c.Step()
		}
	case "vebody":
		time.Sleep(warmUp)
		v, err := subsys.NewVeBody(velma.DefaultVeBodyConfig(), subsys.VeBodyOptions{Buffers: bufs, Period: period,
			StatusTimeout: period, CommandTimeout: period, Window: 100000})
		if err != nil {
			return err
		}
		defer v.Close()
		// Misses before cs's first answer are start-up (cs finds ve_body's
		// buffers when ve_body has created them), not missed deadlines.
		answered := false
		_ = v.Loop().Run(ctx, func(now time.Time) bool {
			ok := v.Step(now)
			if !answered {
				if r := v.Report(); r.LastCmd != 0 {
					answered, res.StartupMissed = true, r.CmdMissed
				}
			}
			return ok
		})
		st := v.Loop().Stats()
		rep := v.Report()
		res.Iterations, res.Overruns, res.P50, res.P99, res.P999, res.Max = st.Iterations, st.Overruns, st.P50, st.P99, st.P999, st.Max
		res.CmdMissed, res.StatusMissed = rep.CmdMissed, rep.StatusMissed
		res.Lat = v.CmdLatency()
	default:
		return fmt.Errorf("unknown role %q", role)
	}
	return nil
}
