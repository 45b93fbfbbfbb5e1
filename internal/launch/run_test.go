package launch

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// The test binary doubles as the programs the supervisor starts: with
// LAUNCH_TEST_HELPER set, TestMain runs a helper instead of the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("LAUNCH_TEST_HELPER"); mode != "" {
		os.Exit(helper(mode, os.Getenv("LAUNCH_TEST_DIR")))
	}
	if file := os.Getenv("LAUNCH_TEST_LAUNCHER"); file != "" {
		// a launcher process for TestRun_ChildrenDieWithALauncherKilledHard
		d, err := Load(file, Options{BinDir: os.Getenv("LAUNCH_TEST_BIN"), ShareDir: filepath.Dir(file),
			Args: [][2]string{{"dir", os.Getenv("LAUNCH_TEST_DIR")}}})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		_ = Run(context.Background(), d, RunOptions{})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func helper(mode, dir string) int {
	// Record the pid and the command line so the test can check both.
	pidFile := filepath.Join(dir, "pid-"+strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(pidFile+".tmp", []byte(mode+"\n"+strings.Join(os.Args[1:], " ")), 0o644); err != nil {
		return 10
	}
	_ = os.Rename(pidFile+".tmp", pidFile)
	sigs := make(chan os.Signal, 1)
	switch mode {
	case "sleep":
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	case "stubborn":
		signal.Ignore(syscall.SIGINT)
		signal.Notify(sigs, syscall.SIGTERM)
	case "immortal":
		signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
	case "parent":
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), "LAUNCH_TEST_HELPER=immortal")
		if err := child.Start(); err != nil {
			return 11
		}
		signal.Notify(sigs, syscall.SIGINT)
	case "crash":
		fmt.Println("crashing")
		return 3
	default:
		return 12
	}
	fmt.Println("ready")
	fmt.Fprintln(os.Stderr, "to stderr")
	if mode == "immortal" {
		for { // only SIGKILL ends it
			time.Sleep(time.Hour)
		}
	}
	<-sigs
	return 0
}

