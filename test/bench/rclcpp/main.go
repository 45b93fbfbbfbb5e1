// Command rclcpp compares the client library (internal/ros) with rclcpp on
// rmw_cyclonedds_cpp, on this machine, in one run:
//
//   - throughput: std_msgs/UInt8MultiArray of 1 KiB and 1 MiB from a
//     publisher process to a subscriber process, published as fast as
//     possible, default QoS (reliable, keep last 10); the subscriber's
//     steady receive rate;
//   - round trip: one message of 1 KiB or 1 MiB in flight between a ping
//     and a pong process (the pong republishes what it gets); median;
//   - service calls: std_srvs/SetBool called back to back by a client
//     process on a server process; calls per second.
//
// Each figure is measured for pairs of the same implementation (ours with
// ours, rclcpp with rclcpp: each stack end to end), interleaved over a
// few rounds. The summary table gives each figure's median and, for each
// rclcpp column, the ratio ours/rclcpp as the median of the per-round
// ratios (higher is better for rates, lower for round trips): on a shared
// machine whose load changes, figures measured seconds apart compare
// better than medians over the whole run. -cross also measures the mixed
// pairs, for information. The ddsperf comparison of the DDS layer stays
// in test/bench.
//
// A measurement that fails (a process exits with an error, a ping or call
// is never answered) does not end the run: the round's line says why, and
// the table marks the cell with the reason (or says in how many rounds a
// figure was measured). A ping or call unanswered for a second is sent
// anew and counted as lost, so one message sent before both directions
// were matched costs a second, not the measurement.
//
// The rclcpp side is bench_peer (peer/peer.cpp), built with CMake against
// a real ROS 2 installation in a temporary directory that is kept, keyed
// by the source's hash, so later runs reuse it. The installation is
// -ros2 PREFIX (its env.sh), by default $ROS2_PREFIX, else what
// testenv.FindROS2 finds ($FSMNODES_ROS2_SETUP or a usual place). Without
// ROS 2 the benchmark says so on stderr and exits 0. The rclcpp column
// runs rclcpp's SingleThreadedExecutor; on Jazzy and later a further
// column, rclcpp-events, runs rclcpp's EventsExecutor (Humble has none).
//
// All traffic stays on loopback on a domain reserved through
// internal/testenv. With $FSM_BENCH_CPUPROFILE set to a directory, our
// roles write CPU profiles there.
//
// Usage: go run ./test/bench/rclcpp [-d 3s] [-rounds 2] [-cross]
// [-ros2 /opt/ros2-jazzy] [-lines REGEXP] [-peers rclcpp,rclcpp-events]
// [-rebuild]
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/test/bench/internal/benchproc"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench rclcpp:", err)
		os.Exit(1)
	}
}

