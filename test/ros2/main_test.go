// Package ros2 drives real ROS 2 (Humble or Jazzy: rclcpp, rclpy, the ros2
// CLI and launch, on rmw_cyclonedds_cpp) against our binaries, in both
// directions.
//
// The peer is the ROS 2 build in $ROS2_PREFIX (default /opt/ros2-humble;
// `make ros2-peer` builds Humble into /opt/ros2-humble and Jazzy into
// /opt/ros2-jazzy). `make test` runs the package once per distro
// (scripts/ros2-suite.sh); our processes speak the peer's distro
// (ROS_DISTRO, see dom.ours), and the dialect tests leave it unset to check
// the auto-detection against that distro. TestMain builds on top of it, once per source
// tree (cached under the user cache directory), the interface packages
// rsm_msgs, velma_msgs and fsm_msgs and the rclcpp peer test/ros2/peer
// (build-peer.sh), and builds our executables into a temporary directory.
// Without the ROS 2 build every test skips with a loud message, except in CI
// (CI=true), where that is a failure. -short skips them too.
//
// Each test runs in its own domain (testenv.Domain), on loopback as the
// distro's users set it (Humble's ROS_LOCALHOST_ONLY=1, Jazzy's
// ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST, or a CYCLONEDDS_URI with the same
// effect) on every process, so tests run in parallel without
// hearing each other; ros2 CLI verbs run with --no-daemon where they take
// it, and a daemon a verb starts anyway belongs to the test's domain and is
// stopped when the test ends. ROS 2 commands run in the environment of
// `. $ROS2_PREFIX/env.sh && . overlay/install/setup.bash`, captured once;
// the test process itself never sources it. Many ros2 CLI calls of a test
// run in one Python process (testdata/ros2_batch.py), since every Python
// start costs about a second.
package ros2

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/testenv"
	action_msgs_msg "github.com/fsmnodes/fsmnodes/msgs/action_msgs/msg"
)

// deadline bounds every wait; reaching it is a failure, never a result.
const deadline = 90 * time.Second

// peer is what TestMain prepared.
var peer struct {
	skip    string   // why the tests cannot run ("" when they can)
	distro  string   // ROS_DISTRO of the peer ("humble", "jazzy")
	prefix  string   // where it is installed
	rosEnv  []string // environment of ROS 2 processes (sourced once), without per-test variables
	baseEnv []string // environment of our processes, without ROS_* variables
	bin     string   // our executables
	overlay string   // build-peer.sh output: install/ (interfaces), bin/ros2_peer
	ws      string   // colcon workspace of this repo (install/setup.bash)
	// colconErr is why the colcon build of the repo failed (only the
	// launch test needs it).
	colconErr error
	repo      string
	tmp       string
}

func TestMain(m *testing.M) {
	// The tests here mostly wait (for discovery, --spin-time, ros2
	// launch): four run at a time unless -parallel says otherwise.
	testenv.DefaultParallel(4)
	code := setUp()
	if code == 0 {
		code = testenv.WithLogDir(m)
		if peer.skip == "" {
			tally.report(code)
		}
	}
	if peer.tmp != "" {
		os.RemoveAll(peer.tmp)
	}
	os.Exit(code)
}

