// Command bench compares the Go DDS layer (internal/dds) with Cyclone's
// own ddsperf on this machine, in one run:
//
//   - throughput: 1 KiB samples, reliable, keep-last 10, publisher and
//     subscriber in two processes (ddsperf pub/sub, then ours), and the
//     same with keep-all (ddsperf's default history, flow-controlled);
//   - latency: ping-pong round trips between two processes (ddsperf
//     ping/pong, then ours), median of the round-trip times.
//
// All traffic stays on loopback (unicast discovery to 127.0.0.1) on a
// private domain id. The last line is
//
//	ratio throughput=X latency=Y
//
// with X = ours/ddsperf samples per second (higher is better) and Y =
// ours/ddsperf median round trip (lower is better).
//
// ddsperf runs in its default (listener) mode, which sets the ratio, and
// in waitset mode for comparison (printed as the "waitset-mode ratio"
// line before the last: that mode runs the handler on an application
// thread, as ours does). ddsperf enables write batching
// (dds_write_set_batch); our publisher gets the same through Cyclone's
// Internal/WriteBatch setting, and runs once more without it.
//
// The runs are interleaved over a few rounds and medians reported, since
// the machine may be shared. docs/dds.md discusses the figures.
//
// Usage: go run ./test/bench [-d 3s] [-rounds 2] [-domain N]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
	"github.com/fsmnodes/fsmnodes/test/bench/internal/benchproc"
)

// loopbackConfigFmt is the Cyclone configuration used by every process.
const loopbackConfigFmt = `<CycloneDDS><Domain id="any"><General>` +
	`<Interfaces><NetworkInterface name="lo" multicast="false"/></Interfaces>` +
	`<AllowMulticast>false</AllowMulticast></General>%s` +
	`<Discovery><ParticipantIndex>auto</ParticipantIndex><MaxAutoParticipantIndex>20</MaxAutoParticipantIndex>` +
	`<Peers><Peer address="127.0.0.1"/></Peers></Discovery></Domain></CycloneDDS>`

// loopbackConfig returns the configuration, with extra elements from
// FSM_BENCH_CYCLONE_EXTRA (for experiments, e.g. Internal settings).
func loopbackConfig() string { return loopbackConfigWith("") }

// loopbackConfigWith adds extra elements to the General section's sibling
// list (e.g. an Internal section).
func loopbackConfigWith(extra string) string {
	return fmt.Sprintf(loopbackConfigFmt, extra+os.Getenv("FSM_BENCH_CYCLONE_EXTRA"))
}

