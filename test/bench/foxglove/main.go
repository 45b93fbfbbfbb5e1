// Command foxglove measures foxglove_bridge under the load the issue names:
// a 1 kHz sensor_msgs/JointState and a 10 Hz 1 MB nav_msgs/OccupancyGrid,
// forwarded to four WebSocket clients of which one has stalled (it
// subscribed and never reads again). It prints the bridge process's CPU
// and memory (RSS sampled over the run, to show it does not grow), what
// each client received, the drops the bridge reports on /diagnostics, and
// the latency from publishing to a live client holding the decoded
// message.
//
// The bridge is the real node executable on a reserved DDS domain; the
// publisher and the clients run in this process. Latency is the client's
// clock minus the header stamp the publisher wrote just before publishing
// (same machine, same clock).
//
// Usage: go run ./test/bench/foxglove [-d 20s] [-warmup 3s] [-joints 12] [-grid 1000] [-live 3]
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/fsmnodes/fsmnodes/internal/foxglove"
	"github.com/fsmnodes/fsmnodes/internal/foxglove/rosbridge"
	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	builtin_interfaces_msg "github.com/fsmnodes/fsmnodes/msgs/builtin_interfaces/msg"
	diagnostic_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/diagnostic_msgs/msg"
	nav_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/nav_msgs/msg"
	sensor_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/sensor_msgs/msg"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench foxglove:", err)
		os.Exit(1)
	}
}