// setUp prepares peer; a non-zero result ends the run.
func setUp() int {
	flagShort := false
	for _, a := range os.Args[1:] {
		if a == "-test.short" || a == "-test.short=true" {
			flagShort = true
		}
	}
	if flagShort {
		peer.skip = "-short"
		return 0
	}
	ci := os.Getenv("CI") == "true"
	prefix := os.Getenv("ROS2_PREFIX")
	if prefix == "" {
		prefix = "/opt/ros2-humble"
	}
	peer.prefix = prefix
	if _, err := os.Stat(filepath.Join(prefix, "env.sh")); err != nil {
		msg := fmt.Sprintf("no ROS 2 in %s (%s/env.sh missing): run `make ros2-peer` to build it", prefix, prefix)
		if ci {
			fmt.Fprintln(os.Stderr, "test/ros2: FAIL:", msg, "(CI=true: .ci/run must build it)")
			return 1
		}
		fmt.Fprintln(os.Stderr, "\n!!!!! test/ros2: SKIPPING every test:", msg, "!!!!!")
		peer.skip = msg
		return 0
	}
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "test/ros2: FAIL:", err)
		return 1
	}
	wd, err := os.Getwd()
	if err != nil {
		return fail(err)
	}
	peer.repo = filepath.Clean(filepath.Join(wd, "..", ".."))
	if peer.tmp, err = os.MkdirTemp("", "fsmnodes-ros2-"); err != nil {
		return fail(err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	cache = filepath.Join(cache, "fsmnodes", "ros2-peer")

	baseEnv, err := sourceEnv(nil, filepath.Join(prefix, "env.sh"))
	if err != nil {
		return fail(err)
	}
	for _, kv := range baseEnv {
		if v, ok := strings.CutPrefix(kv, "ROS_DISTRO="); ok {
			peer.distro = v
		}
	}
	switch peer.distro {
	case "humble", "jazzy":
	default:
		return fail(fmt.Errorf("%s/env.sh sets ROS_DISTRO=%q; test/ros2 knows humble and jazzy", prefix, peer.distro))
	}
	fmt.Fprintf(os.Stderr, "test/ros2: peer is ROS 2 %s in %s\n", peer.distro, prefix)

	// Our executables (then the colcon overlay of the repo, whose go build
	// finds them in the build cache) and the ROS side build at the same
	// time.
	var wg sync.WaitGroup
	var goErr, peerErr error
	wg.Add(2)
	go func() {
		defer wg.Done()
		if goErr = buildOurs(); goErr != nil {
			return
		}
		peer.colconErr = buildColcon(baseEnv)
	}()
	go func() {
		defer wg.Done()
		out, err := exec.Command("bash", filepath.Join(peer.repo, "test/ros2/build-peer.sh"), cache).Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				err = fmt.Errorf("%v\n%s", err, ee.Stderr)
			}
			peerErr = fmt.Errorf("build-peer.sh: %w", err)
			return
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		peer.overlay = lines[len(lines)-1]
	}()
	wg.Wait()
	if goErr != nil {
		return fail(goErr)
	}
	if peerErr != nil {
		return fail(peerErr)
	}
	env, err := sourceEnv(baseEnv, filepath.Join(peer.overlay, "install", "setup.bash"))
	if err != nil {
		return fail(err)
	}
	for _, kv := range env {
		if !perTestVar(kv) {
			peer.rosEnv = append(peer.rosEnv, kv)
		}
	}
	for _, kv := range os.Environ() {
		if !perTestVar(kv) && !strings.HasPrefix(kv, "ROS_") {
			peer.baseEnv = append(peer.baseEnv, kv)
		}
	}
	return 0
}

// tally counts the checks against the peer: every test and subtest that
// made a domain (newDom), by outcome.
var tally checkTally

type checkTally struct {
	mu                      sync.Mutex
	passed, failed, skipped int
	failedNames             []string
}

func (c *checkTally) record(t *testing.T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case t.Failed():
		c.failed++
		c.failedNames = append(c.failedNames, t.Name())
	case t.Skipped():
		c.skipped++
	default:
		c.passed++
	}
}

// report prints the tally on stderr and writes it to
// $FSMNODES_ROS2_SUMMARY when set (make test prints those files at the
// end, since go test shows a passing package's output only with -v).
func (c *checkTally) report(code int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	line := fmt.Sprintf("test/ros2 against ROS 2 %s (%s): %d checks: passed=%d failed=%d skipped=%d (exit %d)",
		peer.distro, peer.prefix, c.passed+c.failed+c.skipped, c.passed, c.failed, c.skipped, code)
	if len(c.failedNames) > 0 {
		line += "\n  failed: " + strings.Join(c.failedNames, ", ")
	}
	fmt.Fprintln(os.Stderr, line)
	if f := os.Getenv("FSMNODES_ROS2_SUMMARY"); f != "" {
		if err := os.WriteFile(f, []byte(line+"\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "test/ros2: writing the summary:", err)
		}
	}
}

// sourceEnv returns the environment after sourcing script in bash, started
// with env (nil: this process's).
func sourceEnv(env []string, script string) ([]string, error) {
	cmd := exec.Command("bash", "-c", fmt.Sprintf(". %q && env -0", script))
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("sourcing %s: %v", script, err)
	}
	var res []string
	for _, kv := range strings.Split(string(out), "\x00") {
		if kv != "" {
			res = append(res, kv)
		}
	}
	return res, nil
}

