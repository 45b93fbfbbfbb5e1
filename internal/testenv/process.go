package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"
)

// StopTimeout is how long a process started by Start may take to exit after
// SIGINT when its test ends, before its whole process group is killed and
// the test fails. It is a failure bound only: the launcher stops its nodes
// in a few seconds, far less on an idle machine.
const StopTimeout = 30 * time.Second

// logTail is how much of a process's output a failed test prints.
const logTail = 30000

// Process is a child process of a test, started by Start, Launch or
// LaunchDemo, with its output in a log file.
type Process struct {
	// Name labels the process in failure messages.
	Name string

	cmd     *exec.Cmd
	logPath string
	exited  chan struct{} // closed when the process has exited
	err     error         // its exit status, set before exited is closed
	stop    sync.Once
}

// Start runs path with args in its own process group, with env as its
// environment (nil: this process's) and stdout and stderr going to a log
// file. When the test ends the process gets SIGINT; the test fails if it
// has not exited within StopTimeout, or if any process of its group (a
// launcher's nodes, say) outlives it; stragglers are then killed. A failed
// test prints the tail of the log. If the test process dies without its
// cleanups, the process gets SIGINT from the kernel.
func Start(t testing.TB, name string, env []string, path string, args ...string) *Process {
	t.Helper()
	p := &Process{Name: name, logPath: filepath.Join(t.TempDir(), name+".log"), exited: make(chan struct{})}
	logFile, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(path, args...)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	// Pdeathsig: a test binary that dies without its cleanups (a panic,
	// go test's timeout, kill -9) still stops what it started, as the
	// launcher stops its nodes; else a demo could run on for hours. Only
	// unlocked threads fork here, and the Go runtime never ends those, so
	// the signal comes with the test process's death alone.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGINT}
	if err := p.cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		for _, problem := range p.Stop() {
			t.Error(problem)
		}
		if t.Failed() {
			t.Logf("%s output (tail):\n%s", name, tail(p.Output(), logTail))
		}
	})
	return p
}

// Stop ends the process as its test's end does: SIGINT, at most StopTimeout
// to exit, then a check that nothing of its process group is left (killed
// if so). It returns what went wrong, once; later calls return nothing.
func (p *Process) Stop() []string {
	var problems []string
	p.stop.Do(func() {
		pgid := p.cmd.Process.Pid
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.exited:
		case <-time.After(StopTimeout):
			problems = append(problems, fmt.Sprintf("%s did not stop within %v of SIGINT", p.Name, StopTimeout))
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-p.exited
		}
		// A launcher waits for its nodes, so nothing of its group may
		// be left once it has exited.
		if syscall.Kill(-pgid, 0) == nil {
			problems = append(problems, fmt.Sprintf("processes of %s are still running after it stopped", p.Name))
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	})
	return problems
}

// Pid is the process id (also the id of its process group).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// LogPath is the file that holds the process's stdout and stderr.
func (p *Process) LogPath() string { return p.logPath }

// Output returns everything the process has printed so far.
func (p *Process) Output() string {
	b, _ := os.ReadFile(p.logPath)
	return string(b)
}

// Exited reports whether the process has ended, and its exit status.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.exited:
		return true, p.err
	default:
		return false, nil
	}
}

// MustRun fails the test at once, with the process's output, if the process
// has exited: call it where a test relies on the process still running.
func (p *Process) MustRun(t testing.TB) {
	t.Helper()
	if done, err := p.Exited(); done {
		t.Fatalf("%s exited early (%v); output:\n%s", p.Name, err, tail(p.Output(), logTail))
	}
}

// WaitOutput waits until the output matches re and returns the submatches
// of the first match; it fails the test after timeout, or as soon as the
// process has exited without printing it.
func (p *Process) WaitOutput(t testing.TB, timeout time.Duration, re *regexp.Regexp) []string {
	t.Helper()
	var m []string
	WaitFor(t, timeout, fmt.Sprintf("%s to print %q", p.Name, re), func() bool {
		done, _ := p.Exited() // read before the output: all of it is in then
		m = re.FindStringSubmatch(p.Output())
		if m == nil && done {
			p.MustRun(t)
		}
		return m != nil
	})
	return m
}

// Launch runs `fsmnodes launch FILE args...` on the given DDS domain with
// the module's executables (built once, see ExecutableDir) and the module
// root as share directory, as Start runs a process: stopped with SIGINT
// when the test ends, failing the test if any node outlives the launcher.
// FILE is a path relative to the module root (or absolute).
func Launch(t testing.TB, domain uint32, file string, args ...string) *Process {
	t.Helper()
	Heavy(t)
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(root, file)
	}
	bin := ExecutableDir(t, "cmd/fsmnodes", "nodes/...")
	env := append(os.Environ(), fmt.Sprintf("ROS_DOMAIN_ID=%d", domain))
	argv := append([]string{"launch", file, "--bin-dir", bin, "--share-dir", root}, args...)
	return Start(t, "launch "+filepath.Base(file), env, filepath.Join(bin, "fsmnodes"), argv...)
}

// LaunchDemo is Launch of launch/demo.launch.xml, the demo `make run` starts,
// with DemoVelmaArgs before args (which may override them). Pass
// "foxglove:=false" or "foxglove_port:=0" so that parallel tests do not
// compete for the bridge's default port.
func LaunchDemo(t testing.TB, domain uint32, args ...string) *Process {
	t.Helper()
	return Launch(t, domain, "launch/demo.launch.xml", append(DemoVelmaArgs(), args...)...)
}

// DemoVelmaArgs are the demo's Velma settings for tests that are not about
// Velma: `make test` runs a dozen demos at once on two CPUs, and the
// default four processes, each waking 500 times a second under SCHED_FIFO,
// cost several times the CPU of the one-process velma_bridge; a suite full
// of them starved its other tests. These tests run velma_bridge; test/demo
// runs the default layout with DemoFourProcessArgs (and velma.launch.xml's
// four processes have tests of their own, under ros2 launch too).
func DemoVelmaArgs() []string {
	return []string{"velma_processes:=false"}
}

// DemoFourProcessArgs are the demo's Velma settings for the tests of the
// demo as `make run` starts it: the four processes under SCHED_FIFO, pinned,
// with 10 ms waits instead of the original's 2 ms, since other tests load
// the machine. The 2 ms deadline is measured by the benchmarks (make
// bench-velma, make bench-velma-demo), not asserted.
func DemoFourProcessArgs() []string {
	return []string{"velma_processes:=true", "velma_timeout:=0.01"}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
