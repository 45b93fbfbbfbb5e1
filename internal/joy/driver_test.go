package joy

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/testenv"
)

// logRec records log lines.
type logRec struct {
	mu    sync.Mutex
	lines []string
}

func (l *logRec) add(level, format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, level+" "+fmt.Sprintf(format, args...))
}
func (l *logRec) Infof(f string, a ...any)  { l.add("INFO", f, a...) }
func (l *logRec) Warnf(f string, a ...any)  { l.add("WARN", f, a...) }
func (l *logRec) Errorf(f string, a ...any) { l.add("ERROR", f, a...) }

// count returns how many lines contain s.
func (l *logRec) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

func (l *logRec) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// published records what the driver publishes.
type published struct {
	mu     sync.Mutex
	states []State
	at     []time.Time
}

func (p *published) add(s State) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.states = append(p.states, s)
	p.at = append(p.at, time.Now())
}

func (p *published) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.states)
}

// find returns the index of the first state from index i on that satisfies
// ok, or -1.
func (p *published) find(i int, ok func(State) bool) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for ; i < len(p.states); i++ {
		if ok(p.states[i]) {
			return i
		}
	}
	return -1
}

func (p *published) get(i int) (State, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.states[i], p.at[i]
}

// fakeJoystick is a FIFO standing in for /dev/input/jsN. It appears at its
// path with a writer already attached (made aside and renamed into place),
// so the driver never sees a FIFO without a writer.
type fakeJoystick struct {
	path string
	w    *os.File
}

func plug(t *testing.T, path string) *fakeJoystick {
	t.Helper()
	tmp := path + ".new"
	if err := syscall.Mkfifo(tmp, 0o600); err != nil {
		t.Fatal(err)
	}
	// O_RDWR never blocks on a FIFO.
	w, err := os.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	f := &fakeJoystick{path: path, w: w}
	t.Cleanup(func() { f.w.Close() })
	return f
}

func (f *fakeJoystick) send(t *testing.T, events ...Event) {
	t.Helper()
	var b []byte
	for _, e := range events {
		b = append(b, e.Encode()...)
	}
	if _, err := f.w.Write(b); err != nil {
		t.Fatal(err)
	}
}

// unplug removes the device node and closes the writer: the driver reads
// end of file, and reopening fails until the next plug.
func (f *fakeJoystick) unplug(t *testing.T) {
	t.Helper()
	if err := os.Remove(f.path); err != nil {
		t.Fatal(err)
	}
	f.w.Close()
}

func runDriver(t *testing.T, d *Driver) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Error("Run did not return within 10 s of cancel")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// initEvents is what the kernel sends on open: the state of 2 buttons and
// 2 axes, all at rest.
var initEvents = []Event{
	{Type: EventButton | EventInit, Number: 0}, {Type: EventButton | EventInit, Number: 1},
	{Type: EventAxis | EventInit, Number: 0}, {Type: EventAxis | EventInit, Number: 1},
}