// buildColcon builds the repo as a colcon package (scripts/check-colcon.sh)
// against ROS 2 into peer.tmp/ws, for ros2 launch.
func buildColcon(rosEnv []string) error {
	peer.ws = filepath.Join(peer.tmp, "ws")
	cmd := exec.Command("bash", filepath.Join(peer.repo, "scripts/check-colcon.sh"), peer.ws)
	cmd.Env = rosEnv
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("scripts/check-colcon.sh against ROS 2: %v\n%s", err, out)
	}
	return nil
}

// perTestVar reports whether kv is a variable each test sets itself.
func perTestVar(kv string) bool {
	k, _, _ := strings.Cut(kv, "=")
	switch k {
	case "ROS_DOMAIN_ID", "ROS_LOCALHOST_ONLY", "ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_STATIC_PEERS",
		"CYCLONEDDS_URI", "ROS_LOG_DIR", "ROS_HOME":
		return true
	}
	return false
}

// buildOurs builds the CLI, every node and test/gopeer (the Go peer) into peer.bin,
// or takes them from $FSMNODES_TEST_BIN (`make test` builds them there with
// -trimpath, as this would).
func buildOurs() error {
	goTool := testenv.GoTool()
	pkgs := []string{"./cmd/fsmnodes", "./test/gopeer"}
	nodes, _ := filepath.Glob(filepath.Join(peer.repo, "nodes", "*"))
	for _, n := range nodes {
		pkgs = append(pkgs, "./nodes/"+filepath.Base(n))
	}
	if dir := os.Getenv(testenv.BinEnv); dir != "" {
		have := 0
		for _, p := range pkgs {
			if _, err := os.Stat(filepath.Join(dir, filepath.Base(p))); err == nil {
				have++
			}
		}
		if have == len(pkgs) {
			peer.bin = dir
			return nil
		}
	}
	peer.bin = filepath.Join(peer.tmp, "bin")
	// -trimpath as the colcon build does, so that it finds every package
	// compiled already.
	cmd := exec.Command(goTool, append([]string{"build", "-trimpath", "-o", peer.bin + "/"}, pkgs...)...)
	cmd.Dir = peer.repo
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	return nil
}

// dom is one test's domain and environment.
type dom struct {
	t   *testing.T
	id  uint32
	dir string // per-test temporary directory (logs, files)
	// net is how every process of the test (and its own Context) stays on
	// loopback: default localNet.
	net []string
}

// moreParticipants lets more than Cyclone's default of 10 processes share a
// domain on loopback (without multicast, each takes a participant index).
const moreParticipants = `<CycloneDDS><Domain><Discovery><MaxAutoParticipantIndex>60</MaxAutoParticipantIndex></Discovery></Domain></CycloneDDS>`

// localNet keeps a test on loopback as a user of distro would: Humble's
// ROS_LOCALHOST_ONLY=1 (the 127.0.0.1 interface), Jazzy's
// ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST (ROS_LOCALHOST_ONLY is deprecated
// there).
func localNet(distro string) []string {
	if distro == "humble" {
		return []string{"ROS_LOCALHOST_ONLY=1", "CYCLONEDDS_URI=" + moreParticipants}
	}
	return []string{"ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST", "CYCLONEDDS_URI=" + moreParticipants}
}

// newDom skips the test when the peer is missing and returns a fresh
// domain. The test runs in parallel with the others.
func newDom(t *testing.T) *dom {
	t.Helper()
	if peer.skip != "" {
		t.Skip("test/ros2:", peer.skip)
	}
	t.Parallel()
	d := &dom{t: t, id: testenv.Domain(t), dir: t.TempDir(), net: localNet(peer.distro)}
	t.Cleanup(d.stopDaemon)
	t.Cleanup(func() { tally.record(t) })
	return d
}

// vars are the per-test variables of every process.
func (d *dom) vars() []string {
	// ROS_HOME of the test's own: the suites of both distros run the demo
	// at the same time, and its waypoint files live there.
	return append([]string{
		fmt.Sprintf("ROS_DOMAIN_ID=%d", d.id),
		"ROS_LOG_DIR=" + filepath.Join(d.dir, "log"),
		"ROS_HOME=" + filepath.Join(d.dir, "ros_home"),
	}, d.net...)
}

// rosEnv is the environment of a ROS 2 process of the test.
func (d *dom) rosEnv() []string { return append(append([]string(nil), peer.rosEnv...), d.vars()...) }

