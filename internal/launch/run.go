package launch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// RunOptions configure Run. The zero value writes to nothing and uses the
// launcher's own environment.
type RunOptions struct {
	// (optional) Stdout receives the prefixed standard output of processes
	// whose output is "screen" or "both". Default: discarded.
	Stdout io.Writer
	// (optional) Stderr receives the prefixed standard error of every
	// process and the launcher's own messages. Default: discarded.
	Stderr io.Writer
	// (optional) Env is the base environment; default os.Environ().
	Env []string
	// (optional) TempDir receives the inline parameter files. Default: a new
	// temporary directory, removed when Run returns.
	TempDir string
	// (optional) LogDir receives "<label>.log" with the standard output of
	// processes whose output is "log" or "both". Default: not written.
	LogDir string
	// (optional) Kill, when closed during shutdown, skips the remaining
	// grace periods and sends SIGKILL at once (a second Ctrl-C).
	Kill <-chan struct{}
}

// lockedWriter serializes whole lines from many processes.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) line(s string) {
	if l == nil || l.w == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = io.WriteString(l.w, s+"\n")
}

type runner struct {
	opts     RunOptions
	out, err *lockedWriter
	tmp      string
	stop     chan struct{} // closed when the launch shuts down
	stopOnce sync.Once
}

func (r *runner) shutdown() { r.stopOnce.Do(func() { close(r.stop) }) }

func (r *runner) logf(level, who, format string, args ...any) {
	r.err.line(fmt.Sprintf("[%s] [%s]: %s", level, who, fmt.Sprintf(format, args...)))
}

// Run starts every process of d and supervises them until ctx is cancelled
// (then it stops them all), a process with on_exit="shutdown" exits, or
// every process has exited and none will respawn. It returns when no
// process it started is still running.
func Run(ctx context.Context, d *Description, opts RunOptions) error {
	r := &runner{opts: opts, out: &lockedWriter{w: opts.Stdout}, err: &lockedWriter{w: opts.Stderr},
		stop: make(chan struct{})}
	if r.opts.Env == nil {
		r.opts.Env = os.Environ()
	}
	r.tmp = opts.TempDir
	if r.tmp == "" {
		dir, err := os.MkdirTemp("", "fsmnodes-launch-")
		if err != nil {
			return fmt.Errorf("launch: temporary directory: %w", err)
		}
		defer os.RemoveAll(dir)
		r.tmp = dir
	}
	if opts.LogDir != "" {
		if err := os.MkdirAll(opts.LogDir, 0o755); err != nil {
			return fmt.Errorf("launch: log directory: %w", err)
		}
		r.logf("INFO", "launch", "All log files can be found below %s", opts.LogDir)
	}
	for _, m := range d.Logs {
		r.logf("INFO", "launch.user", "%s", m)
	}
	var wg sync.WaitGroup
	for _, p := range d.Processes {
		wg.Add(1)
		go func(p *Process) {
			defer wg.Done()
			r.supervise(p)
		}(p)
	}
	all := make(chan struct{})
	go func() { wg.Wait(); close(all) }()
	select {
	case <-ctx.Done():
		r.logf("WARNING", "launch", "user interrupted with ctrl-c (SIGINT)")
		r.shutdown()
		<-all
	case <-r.stop:
		<-all
	case <-all:
	}
	r.shutdown()
	return nil
}

