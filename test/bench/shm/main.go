// Command shm measures 1 MiB round trips between two of our processes on
// this host with and without Cyclone's shared memory (iceoryx):
//
//   - network: shared memory off, samples over loopback UDP;
//   - shm: shared memory on, Publish (the sample is serialized into a
//     chunk);
//   - shm+loan: shared memory on, BorrowLoanedMessage/PublishLoaned (the
//     ping fills the chunk in place; the pong copies what it got into a
//     loan).
//
// The message is the benchmark's own fixed-size type fsmnodes_bench/msg/Blob
// (package test/bench/internal/blob). A ping process sends one
// message at a time and a pong process sends it back; the figure is the
// median (and 90th percentile) round trip over -n messages, for rounds of
// the three modes interleaved. The benchmark starts RouDi (iox-roudi) and
// stops it at the end; the measuring processes are children, so the
// benchmark itself never registers with RouDi. It prints figures, never a
// verdict.
//
// Usage: go run ./test/bench/shm [-n 200] [-rounds 3]
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/test/bench/internal/blob"
)

const (
	roleEnv = "FSM_SHM_BENCH_ROLE"
	loanEnv = "FSM_SHM_BENCH_LOAN"
	nEnv    = "FSM_SHM_BENCH_N"
)

const shmConfig = `<CycloneDDS><Domain><SharedMemory><Enable>true</Enable><LogLevel>warn</LogLevel></SharedMemory></Domain></CycloneDDS>`

func main() {
	if role := os.Getenv(roleEnv); role != "" {
		if err := runRole(role, os.Getenv(loanEnv) == "1"); err != nil {
			fmt.Fprintln(os.Stderr, role+":", err)
			os.Exit(1)
		}
		return
	}
	n := flag.Int("n", 200, "round trips per measurement")
	rounds := flag.Int("rounds", 3, "rounds of the three modes")
	flag.Parse()
	if err := run(*n, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "shm:", err)
		os.Exit(1)
	}
}

type mode struct {
	name string
	env  []string
}

var modes = []mode{
	{"network", nil},
	{"shm", []string{"CYCLONEDDS_URI=" + shmConfig}},
	{"shm+loan", []string{"CYCLONEDDS_URI=" + shmConfig, loanEnv + "=1"}},
}