// TestDriver_MissingDeviceUnplugReplug: a missing device is reported once
// however long it stays missing; when it appears it is opened and its
// state published; unplugging is reported, the outage reported once, and
// after replugging the state starts from scratch.
func TestDriver_MissingDeviceUnplugReplug(t *testing.T) {
	path := filepath.Join(t.TempDir(), "js0")
	log, pub := &logRec{}, &published{}
	cfg := DefaultConfig()
	cfg.AutorepeatRate = 0
	stop := runDriver(t, &Driver{Config: cfg, Dev: path, Retry: 20 * time.Millisecond, Publish: pub.add, Log: log})

	testenv.WaitFor(t, 30*time.Second, "the missing-device error", func() bool { return log.count("Couldn't open joystick") == 1 })
	time.Sleep(200 * time.Millisecond) // about ten more attempts while missing
	if n := log.count("Couldn't open joystick"); n != 1 {
		t.Fatalf("missing device logged %d times, want once:\n%s", n, log)
	}
	if !strings.Contains(log.String(), "js0: no such file or directory. Will retry every 20ms.") {
		t.Errorf("the error does not name the device, the reason and the retry:\n%s", log)
	}

	js := plug(t, path)
	testenv.WaitFor(t, 30*time.Second, "the device to be opened", func() bool { return log.count("Opened joystick: "+path) == 1 })
	js.send(t, initEvents...)
	testenv.WaitFor(t, 30*time.Second, "the initial state", func() bool {
		return pub.find(0, func(s State) bool { return len(s.Axes) == 2 && len(s.Buttons) == 2 }) >= 0
	})
	mark := pub.len()
	js.send(t, Event{Type: EventButton, Number: 1, Value: 1}, Event{Type: EventAxis, Number: 0, Value: -32767})
	testenv.WaitFor(t, 30*time.Second, "button 1 and axis 0", func() bool {
		return pub.find(mark, func(s State) bool {
			return reflect.DeepEqual(s, State{Axes: []float32{1, 0}, Buttons: []int32{0, 1}})
		}) >= 0
	})
	if pub.len() == 0 {
		t.Fatal("nothing published")
	}

	js.unplug(t)
	testenv.WaitFor(t, 30*time.Second, "the loss to be logged", func() bool { return log.count("lost unexpectedly") == 1 })
	testenv.WaitFor(t, 30*time.Second, "the new outage to be logged", func() bool { return log.count("Couldn't open joystick") == 2 })
	time.Sleep(100 * time.Millisecond)
	if n := log.count("Couldn't open joystick"); n != 2 {
		t.Fatalf("second outage logged %d times, want once:\n%s", n-1, log)
	}

	js = plug(t, path)
	testenv.WaitFor(t, 30*time.Second, "the device to be reopened", func() bool { return log.count("Opened joystick: "+path) == 2 })
	mark = pub.len()
	js.send(t, Event{Type: EventAxis | EventInit, Number: 0})
	// The state after replugging has only what the new device reported:
	// button 1 and axis 0 of before are gone.
	testenv.WaitFor(t, 30*time.Second, "the fresh state", func() bool {
		return pub.find(mark, func(s State) bool { return reflect.DeepEqual(s, State{Axes: []float32{0}}) }) >= 0
	})
	stop()
}

// TestDriver_DeviceEndingAtOnce: a device that opens but ends at once (a
// FIFO whose writer left, the path still there) is reopened every retry
// period, not in a busy loop, and the repeats are not logged.
func TestDriver_DeviceEndingAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "js0")
	log, pub := &logRec{}, &published{}
	js := plug(t, path)
	js.send(t, initEvents...)
	const retry = 50 * time.Millisecond
	runDriver(t, &Driver{Config: DefaultConfig(), Dev: path, Retry: retry, Publish: pub.add, Log: log})
	testenv.WaitFor(t, 30*time.Second, "the device to be opened", func() bool { return log.count("Opened joystick: "+path) == 1 })
	js.w.Close() // the writer leaves; the FIFO stays
	testenv.WaitFor(t, 30*time.Second, "the loss to be logged", func() bool { return log.count("lost unexpectedly") >= 1 })
	start := time.Now()
	time.Sleep(500 * time.Millisecond) // ten retry periods, the span being measured
	opens := log.count("Opened joystick: " + path)
	// At most one open per retry period (plus the first, immediate one,
	// and slack for a late clock); the busy loop made thousands.
	if max := 2 + int(time.Since(start)/retry); opens > max {
		t.Errorf("%d opens in %v with a %v retry period, want at most %d:\n%.2000s", opens, time.Since(start), retry, max, log)
	}
	if n := log.count("lost unexpectedly"); n > 2 {
		t.Errorf("the loss was logged %d times, want at most twice:\n%.2000s", n, log)
	}
	if n := log.count("keeps ending as soon as it is opened"); n != 1 {
		t.Errorf("the repeated loss was summarised %d times, want once:\n%.2000s", n, log)
	}
}