type config struct {
	dur, warmup time.Duration
	joints      int
	grid        int
	live        int
	depth       int
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("foxglove", flag.ContinueOnError)
	var c config
	fs.DurationVar(&c.dur, "d", 20*time.Second, "measured duration")
	fs.DurationVar(&c.warmup, "warmup", 3*time.Second, "time before measuring")
	fs.IntVar(&c.joints, "joints", 12, "joints in the JointState")
	fs.IntVar(&c.grid, "grid", 1000, "grid side: the OccupancyGrid has side*side cells (1000: 1 MB)")
	fs.IntVar(&c.live, "live", 3, "live clients (one more client is stalled)")
	fs.IntVar(&c.depth, "depth", 10, "keep-last depth of the JointState publisher (10: ROS's default)")
	extra := fs.String("bridge-args", "", "extra --ros-args for the bridge, space-separated (e.g. \"-p min_qos_depth:=25\")")
	if err := fs.Parse(args); err != nil {
		return err
	}
	bridgeArgs = strings.Fields(*extra)
	domain, release, err := testenv.ReserveDomain()
	if err != nil {
		return err
	}
	defer release()
	tmp, err := os.MkdirTemp("", "fsmnodes-bench-foxglove-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	env := []string{fmt.Sprintf("ROS_DOMAIN_ID=%d", domain), "ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST", "ROS_LOG_DIR=" + tmp}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}

	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(out, "foxglove_bridge benchmark (load average %s): %d-joint JointState at 1 kHz + %dx%d OccupancyGrid (%.1f MB) at 10 Hz, %d live clients + 1 stalled, %v measured after %v (domain %d)\n",
		strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "),
		c.joints, c.grid, c.grid, float64(c.grid*c.grid)/1e6, c.live, c.dur, c.warmup, domain)

	bridge, port, err := startBridge(tmp)
	if err != nil {
		return err
	}
	defer bridge.stop()

	rc, err := ros.NewContext(ros.ContextOptions{NoSignals: true, LogOutput: io.Discard})
	if err != nil {
		return err
	}
	defer rc.Close()
	go func() { _ = rc.Spin(context.Background()) }()
	node, err := rc.NewNode("bench_publisher", "")
	if err != nil {
		return err
	}
	diag := &diagWatch{}
	if _, err := ros.NewSubscription(node, ros.DiagnosticsTopic, ros.QoSDiagnosticsReader, diag.on); err != nil {
		return err
	}
	pubs, err := newPublishers(node, c)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := fmt.Sprintf("ws://127.0.0.1:%d", port)
	var clients []*client
	for i := 0; i < c.live+1; i++ {
		cl, err := dial(ctx, url, i == c.live)
		if err != nil {
			return err
		}
		defer cl.conn.CloseNow()
		clients = append(clients, cl)
	}
	// Wait for both channels, then subscribe everyone.
	if err := clients[0].waitChannels(ctx, "/bench/joint_states", "/bench/map"); err != nil {
		return err
	}
	for _, cl := range clients {
		if err := cl.subscribeAll(ctx, clients[0].channelIDs()); err != nil {
			return err
		}
	}

	pubCtx, stopPub := context.WithCancel(ctx)
	defer stopPub()
	var pubWG sync.WaitGroup
	pubWG.Add(1)
	go func() {
		defer pubWG.Done()
		pubs.run(pubCtx)
	}()

	time.Sleep(c.warmup)
	for _, cl := range clients {
		cl.reset()
	}
	pubs.reset()
	diagStart := diag.latest()
	cpu0, err := procCPU(bridge.cmd.Process.Pid)
	if err != nil {
		return err
	}
	var rss []int64
	t0 := time.Now()
	for time.Since(t0) < c.dur {
		time.Sleep(250 * time.Millisecond)
		if r, err := procRSS(bridge.cmd.Process.Pid); err == nil {
			rss = append(rss, r)
		}
	}
	elapsed := time.Since(t0)
	cpu1, err := procCPU(bridge.cmd.Process.Pid)
	if err != nil {
		return err
	}
	stopPub()
	pubWG.Wait()
	sentJS, sentGrid := pubs.counts()
	time.Sleep(1500 * time.Millisecond) // one more /diagnostics period
	diagEnd := diag.latest()

	fmt.Fprintf(out, "\npublished: %d JointState (%.0f/s), %d OccupancyGrid (%.1f/s)\n",
		sentJS, float64(sentJS)/elapsed.Seconds(), sentGrid, float64(sentGrid)/elapsed.Seconds())
	fmt.Fprintf(out, "bridge CPU: %.1f%% of one core\n", 100*(cpu1-cpu0)/elapsed.Seconds())
	if len(rss) > 0 {
		q := len(rss) / 4
		fmt.Fprintf(out, "bridge RSS: %.1f MB after the first quarter, %.1f MB at the end, %.1f MB max\n",
			mb(rss[q]), mb(rss[len(rss)-1]), mb(maxOf(rss)))
	}
	fmt.Fprintf(out, "\n%-8s %-8s %10s %10s %10s %10s %10s %10s %10s\n", "client", "", "joint/s", "js recv", "grid/s", "js p50", "js p99", "grid p50", "grid p99")
	for i, cl := range clients {
		kind := "live"
		if cl.stalled {
			kind = "stalled"
		}
		js, grid := cl.snapshot()
		if cl.stalled {
			fmt.Fprintf(out, "%-8d %-8s %10s %10s %10s  (subscribed, never reads)\n", i, kind, "-", "-", "-")
			continue
		}
		fmt.Fprintf(out, "%-8d %-8s %10.0f %9.2f%% %10.1f %10s %10s %10s %10s\n", i, kind,
			float64(len(js))/elapsed.Seconds(), 100*float64(len(js))/float64(max(sentJS, 1)), float64(len(grid))/elapsed.Seconds(),
			pct(js, 50), pct(js, 99), pct(grid, 50), pct(grid, 99))
	}
	fmt.Fprintf(out, "\ndrops reported by the bridge on /diagnostics (during the measured run):\n")
	for _, k := range sortedKeys(diagEnd) {
		if !strings.HasSuffix(k, " dropped") && k != "dropped_total" && k != "ros_queue_dropped" {
			continue
		}
		a, _ := strconv.ParseUint(diagEnd[k], 10, 64)
		b, _ := strconv.ParseUint(diagStart[k], 10, 64)
		fmt.Fprintf(out, "  %-40s %d\n", k, a-b)
	}
	if len(diagEnd) == 0 {
		return errors.New("no /diagnostics from the bridge")
	}
	return nil
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

func maxOf(xs []int64) int64 {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func pct(xs []time.Duration, p int) string {
	if len(xs) == 0 {
		return "-"
	}
	s := append([]time.Duration(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	d := s[min(len(s)-1, len(s)*p/100)]
	return fmt.Sprintf("%.2fms", float64(d)/1e6)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// bridgeArgs are extra --ros-args for the bridge (-bridge-args).
var bridgeArgs []string

// bridgeProc is the foxglove_bridge process.
type bridgeProc struct {
	cmd *exec.Cmd
	log string
}

func (b *bridgeProc) stop() {
	_ = b.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = b.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = b.cmd.Process.Kill()
		<-done
	}
}

func startBridge(tmp string) (*bridgeProc, int, error) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		return nil, 0, err
	}
	exe := filepath.Join(tmp, "foxglove_bridge")
	build := exec.Command("go", "build", "-o", exe, "./nodes/foxglove_bridge")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, 0, fmt.Errorf("build: %v\n%s", err, out)
	}
	logPath := filepath.Join(tmp, "bridge.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, 0, err
	}
	cmd := exec.Command(exe, append([]string{"--ros-args", "-p", "port:=0", "-p", `topic_whitelist:=["/bench/.*"]`}, bridgeArgs...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	b := &bridgeProc{cmd: cmd, log: logPath}
	re := regexp.MustCompile(`listening on ws://127\.0\.0\.1:(\d+)`)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		data, _ := os.ReadFile(logPath)
		if m := re.FindSubmatch(data); m != nil {
			port, _ := strconv.Atoi(string(m[1]))
			return b, port, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.stop()
	data, _ := os.ReadFile(logPath)
	return nil, 0, fmt.Errorf("foxglove_bridge did not start:\n%s", data)
}

// procCPU returns the user+system CPU seconds of a process.
func procCPU(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name (which is in parentheses).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100, nil // USER_HZ is 100 on Linux
}

// procRSS returns the resident set size of a process in bytes.
func procRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return kb * 1024, err
		}
	}
	return 0, errors.New("no VmRSS")
}

// publishers sends the two streams.
type publishers struct {
	c     config
	js    *ros.Publisher[sensor_msgs_msg.JointState]
	grid  *ros.Publisher[nav_msgs_msg.OccupancyGrid]
	mu    sync.Mutex
	nJS   int
	nGrid int
}

func newPublishers(n *ros.Node, c config) (*publishers, error) {
	js, err := ros.NewPublisher[sensor_msgs_msg.JointState](n, "/bench/joint_states", ros.QoSDefault.KeepLast(c.depth))
	if err != nil {
		return nil, err
	}
	grid, err := ros.NewPublisher[nav_msgs_msg.OccupancyGrid](n, "/bench/map", ros.QoSLatched)
	if err != nil {
		return nil, err
	}
	return &publishers{c: c, js: js, grid: grid}, nil
}

func (p *publishers) reset() {
	p.mu.Lock()
	p.nJS, p.nGrid = 0, 0
	p.mu.Unlock()
}

func (p *publishers) counts() (int, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.nJS, p.nGrid
}

// run publishes the JointState every millisecond and the grid every
// hundredth, on an absolute schedule (missed ticks are skipped).
func (p *publishers) run(ctx context.Context) {
	js := &sensor_msgs_msg.JointState{}
	for i := 0; i < p.c.joints; i++ {
		js.Name = append(js.Name, fmt.Sprintf("joint_%d", i))
	}
	js.Position = make([]float64, p.c.joints)
	js.Velocity = make([]float64, p.c.joints)
	js.Effort = make([]float64, p.c.joints)
	grid := &nav_msgs_msg.OccupancyGrid{}
	grid.Header.FrameId = "map"
	grid.Info.Width, grid.Info.Height, grid.Info.Resolution = uint32(p.c.grid), uint32(p.c.grid), 0.05
	grid.Data = make([]int8, p.c.grid*p.c.grid)
	start := time.Now()
	for k := 1; ; k++ {
		next := start.Add(time.Duration(k) * time.Millisecond)
		if d := time.Until(next); d > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(d):
			}
		} else if ctx.Err() != nil {
			return
		}
		js.Position[0] = float64(k)
		js.Header.Stamp = builtin_interfaces_msg.TimeOf(time.Now())
		if p.js.Publish(js) == nil {
			p.mu.Lock()
			p.nJS++
			p.mu.Unlock()
		}
		if k%100 == 0 {
			grid.Data[k%len(grid.Data)]++
			grid.Header.Stamp = builtin_interfaces_msg.TimeOf(time.Now())
			if p.grid.Publish(grid) == nil {
				p.mu.Lock()
				p.nGrid++
				p.mu.Unlock()
			}
		}
	}
}