// sizes are the message sizes of the topic measurements.
var sizes = []struct {
	name  string
	bytes int
}{{"1 KiB", 1 << 10}, {"1 MiB", 1 << 20}}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("bench-rclcpp", flag.ContinueOnError)
	dur := fs.Duration("d", 3*time.Second, "duration of each measurement")
	rounds := fs.Int("rounds", 2, "number of interleaved rounds (the median is reported)")
	cross := fs.Bool("cross", false, "also measure ours against rclcpp in both directions")
	prefix := fs.String("ros2", os.Getenv("ROS2_PREFIX"), "ROS 2 installation to compare with (its env.sh is sourced), e.g. /opt/ros2-jazzy; default $ROS2_PREFIX, else testenv.FindROS2's choice")
	rebuild := fs.Bool("rebuild", false, "rebuild the rclcpp peer")
	lines := fs.String("lines", "", "measure only the lines whose name matches this regular expression (e.g. 'throughput 1 KiB')")
	only := fs.String("peers", "", "comma-separated columns to measure besides ours (rclcpp, rclcpp-events); default all")
	role := fs.String("role", "", "internal: run a Go role (sub, pub, pong, ping, server, client)")
	bytes := fs.Int("bytes", 1024, "internal: message size of a Go pub or ping role")
	pool := fs.Bool("pool", false, "our subscriptions reuse their messages (ros.WithMessagePool)")
	nodeG := fs.Bool("node-goroutines", false, "our callbacks all run on their nodes' goroutines (ros.ContextOptions.NodeGoroutineCallbacks), not on the receive goroutine when the node is idle")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *role != "" {
		var opts []ros.EndpointOption
		if *pool {
			opts = append(opts, ros.WithMessagePool())
		}
		return runRole(*role, *bytes, *dur, *nodeG, opts, out)
	}
	lineRE, err := regexp.Compile(*lines)
	if err != nil {
		return fmt.Errorf("-lines: %w", err)
	}
	if *prefix != "" {
		// testenv.FindROS2 takes the one setup script it is given.
		os.Setenv("FSMNODES_ROS2_SETUP", filepath.Join(*prefix, "env.sh"))
	}
	r, why := testenv.FindROS2()
	if r == nil {
		fmt.Fprintf(os.Stderr, "SKIP: the rclcpp benchmark needs a real ROS 2: %s\n", why)
		return nil
	}
	peer, err := buildPeer(r, *rebuild)
	if err != nil {
		return err
	}
	domain, release, err := testenv.ReserveDomain()
	if err != nil {
		return err
	}
	defer release()
	env, err := newEnvs(r, domain)
	if err != nil {
		return err
	}
	defer os.RemoveAll(env.logDir)
	// rosidl's type support finds the generated Blob libraries on the
	// library path.
	env.rclcpp = prependPath(env.rclcpp, "LD_LIBRARY_PATH", filepath.Dir(peer))
	var shm roudi
	if lineRE.MatchString("round trip 1 MiB shm") || lineRE.MatchString("round trip 1 MiB loan") {
		stop, err := testenv.StartRouDi(env.logDir)
		if err != nil {
			shm.err = fmt.Errorf("no shared memory: %w", err)
		} else {
			defer stop()
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ours := impl{name: "ours", path: self, env: env.ours, args: func(role string, bytes int, d time.Duration) []string {
		a := []string{"-role", role, "-bytes", strconv.Itoa(bytes), "-d", d.String()}
		if *pool {
			a = append(a, "-pool")
		}
		if *nodeG {
			a = append(a, "-node-goroutines")
		}
		return a
	}}
	peerImpl := func(name string, pre ...string) impl {
		return impl{name: name, path: peer, env: env.rclcpp, args: func(role string, bytes int, d time.Duration) []string {
			s := strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
			a := append([]string(nil), pre...)
			if role == "pub" || role == "ping" {
				return append(a, role, strconv.Itoa(bytes), s)
			}
			return append(a, role, s)
		}}
	}
	rclcpp := peerImpl("rclcpp")
	peers := []impl{rclcpp}
	executors := "rclcpp SingleThreadedExecutor"
	if r.Distro != "humble" {
		// Humble has no events executor; Jazzy has it as experimental.
		peers = append(peers, peerImpl("rclcpp-events", "--events"))
		executors += " and EventsExecutor (rclcpp-events)"
	}
	impls := []impl{ours}
	for _, p := range peers {
		if *only == "" || slices.Contains(strings.Split(*only, ","), p.name) {
			impls = append(impls, p)
		}
	}
	fmt.Fprintf(out, "settings: ROS 2 %s (%s), rmw_cyclonedds_cpp, %s; default QoS; 2 processes on loopback; %v per run, %d rounds; %d CPUs; load average %s\n",
		r.Distro, r.Setup, executors, *dur, *rounds, runtime.NumCPU(), loadAverage())
	if *pool {
		fmt.Fprintln(out, "settings: our subscriptions reuse their messages (ros.WithMessagePool)")
	}
	if *nodeG {
		fmt.Fprintln(out, "settings: our callbacks all run on their nodes' goroutines (ros.ContextOptions.NodeGoroutineCallbacks)")
	}

	pairs := make([]pair, 0, len(impls)+2)
	for _, i := range impls {
		pairs = append(pairs, pair{i, i})
	}
	if *cross {
		pairs = append(pairs, pair{ours, rclcpp}, pair{rclcpp, ours})
	}
	var metrics []metric
	for _, m := range benchMetrics(*dur, shm) {
		if lineRE.MatchString(m.name) {
			metrics = append(metrics, m)
		}
	}
	tab := newTable(metrics, pairs)
	for round := 1; round <= *rounds; round++ {
		for i, m := range metrics {
			for j, p := range pairs {
				v, err := m.f(p)
				tab.add(i, j, v, err)
				if err != nil {
					fmt.Fprintf(out, "round %d %-18s %-20s failed: %v\n", round, m.name, p.label(), err)
					continue
				}
				fmt.Fprintf(out, "round %d %-18s %-20s %12.1f %s\n", round, m.name, p.label(), v, m.unit)
			}
		}
	}
	tab.print(out)
	return nil
}

// roudi says whether RouDi runs for the shared-memory lines.
type roudi struct{ err error }

// shmEnv turns shared memory on for both sides of the shared-memory lines.
var shmEnv = "CYCLONEDDS_URI=" + testenv.SharedMemoryConfig

// prependPath puts dir in front of the path-list variable key of env.
func prependPath(env []string, key, dir string) []string {
	v := dir
	for _, kv := range env {
		if old, ok := strings.CutPrefix(kv, key+"="); ok && old != "" {
			v = dir + string(filepath.ListSeparator) + old
		}
	}
	return append(env, key+"="+v)
}

// pair is a measured pair of processes. a: pub / ping / client; b: sub /
// pong / server.
type pair struct{ a, b impl }

func (p pair) label() string {
	if p.a.name == p.b.name {
		return p.a.name
	}
	return p.a.name + "->" + p.b.name
}

// metric is one line of the table.
type metric struct {
	name   string
	unit   string
	higher bool // higher is better
	f      func(p pair) (float64, error)
}

func benchMetrics(dur time.Duration, shm roudi) []metric {
	var ms []metric
	for _, s := range sizes {
		ms = append(ms, metric{"throughput " + s.name, "msg/s", true, func(p pair) (float64, error) {
			return throughput(p.a, p.b, s.bytes, dur)
		}})
	}
	for _, s := range sizes {
		ms = append(ms, metric{"round trip " + s.name, "us", false, func(p pair) (float64, error) {
			return roundTrip(p.a, p.b, "", s.bytes, dur)
		}})
	}
	// The fixed-size 1 MiB type over shared memory, published (serialized
	// or raw into a chunk) and loaned.
	for _, m := range []struct{ name, prefix string }{{"round trip 1 MiB shm", "f"}, {"round trip 1 MiB loan", "l"}} {
		ms = append(ms, metric{m.name, "us", false, func(p pair) (float64, error) {
			if shm.err != nil {
				return 0, shm.err
			}
			return roundTrip(p.a, p.b, m.prefix, 1<<20, dur, shmEnv)
		}})
	}
	return append(ms, metric{"service calls", "calls/s", true, func(p pair) (float64, error) {
		return calls(p.a, p.b, dur)
	}})
}

// cell is what one metric and pair gave over the rounds: a figure per
// round, NaN for a round that failed, and the last failure.
type cell struct {
	vals []float64
	err  error
}

func (c *cell) ok() []float64 {
	var v []float64
	for _, x := range c.vals {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	return v
}

// table collects every measurement, failures included, and prints the
// summary: each figure's median, and each peer's ratio as the median of
// the per-round ratios (measured minutes apart at most, so a machine's
// changing load cancels out better than in a ratio of medians).
type table struct {
	metrics []metric
	pairs   []pair
	cells   [][]cell // metric, pair
}

func newTable(ms []metric, ps []pair) *table {
	t := &table{metrics: ms, pairs: ps, cells: make([][]cell, len(ms))}
	for i := range t.cells {
		t.cells[i] = make([]cell, len(ps))
	}
	return t
}

func (t *table) add(metric, pair int, v float64, err error) {
	c := &t.cells[metric][pair]
	if err != nil {
		c.err = err
		v = math.NaN()
	}
	c.vals = append(c.vals, v)
}

// figure formats a cell: its median, "(k of n rounds)" when some failed,
// or the failure.
func (t *table) figure(metric, pair int) string {
	c := &t.cells[metric][pair]
	ok := c.ok()
	if len(ok) == 0 {
		if c.err == nil {
			return "not measured"
		}
		return "failed: " + c.err.Error()
	}
	s := strconv.FormatFloat(benchproc.Median(ok), 'f', 1, 64)
	if len(ok) < len(c.vals) {
		s += fmt.Sprintf(" (%d of %d rounds; %v)", len(ok), len(c.vals), c.err)
	}
	return s
}

// ratio is ours (pair 0) against pair j: the median of the per-round
// ratios of rounds where both were measured, and how they compare.
func (t *table) ratio(metric, j int) string {
	a, b := t.cells[metric][0].vals, t.cells[metric][j].vals
	var rs []float64
	for k := range min(len(a), len(b)) {
		if !math.IsNaN(a[k]) && !math.IsNaN(b[k]) && b[k] > 0 {
			rs = append(rs, a[k]/b[k])
		}
	}
	if len(rs) == 0 {
		return "n/a (no round measured both)"
	}
	r := benchproc.Median(rs)
	ahead := r >= 1
	if !t.metrics[metric].higher {
		ahead = r <= 1
	}
	word := "behind"
	if ahead {
		word = "ahead"
	}
	return fmt.Sprintf("%.2f (%s)", r, word)
}

func (t *table) print(out io.Writer) {
	fmt.Fprintln(out, "summary: medians over rounds; ours/X is the median of the per-round ratios (higher is better for rates, lower for round trips):")
	head := []string{"line"}
	for _, p := range t.pairs {
		head = append(head, p.label())
	}
	for j := 1; j < len(t.pairs); j++ {
		if p := t.pairs[j]; p.a.name == p.b.name {
			head = append(head, "ours/"+p.label())
		}
	}
	fmt.Fprintln(out, "| "+strings.Join(head, " | ")+" |")
	fmt.Fprintln(out, strings.Repeat("|---", len(head))+"|")
	for i, m := range t.metrics {
		row := []string{m.name + " (" + m.unit + ")"}
		for j := range t.pairs {
			row = append(row, t.figure(i, j))
		}
		for j := 1; j < len(t.pairs); j++ {
			if p := t.pairs[j]; p.a.name == p.b.name {
				row = append(row, t.ratio(i, j))
			}
		}
		fmt.Fprintln(out, "| "+strings.Join(row, " | ")+" |")
	}
}

// loadAverage returns the 1, 5 and 15 minute load averages, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// impl is one side's executable: ours (this program in a role) or
// bench_peer.
type impl struct {
	name string
	path string
	env  []string
	args func(role string, bytes int, d time.Duration) []string
}

func (i impl) start(ctx context.Context, role string, bytes int, d time.Duration, env ...string) (*benchproc.Proc, error) {
	cmd := exec.CommandContext(ctx, i.path, i.args(role, bytes, d)...)
	cmd.Env = append(append([]string(nil), i.env...), env...)
	cmd.Stderr = os.Stderr
	p, err := benchproc.Start(cmd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", i.name, role, err)
	}
	return p, nil
}

// throughput runs pub (a) and sub (b) and returns the subscriber's steady
// receive rate (the median of its per-second counts, the first and last
// dropped).
func throughput(pub, sub impl, bytes int, dur time.Duration) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dur+60*time.Second)
	defer cancel()
	s, err := sub.start(ctx, "sub", bytes, dur+3*time.Second)
	if err != nil {
		return 0, err
	}
	p, err := pub.start(ctx, "pub", bytes, dur+time.Second)
	if err != nil {
		return 0, err
	}
	if _, err := p.Collect(); err != nil {
		return 0, fmt.Errorf("pub: %w", err)
	}
	lines, err := s.Collect()
	if err != nil {
		return 0, fmt.Errorf("sub: %w", err)
	}
	var rates []float64
	for _, l := range lines {
		var n float64
		if _, err := fmt.Sscanf(l, "rate %g", &n); err == nil {
			rates = append(rates, n)
		}
	}
	// The subscriber outlives the publisher: drop its idle seconds.
	for len(rates) > 0 && rates[len(rates)-1] == 0 {
		rates = rates[:len(rates)-1]
	}
	if len(rates) > 2 {
		rates = rates[1 : len(rates)-1]
	}
	if len(rates) == 0 {
		return 0, errors.New("the subscriber received nothing")
	}
	return benchproc.Median(rates), nil
}