// Benchmark settings shared by ddsperf and ours.
const (
	payloadBody = 1024 // ddsperf "size 1k": 1024 bytes of sample after the encapsulation header
	depth       = 10   // keep-last depth of the throughput reader and writer (0: keep-all)
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	dur := fs.Duration("d", 3*time.Second, "duration of each measurement")
	rounds := fs.Int("rounds", 2, "number of interleaved rounds (median is reported)")
	domain := fs.Int("domain", -1, "DDS domain id (default: a free one reserved through internal/testenv)")
	role := fs.String("role", "", "internal: run as a helper process (sub, pub, ping, pong)")
	roleDepth := fs.Int("depth", depth, "internal: history depth of a helper process (0: keep-all)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *role != "" {
		return runRole(*role, uint32(*domain), *dur, *roleDepth, out)
	}
	if *domain < 0 {
		id, release, err := testenv.ReserveDomain()
		if err != nil {
			return err
		}
		defer release()
		*domain = int(id)
	}
	if _, err := exec.LookPath("ddsperf"); err != nil {
		return fmt.Errorf("ddsperf not found (Debian package cyclonedds-tools): %w", err)
	}
	fmt.Fprintf(out, "settings: %d-byte samples, reliable, keep-last %d (and keep-all, ddsperf's default), 2 processes on loopback, %v per run, %d rounds\n", payloadBody, depth, *dur, *rounds)
	fmt.Fprintln(out, "(round trips: ddsperf prints half the round trip; it is doubled here)")

	tputRuns := []struct {
		name string
		f    func() (throughput, error)
	}{
		{"ddsperf (listener)", func() (throughput, error) { return ddsperfThroughput(*domain, *dur, "listener", depth) }},
		{"ddsperf (waitset)", func() (throughput, error) { return ddsperfThroughput(*domain, *dur, "waitset", depth) }},
		{"ours (write batching)", func() (throughput, error) { return oursThroughput(*domain, *dur, true, depth) }},
		{"ours (no batching)", func() (throughput, error) { return oursThroughput(*domain, *dur, false, depth) }},
		{"keep-all ddsperf", func() (throughput, error) { return ddsperfThroughput(*domain, *dur, "listener", 0) }},
		{"keep-all ours (batch)", func() (throughput, error) { return oursThroughput(*domain, *dur, true, 0) }},
	}
	latRuns := []struct {
		name string
		f    func() (latency, error)
	}{
		{"ddsperf (listener)", func() (latency, error) { return ddsperfLatency(*domain, *dur, "listener") }},
		{"ddsperf (waitset)", func() (latency, error) { return ddsperfLatency(*domain, *dur, "waitset") }},
		{"ours", func() (latency, error) { return oursLatency(*domain, *dur) }},
	}
	// Rounds interleave the runs so that load changes on a shared machine
	// hit both sides alike; the summary takes the median over rounds.
	tputs := make([][]float64, len(tputRuns))
	lats := make([][]float64, len(latRuns))
	for round := 1; round <= *rounds; round++ {
		for i, r := range tputRuns {
			t, err := r.f()
			if err != nil {
				return fmt.Errorf("%s throughput: %w", r.name, err)
			}
			fmt.Fprintf(out, "round %d throughput %-22s %9.0f samples/s, lost %d\n", round, r.name, t.rate, t.lost)
			tputs[i] = append(tputs[i], t.rate)
		}
		for i, r := range latRuns {
			l, err := r.f()
			if err != nil {
				return fmt.Errorf("%s latency: %w", r.name, err)
			}
			fmt.Fprintf(out, "round %d round trip %-22s median %6.1f us  p90 %6.1f us  p99 %6.1f us\n", round, r.name, us(l.median), us(l.p90), us(l.p99))
			lats[i] = append(lats[i], float64(l.median))
		}
	}
	fmt.Fprintln(out, "summary (median over rounds):")
	for i, r := range tputRuns {
		v := benchproc.Median(tputs[i])
		fmt.Fprintf(out, "  throughput %-22s %9.0f samples/s %6.0f Mb/s\n", r.name, v, v*payloadBody*8/1e6)
	}
	for i, r := range latRuns {
		fmt.Fprintf(out, "  round trip %-22s median %6.1f us\n", r.name, benchproc.Median(lats[i])/1e3)
	}
	// ddsperf's default mode (listener) against ours with the same write
	// batching ddsperf uses; keep-all for information, keep-last last.
	fmt.Fprintf(out, "keep-all ratio throughput=%.2f\n", benchproc.Median(tputs[5])/benchproc.Median(tputs[4]))
	// For information: against ddsperf's waitset mode, whose threading
	// (handler on an application thread, not Cyclone's) is ours.
	fmt.Fprintf(out, "waitset-mode ratio throughput=%.2f latency=%.2f\n", benchproc.Median(tputs[2])/benchproc.Median(tputs[1]), benchproc.Median(lats[2])/benchproc.Median(lats[1]))
	fmt.Fprintf(out, "ratio throughput=%.2f latency=%.2f\n", benchproc.Median(tputs[2])/benchproc.Median(tputs[0]), benchproc.Median(lats[2])/benchproc.Median(lats[0]))
	return nil
}

func us(d time.Duration) float64 { return d.Seconds() * 1e6 }

// throughput is a measured receive rate.
type throughput struct {
	rate float64 // samples per second received, steady state
	lost int64
}

func start(ctx context.Context, name string, args ...string) (*benchproc.Proc, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "CYCLONEDDS_URI="+loopbackConfig())
	cmd.Stderr = os.Stderr
	return benchproc.Start(cmd)
}

var (
	reSubRate = regexp.MustCompile(`size \d+ total \d+ lost (\d+) delta \d+ lost \d+ rate ([0-9.]+) kS/s`)
	rePing    = regexp.MustCompile(`size \d+ mean [0-9.]+us min [0-9.]+us 50% ([0-9.]+)us 90% ([0-9.]+)us 99% ([0-9.]+)us`)
)

// steady drops the first and last per-second figures (start-up and
// shutdown) and returns the median of the rest.
func steady(xs []float64) (float64, error) {
	if len(xs) > 2 {
		xs = xs[1 : len(xs)-1]
	}
	if len(xs) == 0 {
		return 0, errors.New("no measurements")
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2], nil
}

func secs(d time.Duration) string { return strconv.Itoa(int(d.Round(time.Second) / time.Second)) }

func ddsperfThroughput(domain int, dur time.Duration, mode string, depth int) (throughput, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dur+30*time.Second)
	defer cancel()
	dom := strconv.Itoa(domain)
	subMode := mode
	sub, err := start(ctx, "ddsperf", "-k", strconv.Itoa(depth), "-D", secs(dur+2*time.Second), "-i", dom, "sub", subMode)
	if err != nil {
		return throughput{}, err
	}
	pub, err := start(ctx, "ddsperf", "-k", strconv.Itoa(depth), "-D", secs(dur+time.Second), "-i", dom, "pub", "size", "1k")
	if err != nil {
		return throughput{}, err
	}
	if _, err := pub.Collect(); err != nil {
		return throughput{}, fmt.Errorf("ddsperf pub: %w", err)
	}
	lines, err := sub.Collect()
	if err != nil {
		return throughput{}, fmt.Errorf("ddsperf sub: %w", err)
	}
	var rates []float64
	var lost int64
	for _, l := range lines {
		if m := reSubRate.FindStringSubmatch(l); m != nil {
			lost, _ = strconv.ParseInt(m[1], 10, 64)
			r, _ := strconv.ParseFloat(m[2], 64)
			if r > 0 {
				rates = append(rates, r*1e3)
			}
		}
	}
	r, err := steady(rates)
	return throughput{rate: r, lost: lost}, err
}