func run(n, rounds int) error {
	if _, err := exec.LookPath("iox-roudi"); err != nil {
		fmt.Fprintln(os.Stderr, "shm: iox-roudi is not installed (Debian package iceoryx); nothing measured")
		return nil
	}
	dir, err := os.MkdirTemp("", "fsmnodes-shm-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	stop, err := testenv.StartRouDi(dir)
	if err != nil {
		return err
	}
	defer stop()
	domain, release, err := testenv.ReserveDomain()
	if err != nil {
		return err
	}
	defer release()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	base := append(os.Environ(), fmt.Sprintf("ROS_DOMAIN_ID=%d", domain), "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST",
		"ROS_LOG_DIR="+dir, fmt.Sprintf("%s=%d", nEnv, n))
	results := map[string][]float64{}
	fmt.Printf("1 MiB round trips, %d per measurement, %d rounds (µs: median / p90)\n", n, rounds)
	for r := 1; r <= rounds; r++ {
		for _, m := range modes {
			med, p90, err := measure(self, append(append([]string(nil), base...), m.env...))
			if err != nil {
				fmt.Printf("round %d %-9s failed: %v\n", r, m.name, err)
				continue
			}
			fmt.Printf("round %d %-9s %7.0f / %7.0f\n", r, m.name, med, p90)
			results[m.name] = append(results[m.name], med)
		}
	}
	fmt.Println("\n| mode | median round trip (µs) | vs network |")
	fmt.Println("|---|---|---|")
	net := median(results["network"])
	for _, m := range modes {
		v := median(results[m.name])
		if len(results[m.name]) == 0 {
			fmt.Printf("| %s | not measured | |\n", m.name)
			continue
		}
		ratio := ""
		if net > 0 {
			ratio = fmt.Sprintf("%.2f×", v/net)
		}
		fmt.Printf("| %s | %.0f | %s |\n", m.name, v, ratio)
	}
	return nil
}

// measure runs a pong and a ping process with env and returns the ping's
// median and 90th percentile in µs.
func measure(self string, env []string) (med, p90 float64, err error) {
	pong := exec.Command(self)
	pong.Env = append(env, roleEnv+"=pong")
	pong.Stderr = os.Stderr
	pongIn, err := pong.StdinPipe()
	if err != nil {
		return 0, 0, err
	}
	if err := pong.Start(); err != nil {
		return 0, 0, err
	}
	defer func() { pongIn.Close(); _ = pong.Wait() }()
	ping := exec.Command(self)
	ping.Env = append(env, roleEnv+"=ping")
	ping.Stderr = os.Stderr
	out, err := ping.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	if err := ping.Start(); err != nil {
		return 0, 0, err
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	_, _ = io.Copy(io.Discard, out)
	if err := ping.Wait(); err != nil {
		return 0, 0, fmt.Errorf("ping: %v", err)
	}
	if _, err := fmt.Sscanf(strings.TrimSpace(line), "rtt %f %f", &med, &p90); err != nil {
		return 0, 0, fmt.Errorf("ping printed %q", line)
	}
	return med, p90, nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// runRole is a child: "ping" measures and prints "rtt MEDIAN P90" (µs);
// "pong" echoes until stdin closes.
func runRole(role string, loan bool) error {
	rc, err := ros.NewContext(ros.ContextOptions{NoSignals: true, LogOutput: os.Stderr})
	if err != nil {
		return err
	}
	defer rc.Close()
	node, err := rc.NewNode("shm_bench_"+role, "")
	if err != nil {
		return err
	}
	in, out := "shm_bench_ping", "shm_bench_pong"
	if role == "ping" {
		in, out = out, in
	}
	_, send, err := blob.NewSender(node, out, loan)
	if err != nil {
		return err
	}
	got := make(chan uint64, 16)
	_, err = ros.NewSubscription(node, in, ros.QoSDefault, func(m *blob.Blob) {
		if role == "pong" {
			if err := send(m, m.Seq); err != nil {
				fmt.Fprintln(os.Stderr, "pong:", err)
			}
			return
		}
		got <- m.Seq
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = rc.Spin(ctx) }()
	if role == "pong" {
		_, _ = io.Copy(io.Discard, os.Stdin)
		return nil
	}
	var n int
	fmt.Sscan(os.Getenv(nEnv), &n)
	if n <= 0 {
		n = 200
	}
	// Warm up: send until the first echo comes back (both directions
	// matched), then measure one message in flight at a time.
	deadline := time.Now().Add(30 * time.Second)
	for warm := false; !warm; {
		if time.Now().After(deadline) {
			return fmt.Errorf("no echo in 30 s")
		}
		if err := send(nil, 0); err != nil {
			return err
		}
		select {
		case <-got:
			warm = true
		case <-time.After(200 * time.Millisecond):
		}
	}
	time.Sleep(200 * time.Millisecond)
	for len(got) > 0 {
		<-got
	}
	rtts := make([]float64, 0, n)
	for seq := uint64(1); len(rtts) < n; seq++ {
		t0 := time.Now()
		if err := send(nil, seq); err != nil {
			return err
		}
		timeout := time.After(2 * time.Second)
	wait:
		for {
			select {
			case s := <-got:
				if s == seq {
					rtts = append(rtts, float64(time.Since(t0).Microseconds()))
					break wait
				}
			case <-timeout:
				break wait // lost: counted by its absence
			}
		}
		if time.Now().After(deadline.Add(5 * time.Minute)) {
			return fmt.Errorf("only %d round trips in the time allowed", len(rtts))
		}
	}
	sort.Float64s(rtts)
	fmt.Printf("rtt %.0f %.0f\n", rtts[len(rtts)/2], rtts[len(rtts)*9/10])
	return nil
}