// roundTrip runs ping (a) and pong (b), roles prefix+"ping" and
// prefix+"pong" with env added, and returns the median round trip in
// microseconds.
func roundTrip(ping, pong impl, prefix string, bytes int, dur time.Duration, env ...string) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dur+60*time.Second)
	defer cancel()
	po, err := pong.start(ctx, prefix+"pong", bytes, dur+3*time.Second, env...)
	if err != nil {
		return 0, err
	}
	pi, err := ping.start(ctx, prefix+"ping", bytes, dur, env...)
	if err != nil {
		return 0, err
	}
	lines, err := pi.Collect()
	if err != nil {
		return 0, fmt.Errorf("ping: %w", err)
	}
	if _, err := po.Collect(); err != nil {
		return 0, fmt.Errorf("pong: %w", err)
	}
	for _, l := range lines {
		var n, med, p90, p99, lost int64
		if _, err := fmt.Sscanf(l, "rtt n %d median %d p90 %d p99 %d lost %d", &n, &med, &p90, &p99, &lost); err == nil {
			if n == 0 {
				return 0, fmt.Errorf("no round trip completed (%d pings unanswered for a second)", lost)
			}
			return float64(med) / 1e3, nil
		}
	}
	return 0, fmt.Errorf("no rtt line in %q", lines)
}