// helperBin makes a bin directory whose executables run the test binary.
func helperBin(t *testing.T, names ...string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, n := range names {
		script := "#!/bin/sh\nexec '" + self + "' \"$@\"\n"
		if err := os.WriteFile(filepath.Join(dir, n), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// syncBuffer is a bytes.Buffer safe for the supervisor's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// alive reports whether pid runs (a zombie counts as gone).
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// pids lists the pid files the helpers wrote.
func pids(t *testing.T, dir string) map[int]string {
	t.Helper()
	out := map[int]string{}
	matches, _ := filepath.Glob(filepath.Join(dir, "pid-*"))
	for _, m := range matches {
		if strings.HasSuffix(m, ".tmp") {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(m), "pid-"))
		if err != nil {
			continue
		}
		data, _ := os.ReadFile(m)
		out[pid] = string(data)
	}
	return out
}

func writeLaunch(t *testing.T, body string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "test.launch.xml")
	if err := os.WriteFile(f, []byte("<launch>\n"+body+"\n</launch>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func load(t *testing.T, file, bin, dir string) *Description {
	t.Helper()
	d, err := Load(file, Options{BinDir: bin, ShareDir: filepath.Dir(file),
		Args: [][2]string{{"dir", dir}}, LookupEnv: env("PATH", os.Getenv("PATH"))})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestRun_SIGINTStopsEveryProcess(t *testing.T) {
	bin := helperBin(t, "sleeper", "stubborn", "immortal", "parent")
	dir := t.TempDir()
	file := writeLaunch(t, `<arg name="dir"/>
<set_env name="LAUNCH_TEST_DIR" value="$(var dir)"/>
<node pkg="fsmnodes" exec="sleeper" name="s1" namespace="ns" output="screen">
  <env name="LAUNCH_TEST_HELPER" value="sleep"/>
  <param name="rate" value="2.5"/>
</node>
<node pkg="fsmnodes" exec="sleeper" name="s2"><env name="LAUNCH_TEST_HELPER" value="sleep"/></node>
<node pkg="fsmnodes" exec="stubborn" sigterm_timeout="0.3"><env name="LAUNCH_TEST_HELPER" value="stubborn"/></node>
<node pkg="fsmnodes" exec="immortal" sigterm_timeout="0.2" sigkill_timeout="0.2"><env name="LAUNCH_TEST_HELPER" value="immortal"/></node>
<node pkg="fsmnodes" exec="parent"><env name="LAUNCH_TEST_HELPER" value="parent"/></node>`)
	d := load(t, file, bin, dir)
	var stdout, stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, d, RunOptions{Stdout: &stdout, Stderr: &stderr}) }()

	// five processes plus the parent's child
	testenv.WaitFor(t, 30*time.Second, "six helper processes", func() bool { return len(pids(t, dir)) == 6 })
	testenv.WaitFor(t, 30*time.Second, "the screen output of s1", func() bool { return strings.Contains(stdout.String(), "[sleeper-1] ready") })
	cancel() // what Ctrl-C does in the CLI
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	for pid, what := range pids(t, dir) {
		if alive(pid) {
			t.Errorf("process %d (%s) is still running", pid, strings.SplitN(what, "\n", 2)[0])
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	out, errs := stdout.String(), stderr.String()
	if strings.Contains(out, "[sleeper-2] ready") {
		t.Errorf("stdout of an output=log node reached the screen:\n%s", out)
	}
	for _, want := range []string{
		"[sleeper-2] to stderr",
		"[INFO] [sleeper-1]: process started with pid [",
		"[INFO] [sleeper-1]: process has finished cleanly [pid ",
		"[ERROR] [stubborn-3]: process[stubborn-3] failed to terminate '0.3' seconds after receiving 'SIGINT', escalating to 'SIGTERM'",
		"[ERROR] [immortal-4]: process[immortal-4] failed to terminate '0.2' seconds after receiving 'SIGTERM', escalating to 'SIGKILL'",
		"[ERROR] [immortal-4]: process has died [pid ",
		"exit code -9, cmd '" + bin + "/immortal --ros-args'].",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	// The command line the node saw.
	for _, what := range pids(t, dir) {
		if strings.HasPrefix(what, "sleep\n--ros-args -r __node:=s1") {
			if !strings.HasPrefix(what, "sleep\n--ros-args -r __node:=s1 -r __ns:=/ns --params-file ") {
				t.Errorf("s1 argv: %q", what)
			}
		}
	}
}

func TestRun_RespawnUntilRetriesRunOut(t *testing.T) {
	bin := helperBin(t, "crasher")
	dir := t.TempDir()
	file := writeLaunch(t, `<arg name="dir"/>
<node pkg="fsmnodes" exec="crasher" respawn="true" respawn_max_retries="2" output="screen">
  <env name="LAUNCH_TEST_HELPER" value="crash"/><env name="LAUNCH_TEST_DIR" value="$(var dir)"/>
</node>`)
	d := load(t, file, bin, dir)
	var stdout, stderr syncBuffer
	if err := Run(context.Background(), d, RunOptions{Stdout: &stdout, Stderr: &stderr}); err != nil {
		t.Fatal(err)
	}
	if n := len(pids(t, dir)); n != 3 {
		t.Errorf("crasher ran %d times, want 3 (first run + 2 respawns)", n)
	}
	if n := strings.Count(stdout.String(), "[crasher-1] crashing\n"); n != 3 {
		t.Errorf("stdout has %d crash lines, want 3:\n%s", n, stdout.String())
	}
	if n := strings.Count(stderr.String(), "exit code 3, cmd '"+bin+"/crasher --ros-args']."); n != 3 {
		t.Errorf("stderr has %d death reports, want 3:\n%s", n, stderr.String())
	}
}

func TestRun_OnExitShutdownStopsTheRest(t *testing.T) {
	bin := helperBin(t, "crasher", "sleeper")
	dir := t.TempDir()
	file := writeLaunch(t, `<arg name="dir"/>
<set_env name="LAUNCH_TEST_DIR" value="$(var dir)"/>
<node pkg="fsmnodes" exec="sleeper"><env name="LAUNCH_TEST_HELPER" value="sleep"/></node>
<executable cmd="sh -c 'while [ ! -e $(var dir)/go ]; do sleep 0.05; done'" on_exit="shutdown"/>`)
	d := load(t, file, bin, dir)
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), d, RunOptions{}) }()
	testenv.WaitFor(t, 30*time.Second, "the sleeper", func() bool { return len(pids(t, dir)) == 1 })
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after the on_exit=shutdown process ended")
	}
	for pid := range pids(t, dir) {
		if alive(pid) {
			t.Errorf("sleeper %d still running", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func TestRun_StartFailureIsReported(t *testing.T) {
	p := &Process{Kind: KindExecutable, Label: "ghost-1", Path: "/nonexistent/ghost", Output: "screen"}
	var stderr syncBuffer
	if err := Run(context.Background(), &Description{Processes: []*Process{p}}, RunOptions{Stderr: &stderr}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), `[ERROR] [ghost-1]: failed to start "/nonexistent/ghost"`) {
		t.Errorf("stderr: %s", stderr.String())
	}
}

func TestRun_KillSkipsTheGracePeriods(t *testing.T) {
	bin := helperBin(t, "immortal")
	dir := t.TempDir()
	file := writeLaunch(t, `<arg name="dir"/>
<node pkg="fsmnodes" exec="immortal" sigterm_timeout="1000" sigkill_timeout="1000">
  <env name="LAUNCH_TEST_HELPER" value="immortal"/><env name="LAUNCH_TEST_DIR" value="$(var dir)"/>
</node>`)
	d := load(t, file, bin, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kill := make(chan struct{})
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- Run(ctx, d, RunOptions{Stderr: &stderr, Kill: kill}) }()
	testenv.WaitFor(t, 30*time.Second, "the immortal helper", func() bool { return len(pids(t, dir)) == 1 })
	cancel()
	testenv.WaitFor(t, 30*time.Second, "the SIGINT to be ignored", func() bool { return strings.Contains(stderr.String(), "user interrupted") })
	close(kill)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after Kill although the grace periods are 1000 s")
	}
	for pid := range pids(t, dir) {
		if alive(pid) {
			t.Errorf("helper %d still running", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if !strings.Contains(stderr.String(), "[WARNING] [immortal-1]: killing process[immortal-1] (SIGKILL) on a second interrupt") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

func TestRun_ChildrenDieWithALauncherKilledHard(t *testing.T) {
	bin := helperBin(t, "sleeper")
	dir := t.TempDir()
	file := writeLaunch(t, `<arg name="dir"/>
<node pkg="fsmnodes" exec="sleeper"><env name="LAUNCH_TEST_HELPER" value="sleep"/><env name="LAUNCH_TEST_DIR" value="$(var dir)"/></node>`)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	launcher := exec.Command(self)
	launcher.Env = append(os.Environ(), "LAUNCH_TEST_LAUNCHER="+file, "LAUNCH_TEST_BIN="+bin, "LAUNCH_TEST_DIR="+dir)
	if err := launcher.Start(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "the sleeper", func() bool { return len(pids(t, dir)) == 1 })
	if err := launcher.Process.Kill(); err != nil { // SIGKILL: no chance to stop anything
		t.Fatal(err)
	}
	_ = launcher.Wait()
	for pid := range pids(t, dir) {
		t.Cleanup(func() {
			if alive(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		})
		testenv.WaitFor(t, 30*time.Second, "the orphaned sleeper to get SIGTERM and exit", func() bool { return !alive(pid) })
	}
}