// TestDriver_CoalesceAndAutorepeat: axis events within the coalesce
// interval go out in one message, and a held stick is republished at the
// autorepeat rate while nothing changes.
func TestDriver_CoalesceAndAutorepeat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "js0")
	js := plug(t, path)
	log, pub := &logRec{}, &published{}
	cfg := Config{Deadzone: 0.3, AutorepeatRate: 20, CoalesceInterval: 300 * time.Millisecond}
	runDriver(t, &Driver{Config: cfg, Dev: path, Publish: pub.add, Log: log})
	testenv.WaitFor(t, 30*time.Second, "the device to be opened", func() bool { return log.count("Opened joystick") == 1 })

	js.send(t, Event{Type: EventAxis, Number: 0, Value: 32767})
	time.Sleep(20 * time.Millisecond)
	js.send(t, Event{Type: EventAxis, Number: 1, Value: -32767})
	first := -1
	testenv.WaitFor(t, 30*time.Second, "a message with a moved axis", func() bool {
		first = pub.find(0, func(s State) bool { return len(s.Axes) > 0 })
		return first >= 0
	})
	if s, _ := pub.get(first); !reflect.DeepEqual(s.Axes, []float32{-1, 1}) {
		t.Fatalf("first message with axes %v: the two axis events were not coalesced", s.Axes)
	}
	// Held: count the repeats over a second.
	_, t0 := pub.get(first)
	testenv.WaitFor(t, 30*time.Second, "a second of republished state", func() bool {
		_, last := pub.get(pub.len() - 1)
		return last.Sub(t0) >= time.Second
	})
	n := pub.len() - first - 1
	for i := first; i < pub.len(); i++ {
		if s, _ := pub.get(i); !reflect.DeepEqual(s.Axes, []float32{-1, 1}) {
			t.Fatalf("repeat %d changed the state: %+v", i-first, s)
		}
	}
	_, last := pub.get(pub.len() - 1)
	t.Logf("%d repeats in %v at autorepeat_rate 20 Hz", n, last.Sub(t0).Round(time.Millisecond))
	if n < 5 {
		t.Fatalf("only %d repeats in a second at 20 Hz", n)
	}
	if math.Abs(float64(n)-20) > 15 {
		t.Logf("note: repeat count far from 20 (loaded machine?)")
	}
}

func TestDriver_BadConfig(t *testing.T) {
	d := &Driver{Config: Config{Deadzone: math.NaN()}, Dev: "/nonexistent", Publish: func(State) {}, Log: &logRec{}}
	if err := d.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "deadzone") {
		t.Fatalf("NaN deadzone: %v", err)
	}
	d = &Driver{Config: DefaultConfig(), Dev: "/nonexistent", Log: &logRec{}}
	if err := d.Run(context.Background()); err == nil {
		t.Fatal("no Publish accepted")
	}
	log := &logRec{}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d = &Driver{Config: Config{Deadzone: 2, AutorepeatRate: 20, CoalesceInterval: time.Millisecond}, Dev: "/nonexistent",
		Publish: func(State) {}, Log: log}
	if err := d.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if log.count("raw axis units") != 1 {
		t.Fatalf("deadzone correction not logged:\n%s", log)
	}
}

func TestFindByName(t *testing.T) {
	dir := t.TempDir()
	// js0: a FIFO (not a character device) is skipped; js1 and js2 link
	// to a character device, as udev's links do; event0 is no joystick.
	if err := syscall.Mkfifo(filepath.Join(dir, "js0"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"js1", "js2", "event0"} {
		if err := os.Symlink("/dev/null", filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	names := map[string]string{"js1": "ST LIS3LV02DL Accelerometer", "js2": "Microsoft X-Box 360 pad"}
	d := &Driver{InputDir: dir, nameOf: func(p string) (string, error) {
		if n, ok := names[filepath.Base(p)]; ok {
			return n, nil
		}
		return "", fmt.Errorf("no name for %s", p)
	}}
	d.DevName = "X-Box"
	if p, _, err := d.findByName(); err != nil || p != filepath.Join(dir, "js2") {
		t.Fatalf("X-Box: %q, %v", p, err)
	}
	d.DevName = "PLAYSTATION"
	p, found, err := d.findByName()
	if err != nil || p != "" {
		t.Fatalf("PLAYSTATION: %q, %v", p, err)
	}
	if want := "ST LIS3LV02DL Accelerometer (" + filepath.Join(dir, "js1") + "), Microsoft X-Box 360 pad (" +
		filepath.Join(dir, "js2") + ")"; found != want {
		t.Fatalf("found %q, want %q", found, want)
	}
	// The real name reader on a device that is no joystick fails cleanly.
	if _, err := deviceName("/dev/null"); err == nil {
		t.Fatal("/dev/null reported a joystick name")
	}
	if got := jsiocgname(128); got != 0x80806a13 {
		t.Fatalf("JSIOCGNAME(128) = %#x, want 0x80806a13", got)
	}
	// The driver names the joysticks it saw when none matches.
	log := &logRec{}
	d = &Driver{Config: DefaultConfig(), DevName: "PLAYSTATION", InputDir: t.TempDir(), Publish: func(State) {}, Log: log}
	stop := runDriver(t, d)
	testenv.WaitFor(t, 30*time.Second, "the no-match error", func() bool { return log.count(`no joystick name contains "PLAYSTATION" (found: none)`) == 1 })
	stop()
}