// ours is the environment of one of our processes with ROS_DISTRO set to
// the peer's distro, as a user of that distro has it.
func (d *dom) ours() []string { return d.oursEnv(peer.distro) }

// oursEnv is the environment of one of our processes with ROS_DISTRO set
// to distro; "" leaves ROS_DISTRO unset (the dialect follows the domain).
func (d *dom) oursEnv(distro string) []string {
	env := append(append([]string(nil), peer.baseEnv...), d.vars()...)
	if distro != "" {
		env = append(env, "ROS_DISTRO="+distro)
	}
	return env
}

// stopDaemon stops a ros2 daemon of the test's domain, if a verb started
// one (it listens on 127.0.0.1:11511+domain).
func (d *dom) stopDaemon() {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", 11511+d.id), time.Second)
	if err != nil {
		return
	}
	c.Close()
	env := d.rosEnv()
	cmd := exec.Command(lookPathIn("ros2", env), "daemon", "stop")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		d.t.Logf("ros2 daemon stop: %v\n%s", err, out)
	}
}

// lookPathIn finds an executable on the PATH of env.
func lookPathIn(name string, env []string) string {
	if strings.Contains(name, "/") {
		return name
	}
	for i := len(env) - 1; i >= 0; i-- {
		if p, ok := strings.CutPrefix(env[i], "PATH="); ok {
			for _, dir := range filepath.SplitList(p) {
				f := filepath.Join(dir, name)
				if st, err := os.Stat(f); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
					return f
				}
			}
			break
		}
	}
	return name
}

// ours returns the path of one of our executables.
func ours(name string) string { return filepath.Join(peer.bin, name) }

// peerBin is the rclcpp peer.
func peerBin() string { return filepath.Join(peer.overlay, "bin", "ros2_peer") }

// ---- processes ----

// proc is a running process whose output lines are kept for waitLine.
type proc struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error

	mu    sync.Mutex
	lines []string
	more  chan struct{} // closed and replaced at every new line
}

// start runs argv with env, logs its output into the test log, and stops it
// (SIGINT, then SIGKILL) at the end of the test.
func (d *dom) start(name string, env []string, argv ...string) *proc {
	d.t.Helper()
	cmd := exec.Command(lookPathIn(argv[0], env), argv[1:]...)
	cmd.Env = env
	cmd.Dir = d.dir
	// Its own process group: SIGINT reaches the children of ros2 launch.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &proc{t: d.t, name: name, cmd: cmd, done: make(chan struct{}), more: make(chan struct{})}
	r, w, err := os.Pipe()
	if err != nil {
		d.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		d.t.Fatalf("start %s: %v", name, err)
	}
	w.Close()
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
		for sc.Scan() {
			p.add(sc.Text())
		}
	}()
	go func() {
		<-scanned
		p.err = cmd.Wait()
		close(p.done)
	}()
	d.t.Cleanup(p.stop)
	return p
}

func (p *proc) add(line string) {
	p.t.Logf("[%s] %s", p.name, line)
	p.mu.Lock()
	p.lines = append(p.lines, line)
	close(p.more)
	p.more = make(chan struct{})
	p.mu.Unlock()
}

// output returns every line so far.
func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

// waitLine waits for a line containing substr and returns it.
func (p *proc) waitLine(substr string) string {
	p.t.Helper()
	return p.waitMatch(substr, func(l string) bool { return strings.Contains(l, substr) })
}

// waitMatch waits for a line for which match is true.
func (p *proc) waitMatch(what string, match func(string) bool) string {
	p.t.Helper()
	timeout := time.After(deadline)
	seen := 0
	for {
		p.mu.Lock()
		lines, more := p.lines, p.more
		p.mu.Unlock()
		for ; seen < len(lines); seen++ {
			if match(lines[seen]) {
				return lines[seen]
			}
		}
		select {
		case <-more:
		case <-p.done:
			p.mu.Lock()
			n := len(p.lines)
			p.mu.Unlock()
			if n == seen {
				p.t.Fatalf("%s exited (%v) before printing %q", p.name, p.err, what)
			}
		case <-timeout:
			p.t.Fatalf("%s did not print %q within %v", p.name, what, deadline)
		}
	}
}