// calls runs client (a) and server (b) and returns calls per second.
func calls(client, server impl, dur time.Duration) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dur+60*time.Second)
	defer cancel()
	s, err := server.start(ctx, "server", 0, dur+3*time.Second)
	if err != nil {
		return 0, err
	}
	c, err := client.start(ctx, "client", 0, dur)
	if err != nil {
		return 0, err
	}
	lines, err := c.Collect()
	if err != nil {
		return 0, fmt.Errorf("client: %w", err)
	}
	if _, err := s.Collect(); err != nil {
		return 0, fmt.Errorf("server: %w", err)
	}
	for _, l := range lines {
		var n, secs, lost float64
		if _, err := fmt.Sscanf(l, "calls %g seconds %g lost %g", &n, &secs, &lost); err == nil && secs > 0 {
			if n == 0 {
				return 0, fmt.Errorf("no call completed (%g unanswered for a second)", lost)
			}
			return n / secs, nil
		}
	}
	return 0, fmt.Errorf("no calls line in %q", lines)
}

// envs are the environments of both sides: the same domain and loopback
// discovery, ROS_LOG_DIR in a temporary directory.
type envs struct {
	ours, rclcpp []string
	logDir       string
}

func newEnvs(r *testenv.ROS2, domain uint32) (*envs, error) {
	logDir, err := os.MkdirTemp("", "fsmnodes-bench-rclcpp-logs-")
	if err != nil {
		return nil, err
	}
	common := []string{fmt.Sprintf("ROS_DOMAIN_ID=%d", domain), "ROS_LOG_DIR=" + logDir, "ROS_DISTRO=" + r.Distro}
	if r.Distro == "humble" {
		common = append(common, "ROS_LOCALHOST_ONLY=1")
	} else {
		common = append(common, "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST")
	}
	scrub := func(in []string) []string {
		var out []string
		for _, kv := range in {
			k, _, _ := strings.Cut(kv, "=")
			if strings.HasPrefix(k, "ROS_") || strings.HasPrefix(k, "RMW_") || k == "CYCLONEDDS_URI" {
				continue
			}
			out = append(out, kv)
		}
		return out
	}
	// The sourced installation's environment, taken once.
	raw, err := r.Command("env -0").Output()
	if err != nil {
		os.RemoveAll(logDir)
		return nil, fmt.Errorf("sourcing %s: %w", r.Setup, err)
	}
	var sourced []string
	for _, kv := range strings.Split(string(raw), "\x00") {
		if kv != "" {
			sourced = append(sourced, kv)
		}
	}
	return &envs{
		ours:   append(scrub(os.Environ()), common...),
		rclcpp: append(append(scrub(sourced), "RMW_IMPLEMENTATION=rmw_cyclonedds_cpp"), common...),
		logDir: logDir,
	}, nil
}