// diagWatch keeps the values of the bridge's latest diagnostics status.
type diagWatch struct {
	mu     sync.Mutex
	values map[string]string
}

func (d *diagWatch) on(m *diagnostic_msgs_msg.DiagnosticArray) {
	for _, s := range m.Status {
		if s.Name != rosbridge.DiagnosticsName {
			continue
		}
		v := map[string]string{}
		for _, kv := range s.Values {
			v[kv.Key] = kv.Value
		}
		d.mu.Lock()
		d.values = v
		d.mu.Unlock()
	}
}

func (d *diagWatch) latest() map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.values
}

// client is one WebSocket client; a stalled one stops reading after it
// has subscribed.
type client struct {
	conn    *websocket.Conn
	stalled bool

	mu       sync.Mutex
	channels map[string]uint32
	subTopic map[uint32]string // subscription id -> topic
	js, grid []time.Duration   // latencies since the last reset
	changed  chan struct{}
}

func dial(ctx context.Context, url string, stalled bool) (*client, error) {
	conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{foxglove.Subprotocol}})
	if err != nil {
		return nil, err
	}
	conn.SetReadLimit(64 << 20)
	c := &client{conn: conn, stalled: stalled, channels: map[string]uint32{}, subTopic: map[uint32]string{},
		changed: make(chan struct{}, 1)}
	go c.read(ctx)
	return c, nil
}