// waitOutput waits until the whole output so far matches re and returns
// the match.
func (p *proc) waitOutput(what string, re *regexp.Regexp) string {
	p.t.Helper()
	timeout := time.After(deadline)
	for {
		p.mu.Lock()
		more := p.more
		p.mu.Unlock()
		if m := re.FindString(p.output()); m != "" {
			return m
		}
		select {
		case <-more:
		case <-p.done:
			if m := re.FindString(p.output()); m != "" {
				return m
			}
			p.t.Fatalf("%s exited (%v) before printing %s", p.name, p.err, what)
		case <-timeout:
			p.t.Fatalf("%s did not print %s within %v:\n%s", p.name, what, deadline, p.output())
		}
	}
}

// interrupt sends SIGINT to the process group (as Ctrl-C in a terminal).
func (p *proc) interrupt() { syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT) }

// wait waits for the process to exit and returns its error.
func (p *proc) wait() error {
	p.t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(deadline):
		p.t.Fatalf("%s did not exit within %v", p.name, deadline)
		return nil
	}
}

// stop interrupts the process group and kills it if it does not exit.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.interrupt()
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// run runs argv to completion with env and returns its combined output; a
// failure to run or a non-zero exit fails the test unless allowFail.
func (d *dom) run(env []string, argv ...string) string {
	d.t.Helper()
	out, err := d.runErr(env, argv...)
	if err != nil {
		d.t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return out
}

func (d *dom) runErr(env []string, argv ...string) (string, error) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, lookPathIn(argv[0], env), argv[1:]...)
	cmd.Env = env
	cmd.Dir = d.dir
	out, err := cmd.CombinedOutput()
	d.t.Logf("$ %s\n%s", strings.Join(argv, " "), out)
	return string(out), err
}

// fsmnodes runs our CLI (ROS_DISTRO of the peer).
func (d *dom) fsmnodes(args ...string) string {
	d.t.Helper()
	return d.run(d.ours(), append([]string{ours("fsmnodes")}, args...)...)
}

// ---- the ros2 CLI, batched ----

// ros2Cmd is one ros2 CLI call of a batch.
type ros2Cmd struct {
	Argv    []string `json:"argv"`
	Timeout float64  `json:"timeout,omitempty"` // seconds; then Ctrl-C
	// Lane: calls of one lane run one after the other in one Python
	// process; lanes run side by side. Calls that depend on each other
	// (a set, then a get) share a lane.
	Lane int `json:"-"`
}

// in returns c in lane l.
func (c ros2Cmd) in(l int) ros2Cmd { c.Lane = l; return c }

// ros2Result is what one call printed and returned ("0", "1", an error
// text, or "2" for Ctrl-C).
type ros2Result struct {
	Argv   []string `json:"argv"`
	RC     any      `json:"rc"`
	Stdout string   `json:"stdout"`
	Stderr string   `json:"stderr"`
}

// ok reports a zero return code.
func (r ros2Result) ok() bool {
	switch v := r.RC.(type) {
	case nil:
		return true
	case float64:
		return v == 0
	}
	return false
}

func (r ros2Result) String() string {
	return fmt.Sprintf("ros2 %s -> rc %v\n%s%s", strings.Join(r.Argv, " "), r.RC, r.Stdout, r.Stderr)
}

// ros2 runs ros2 CLI calls and returns their results in the order given.
// The calls of one lane (ros2Cmd.Lane) run one after the other in one
// Python process (starting Python with rclpy costs about a second); lanes
// run side by side, since most calls spend their time waiting for
// discovery (--spin-time) or an answer.
func (d *dom) ros2(cmds ...ros2Cmd) []ros2Result {
	d.t.Helper()
	lanes := map[int][]int{} // lane -> indices into cmds
	for i, c := range cmds {
		lanes[c.Lane] = append(lanes[c.Lane], i)
	}
	type laneOut struct {
		idx    []int
		res    []ros2Result
		stderr string
		err    error
	}
	outs := make(chan laneOut, len(lanes))
	for _, idx := range lanes {
		batch := make([]ros2Cmd, len(idx))
		for j, i := range idx {
			batch[j] = cmds[i]
		}
		go func() {
			res, stderr, err := d.ros2Batch(batch)
			outs <- laneOut{idx, res, stderr, err}
		}()
	}
	all := make([]ros2Result, len(cmds))
	var failed []string
	for range lanes {
		o := <-outs
		for j, r := range o.res {
			all[o.idx[j]] = r
		}
		if o.err != nil || len(o.res) != len(o.idx) {
			failed = append(failed, fmt.Sprintf("ros2_batch.py: %v (%d of %d results)\n%s", o.err, len(o.res), len(o.idx), o.stderr))
		}
	}
	for _, r := range all {
		if r.Argv != nil {
			d.t.Log(r.String())
		}
	}
	if len(failed) > 0 {
		d.t.Fatal(strings.Join(failed, "\n"))
	}
	return all
}