// buildPeer builds peer/ with CMake against r, in a directory under the
// temporary directory named after the hash of the sources, the distro and
// the setup script, and returns the executable. An existing build is reused
// unless rebuild is set.
func buildPeer(r *testenv.ROS2, rebuild bool) (string, error) {
	src, err := peerSource()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", r.Setup, r.Distro)
	for _, f := range []string{"CMakeLists.txt", "package.xml", "peer.cpp", "msg/Blob.msg"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	dir := filepath.Join(os.TempDir(), "fsmnodes-bench-peer-"+hex.EncodeToString(h.Sum(nil))[:16])
	exe := filepath.Join(dir, "bench_peer")
	if _, err := os.Stat(exe); err == nil && !rebuild {
		return exe, nil
	}
	fmt.Fprintf(os.Stderr, "building the rclcpp peer in %s (a few minutes: it generates fsmnodes_bench/msg/Blob)\n", dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	cmd := r.Command(fmt.Sprintf("cmake -S %q -B %q -DPython3_EXECUTABLE=/usr/bin/python3 -DPYTHON_EXECUTABLE=/usr/bin/python3 && cmake --build %q -j%d",
		src, dir, dir, runtime.NumCPU()))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the rclcpp peer: %w\n%s", err, out)
	}
	return exe, nil
}

// peerSource returns the directory of peer/ in this module.
func peerSource() (string, error) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "test", "bench", "rclcpp", "peer"), nil
}