func ddsperfLatency(domain int, dur time.Duration, mode string) (latency, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dur+30*time.Second)
	defer cancel()
	dom := strconv.Itoa(domain)
	pong, err := start(ctx, "ddsperf", "-D", secs(dur+2*time.Second), "-i", dom, "pong", mode)
	if err != nil {
		return latency{}, err
	}
	ping, err := start(ctx, "ddsperf", "-D", secs(dur+time.Second), "-i", dom, "ping", "size", "1k", mode)
	if err != nil {
		return latency{}, err
	}
	lines, err := ping.Collect()
	if err != nil {
		return latency{}, fmt.Errorf("ddsperf ping: %w", err)
	}
	if _, err := pong.Collect(); err != nil {
		return latency{}, fmt.Errorf("ddsperf pong: %w", err)
	}
	// ddsperf reports (now - sent)/2 per pong: double it for round trips.
	var p50, p90, p99 []float64
	for _, l := range lines {
		if m := rePing.FindStringSubmatch(l); m != nil {
			v50, _ := strconv.ParseFloat(m[1], 64)
			v90, _ := strconv.ParseFloat(m[2], 64)
			v99, _ := strconv.ParseFloat(m[3], 64)
			p50, p90, p99 = append(p50, 2*v50), append(p90, 2*v90), append(p99, 2*v99)
		}
	}
	var lat latency
	for _, x := range []struct {
		dst *time.Duration
		xs  []float64
	}{{&lat.median, p50}, {&lat.p90, p90}, {&lat.p99, p99}} {
		v, err := steady(x.xs)
		if err != nil {
			return latency{}, err
		}
		*x.dst = time.Duration(v * 1e3)
	}
	return lat, nil
}

// self starts this program in a helper role.
func self(ctx context.Context, role string, domain int, dur time.Duration, extra ...string) (*benchproc.Proc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := append([]string{"-role", role, "-domain", strconv.Itoa(domain), "-d", dur.String()}, extra...)
	return start(ctx, exe, args...)
}

func oursThroughput(domain int, dur time.Duration, batch bool, depth int) (throughput, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dur+30*time.Second)
	defer cancel()
	sub, err := self(ctx, "sub", domain, dur+2*time.Second, "-depth", strconv.Itoa(depth))
	if err != nil {
		return throughput{}, err
	}
	pubRole := "pub"
	if batch {
		pubRole = "pub-batch"
	}
	pub, err := self(ctx, pubRole, domain, dur+time.Second, "-depth", strconv.Itoa(depth))
	if err != nil {
		return throughput{}, err
	}
	if _, err := pub.Collect(); err != nil {
		return throughput{}, fmt.Errorf("pub: %w", err)
	}
	lines, err := sub.Collect()
	if err != nil {
		return throughput{}, fmt.Errorf("sub: %w", err)
	}
	var rates []float64
	var lost int64
	for _, l := range lines {
		var r float64
		var lo int64
		if _, err := fmt.Sscanf(l, "rate %f lost %d", &r, &lo); err == nil {
			lost = lo
			if r > 0 {
				rates = append(rates, r)
			}
		}
	}
	r, err := steady(rates)
	return throughput{rate: r, lost: lost}, err
}

// latency summarises round-trip times.
type latency struct {
	median, p10, p90, p99 time.Duration
	n                     int
}

func oursLatency(domain int, dur time.Duration) (latency, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dur+30*time.Second)
	defer cancel()
	pong, err := self(ctx, "pong", domain, dur+2*time.Second)
	if err != nil {
		return latency{}, err
	}
	ping, err := self(ctx, "ping", domain, dur)
	if err != nil {
		return latency{}, err
	}
	lines, err := ping.Collect()
	if err != nil {
		return latency{}, fmt.Errorf("ping: %w", err)
	}
	if _, err := pong.Collect(); err != nil {
		return latency{}, fmt.Errorf("pong: %w", err)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "rtt ") {
			continue
		}
		var lat latency
		var med, p10, p90, p99 int64
		if _, err := fmt.Sscanf(l, "rtt n %d median %d p10 %d p90 %d p99 %d", &lat.n, &med, &p10, &p90, &p99); err != nil {
			return latency{}, fmt.Errorf("bad ping output %q: %w", l, err)
		}
		lat.median, lat.p10, lat.p90, lat.p99 = time.Duration(med), time.Duration(p10), time.Duration(p90), time.Duration(p99)
		return lat, nil
	}
	return latency{}, errors.New("ping printed no result")
}