// ros2Batch runs cmds one after the other in one Python process
// (testdata/ros2_batch.py). It may run on any goroutine.
func (d *dom) ros2Batch(cmds []ros2Cmd) (res []ros2Result, stderr string, err error) {
	in, err := json.Marshal(cmds)
	if err != nil {
		return nil, "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", filepath.Join(peer.repo, "test/ros2/testdata/ros2_batch.py"))
	cmd.Env = d.rosEnv()
	cmd.Dir = d.dir
	cmd.Stdin = bytes.NewReader(in)
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	out, err := cmd.Output()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		var r ros2Result
		if jerr := json.Unmarshal([]byte(line), &r); jerr != nil {
			return res, errBuf.String(), fmt.Errorf("ros2_batch.py printed %q: %w", line, jerr)
		}
		res = append(res, r)
	}
	return res, errBuf.String(), err
}

// ros2One runs one ros2 CLI call and fails the test if it fails.
func (d *dom) ros2One(argv ...string) string {
	d.t.Helper()
	r := d.ros2(ros2Cmd{Argv: argv})[0]
	if !r.ok() {
		d.t.Fatalf("%v", r)
	}
	return r.Stdout
}

// mustContain fails the test unless s contains every want.
func mustContain(t *testing.T, what, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
}

// waitGraph waits until cond holds on c's graph.
func waitGraph(t *testing.T, c *ros.Context, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := c.WaitForGraph(ctx, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// cancelWithCtrlC runs `ros2 action send_goal --feedback` with goal, presses
// Ctrl-C once the goal executes, and waits for the server to report the
// goal CANCELED on the action's status topic (watched by c). Humble's CLI
// then prints "Exception while canceling goal: None": its SIGINT handler
// has shut rclpy down before the answer arrives (with rclcpp servers too).
func (d *dom) cancelWithCtrlC(c *ros.Context, action, typ, goal string) {
	d.t.Helper()
	n, err := c.NewNode("cancel_watch_"+strings.NewReplacer("/", "_").Replace(strings.Trim(action, "/")), "/test")
	if err != nil {
		d.t.Fatal(err)
	}
	canceled := make(chan string, 100)
	// Every status message, not the latest: under load a later message
	// (another goal's change, the canceled goal gone) replaced the one
	// carrying CANCELED in a keep-last-1 queue before it was taken.
	if _, err := ros.NewSubscription(n, action+"/_action/status", ros.QoSLatched.KeepLast(100),
		func(m *action_msgs_msg.GoalStatusArray) {
			for _, st := range m.StatusList {
				if st.Status == action_msgs_msg.GoalStatus_STATUS_CANCELED {
					select {
					case canceled <- fmt.Sprintf("%x", st.GoalInfo.GoalId.Uuid):
					default: // the test has what it needs, or has ended
					}
				}
			}
		}); err != nil {
		d.t.Fatal(err)
	}
	sg := d.start("ros2 action send_goal "+action, d.rosEnv(), "ros2", "action", "send_goal", "--feedback", action, typ, goal)
	id := strings.TrimPrefix(sg.waitLine("Goal accepted with ID: "), "Goal accepted with ID: ")
	// Ctrl-C only cancels once the CLI has seen the goal executing (on the
	// status topic); a few feedback messages later it has.
	sg.waitMatch("a third feedback", func(string) bool { return strings.Count(sg.output(), "Feedback:") >= 3 })
	// On a loaded machine both distros' CLIs had printed three feedbacks
	// (and Jazzy's one more second) before they took the status message:
	// Ctrl-C then ends them with exit 2 and no cancel. The goals run 20 s;
	// three more seconds are enough under make test's load.
	time.Sleep(3 * time.Second)
	sg.interrupt()
	sg.waitLine("Canceling goal...")
	timeout := time.After(deadline)
	for {
		select {
		case got := <-canceled:
			if got == id {
				sg.wait()
				return
			}
		case <-timeout:
			d.t.Fatalf("goal %s of %s never reported CANCELED on the status topic", id, action)
		}
	}
}