// supervise runs p until it ends for good, respawning it if asked to.
func (r *runner) supervise(p *Process) {
	retries := 0
	for {
		select {
		case <-r.stop:
			return
		default:
		}
		code, started := r.runOnce(p)
		stopping := false
		select {
		case <-r.stop:
			stopping = true
		default:
		}
		if !started || stopping {
			return
		}
		if p.ShutdownOnExit {
			r.logf("INFO", "launch", "process %s exited; on_exit=shutdown stops the launch", p.Label)
			r.shutdown()
			return
		}
		if !p.Respawn || (p.RespawnMaxRetries >= 0 && retries >= p.RespawnMaxRetries) {
			return
		}
		retries++
		_ = code
		t := time.NewTimer(p.RespawnDelay)
		select {
		case <-r.stop:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// runOnce starts p, waits for it to exit (stopping it if the launch shuts
// down meanwhile) and returns its exit code. started is false when the
// process could not be started.
func (r *runner) runOnce(p *Process) (code int, started bool) {
	argv, err := p.Command(r.tmp)
	if err != nil {
		r.logf("ERROR", p.Label, "%v", err)
		return -1, false
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = p.Environ(r.opts.Env)
	cmd.Dir = p.Cwd
	// Own process group (signals go to the whole group); SIGTERM if the
	// launcher itself dies without stopping its children.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	outR, outW, err := os.Pipe()
	if err != nil {
		r.logf("ERROR", p.Label, "pipe: %v", err)
		return -1, false
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		r.logf("ERROR", p.Label, "pipe: %v", err)
		return -1, false
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	startErr := cmd.Start()
	outW.Close()
	errW.Close()
	if startErr != nil {
		outR.Close()
		errR.Close()
		r.logf("ERROR", p.Label, "failed to start %q: %v", argv[0], startErr)
		return -1, false
	}
	pid := cmd.Process.Pid
	r.logf("INFO", p.Label, "process started with pid [%d]", pid)

	var readers sync.WaitGroup
	readers.Add(2)
	outSink, closeLog := r.stdoutSink(p)
	defer closeLog()
	go func() { defer readers.Done(); pump(outR, p.Label, outSink) }()
	go func() { defer readers.Done(); pump(errR, p.Label, r.err.line) }()

	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-r.stop:
		werr = r.terminate(p, pid, done)
	}
	// Nothing of the process group may outlive its leader.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	waitReaders(&readers, outR, errR)

	code = exitCode(werr)
	if code == 0 {
		r.logf("INFO", p.Label, "process has finished cleanly [pid %d]", pid)
	} else {
		r.logf("ERROR", p.Label, "process has died [pid %d, exit code %d, cmd '%s'].", pid, code, strings.Join(argv, " "))
	}
	return code, true
}

// terminate stops a running process group: SIGINT, then SIGTERM after
// p.SigtermTimeout, then SIGKILL after p.SigkillTimeout.
func (r *runner) terminate(p *Process, pid int, done <-chan error) error {
	_ = syscall.Kill(-pid, syscall.SIGINT)
	t := time.NewTimer(p.SigtermTimeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
	case <-r.opts.Kill:
		return r.kill(p, pid, done)
	}
	r.logf("ERROR", p.Label, "process[%s] failed to terminate '%g' seconds after receiving 'SIGINT', escalating to 'SIGTERM'",
		p.Label, p.SigtermTimeout.Seconds())
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	t.Reset(p.SigkillTimeout)
	select {
	case err := <-done:
		return err
	case <-t.C:
	case <-r.opts.Kill:
		return r.kill(p, pid, done)
	}
	r.logf("ERROR", p.Label, "process[%s] failed to terminate '%g' seconds after receiving 'SIGTERM', escalating to 'SIGKILL'",
		p.Label, p.SigkillTimeout.Seconds())
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	return <-done
}

// kill ends a process group at once after a second interrupt.
func (r *runner) kill(p *Process, pid int, done <-chan error) error {
	r.logf("WARNING", p.Label, "killing process[%s] (SIGKILL) on a second interrupt", p.Label)
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	return <-done
}

// waitReaders waits for the output pumps; if a stray process still holds a
// pipe open after a grace second, the read ends are closed.
func waitReaders(wg *sync.WaitGroup, files ...*os.File) {
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(time.Second):
	}
	for _, f := range files {
		f.Close()
	}
	<-ch
}

// stdoutSink returns where the standard output lines of p go, and a
// function closing its log file.
func (r *runner) stdoutSink(p *Process) (func(string), func()) {
	var file *os.File
	if r.opts.LogDir != "" && (p.Output == "log" || p.Output == "both") {
		f, err := os.OpenFile(filepath.Join(r.opts.LogDir, p.Label+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			r.logf("WARNING", p.Label, "log file: %v", err)
		} else {
			file = f
		}
	}
	var mu sync.Mutex
	toScreen := p.Output == "screen" || p.Output == "both"
	sink := func(line string) {
		if toScreen {
			r.out.line(line)
		}
		if file != nil {
			mu.Lock()
			_, _ = io.WriteString(file, line+"\n")
			mu.Unlock()
		}
	}
	return sink, func() {
		if file != nil {
			file.Close()
		}
	}
}

// pump reads lines from f and hands each to sink with the "[label] " prefix.
func pump(f *os.File, label string, sink func(string)) {
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		sink("[" + label + "] " + sc.Text())
	}
	if err := sc.Err(); err != nil && !errors.Is(err, os.ErrClosed) {
		sink("[" + label + "] (output lost: " + err.Error() + ")")
	}
}

// exitCode turns a Wait error into ros2 launch's exit code: the status, or
// minus the signal number when a signal ended the process.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return -1
}
