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
// Each figure is measured for both pairs of the same implementation (ours
// with ours, rclcpp with rclcpp: each stack end to end), interleaved over a
// few rounds, medians reported, and printed with the ratio ours/rclcpp
// (higher is better for rates, lower for round trips). -cross also measures
// the mixed pairs, for information. The ddsperf comparison of the DDS layer
// stays in test/bench.
//
// The rclcpp side is bench_peer (peer/peer.cpp), built with CMake against
// a real ROS 2 installation (testenv.FindROS2: $FSMNODES_ROS2_SETUP or a
// usual place) in a temporary directory that is kept, keyed by the
// source's hash, so later runs reuse it. Without ROS 2 the benchmark says so
// on stderr and exits 0. rclcpp runs its SingleThreadedExecutor; Humble has
// no events executor.
//
// All traffic stays on loopback on a domain reserved through
// internal/testenv.
//
// Usage: go run ./test/bench/rclcpp [-d 3s] [-rounds 2] [-cross] [-rebuild]
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

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
	rebuild := fs.Bool("rebuild", false, "rebuild the rclcpp peer")
	role := fs.String("role", "", "internal: run a Go role (sub, pub, pong, ping, server, client)")
	bytes := fs.Int("bytes", 1024, "internal: message size of a Go pub or ping role")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *role != "" {
		return runRole(*role, *bytes, *dur, out)
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
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ours := impl{name: "ours", path: self, env: env.ours, args: func(role string, bytes int, d time.Duration) []string {
		return []string{"-role", role, "-bytes", strconv.Itoa(bytes), "-d", d.String()}
	}}
	rclcpp := impl{name: "rclcpp", path: peer, env: env.rclcpp, args: func(role string, bytes int, d time.Duration) []string {
		s := strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
		if role == "pub" || role == "ping" {
			return []string{role, strconv.Itoa(bytes), s}
		}
		return []string{role, s}
	}}
	fmt.Fprintf(out, "settings: ROS 2 %s (%s), rmw_cyclonedds_cpp, rclcpp SingleThreadedExecutor; default QoS; 2 processes on loopback; %v per run, %d rounds; %d CPUs\n",
		r.Distro, r.Setup, *dur, *rounds, runtime.NumCPU())

	type pair struct{ a, b impl } // a: pub / ping / client; b: sub / pong / server
	pairs := []pair{{ours, ours}, {rclcpp, rclcpp}}
	if *cross {
		pairs = append(pairs, pair{ours, rclcpp}, pair{rclcpp, ours})
	}
	label := func(p pair) string {
		if p.a.name == p.b.name {
			return p.a.name
		}
		return p.a.name + "->" + p.b.name
	}
	type metric struct {
		name   string
		unit   string
		higher bool // higher is better
		f      func(p pair) (float64, error)
	}
	var metrics []metric
	for _, s := range sizes {
		metrics = append(metrics, metric{"throughput " + s.name, "msg/s", true, func(p pair) (float64, error) {
			return throughput(p.a, p.b, s.bytes, *dur)
		}})
	}
	for _, s := range sizes {
		metrics = append(metrics, metric{"round trip " + s.name, "us", false, func(p pair) (float64, error) {
			return roundTrip(p.a, p.b, s.bytes, *dur)
		}})
	}
	metrics = append(metrics, metric{"service calls", "calls/s", true, func(p pair) (float64, error) {
		return calls(p.a, p.b, *dur)
	}})

	res := make([][][]float64, len(metrics)) // metric, pair, round
	for i := range res {
		res[i] = make([][]float64, len(pairs))
	}
	for round := 1; round <= *rounds; round++ {
		for i, m := range metrics {
			for j, p := range pairs {
				v, err := m.f(p)
				if err != nil {
					return fmt.Errorf("%s, %s: %w", m.name, label(p), err)
				}
				fmt.Fprintf(out, "round %d %-18s %-14s %12.1f %s\n", round, m.name, label(p), v, m.unit)
				res[i][j] = append(res[i][j], v)
			}
		}
	}
	fmt.Fprintln(out, "summary (median over rounds; ratio = ours/rclcpp, higher is better for rates, lower for round trips):")
	for i, m := range metrics {
		var b strings.Builder
		for j, p := range pairs {
			fmt.Fprintf(&b, "  %s %.1f", label(p), benchproc.Median(res[i][j]))
		}
		ratio := benchproc.Median(res[i][0]) / benchproc.Median(res[i][1])
		better := ratio >= 1
		if !m.higher {
			better = ratio <= 1
		}
		verdict := "behind rclcpp"
		if better {
			verdict = "ahead of rclcpp"
		}
		fmt.Fprintf(out, "  %-18s (%s)%s  ratio %.2f (%s)\n", m.name, m.unit, b.String(), ratio, verdict)
	}
	return nil
}

// impl is one side's executable: ours (this program in a role) or
// bench_peer.
type impl struct {
	name string
	path string
	env  []string
	args func(role string, bytes int, d time.Duration) []string
}

func (i impl) start(ctx context.Context, role string, bytes int, d time.Duration) (*benchproc.Proc, error) {
	cmd := exec.CommandContext(ctx, i.path, i.args(role, bytes, d)...)
	cmd.Env = i.env
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

// roundTrip runs ping (a) and pong (b) and returns the median round trip
// in microseconds.
func roundTrip(ping, pong impl, bytes int, dur time.Duration) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dur+60*time.Second)
	defer cancel()
	po, err := pong.start(ctx, "pong", bytes, dur+3*time.Second)
	if err != nil {
		return 0, err
	}
	pi, err := ping.start(ctx, "ping", bytes, dur)
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
		var n, med, p90, p99 int64
		if _, err := fmt.Sscanf(l, "rtt n %d median %d p90 %d p99 %d", &n, &med, &p90, &p99); err == nil {
			if n == 0 {
				return 0, errors.New("no round trip completed")
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
		var n, secs float64
		if _, err := fmt.Sscanf(l, "calls %g seconds %g", &n, &secs); err == nil && secs > 0 {
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
	for _, f := range []string{"CMakeLists.txt", "peer.cpp"} {
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
	fmt.Fprintf(os.Stderr, "building the rclcpp peer in %s (about half a minute)\n", dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	cmd := r.Command(fmt.Sprintf("cmake -S %q -B %q -DPython3_EXECUTABLE=/usr/bin/python3 && cmake --build %q -j%d",
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