func (c *client) read(ctx context.Context) {
	for {
		c.mu.Lock()
		stop := c.stalled && len(c.subTopic) > 0
		c.mu.Unlock()
		if stop {
			return // from now on nothing reads this connection
		}
		typ, data, err := c.conn.Read(ctx)
		if err != nil {
			return
		}
		now := time.Now()
		if typ == websocket.MessageText {
			var m struct {
				Op       string             `json:"op"`
				Channels []foxglove.Channel `json:"channels"`
			}
			if json.Unmarshal(data, &m) == nil && m.Op == "advertise" {
				c.mu.Lock()
				for _, ch := range m.Channels {
					c.channels[ch.Topic] = ch.ID
				}
				c.mu.Unlock()
				select {
				case c.changed <- struct{}{}:
				default:
				}
			}
			continue
		}
		// messageData: opcode, subscription id, receive time, CDR whose
		// body starts with the header stamp (int32 sec, uint32 nanosec).
		if len(data) < 13+4+8 || data[0] != foxglove.OpMessageData {
			continue
		}
		sub := binary.LittleEndian.Uint32(data[1:5])
		body := data[13+4:]
		stamp := time.Unix(int64(int32(binary.LittleEndian.Uint32(body[0:4]))), int64(binary.LittleEndian.Uint32(body[4:8])))
		lat := now.Sub(stamp)
		c.mu.Lock()
		switch c.subTopic[sub] {
		case "/bench/joint_states":
			c.js = append(c.js, lat)
		case "/bench/map":
			c.grid = append(c.grid, lat)
		}
		c.mu.Unlock()
	}
}

func (c *client) channelIDs() map[string]uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]uint32{}
	for k, v := range c.channels {
		out[k] = v
	}
	return out
}

func (c *client) waitChannels(ctx context.Context, topics ...string) error {
	deadline := time.After(30 * time.Second)
	for {
		ids := c.channelIDs()
		ok := true
		for _, t := range topics {
			_, has := ids[t]
			ok = ok && has
		}
		if ok {
			return nil
		}
		select {
		case <-c.changed:
		case <-deadline:
			return fmt.Errorf("channels %v not advertised within 30 s (have %v)", topics, ids)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (c *client) subscribeAll(ctx context.Context, ids map[string]uint32) error {
	var subs []foxglove.Subscription
	c.mu.Lock()
	n := uint32(0)
	for _, topic := range []string{"/bench/joint_states", "/bench/map"} {
		n++
		subs = append(subs, foxglove.Subscription{ID: n, ChannelID: ids[topic]})
		c.subTopic[n] = topic
	}
	c.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"op": "subscribe", "subscriptions": subs})
	return c.conn.Write(ctx, websocket.MessageText, b)
}

func (c *client) reset() {
	c.mu.Lock()
	c.js, c.grid = nil, nil
	c.mu.Unlock()
}

func (c *client) snapshot() (js, grid []time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.js...), append([]time.Duration(nil), c.grid...)
}
