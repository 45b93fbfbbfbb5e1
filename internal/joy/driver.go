package joy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// Scheduler decides when the joystick state is published, as joy_linux
// does: at once after a button event, CoalesceInterval after the first of
// a run of axis (or initial-state) events so that they go out in one
// message, and, with autorepeat on, again 1/AutorepeatRate after the last
// message while nothing changes. It holds no clock; callers pass the time.
type Scheduler struct {
	coalesce time.Duration
	repeat   time.Duration // 0: no autorepeat
	pending  bool
	due      time.Time
	last     time.Time
}

// NewScheduler returns a scheduler for the coalesce interval and
// autorepeat rate of cfg (which should be sanitized).
func NewScheduler(cfg Config) *Scheduler {
	s := &Scheduler{coalesce: max(cfg.CoalesceInterval, 0)}
	if cfg.AutorepeatRate > 0 {
		s.repeat = time.Duration(float64(time.Second) / cfg.AutorepeatRate)
	}
	return s
}

// Reset starts over at now, when the device was (re)opened: nothing is
// pending and the autorepeat period starts.
func (s *Scheduler) Reset(now time.Time) {
	s.pending, s.last = false, now
}

// Event records an event of urgency u that arrived at now.
func (s *Scheduler) Event(u Urgency, now time.Time) {
	switch u {
	case Now:
		s.pending, s.due = true, now
	case Soon:
		if !s.pending {
			s.pending, s.due = true, now.Add(s.coalesce)
		}
	}
}

// Next returns when the next message is due; ok is false when none is
// (nothing pending and no autorepeat).
func (s *Scheduler) Next() (t time.Time, ok bool) {
	switch {
	case s.pending:
		return s.due, true
	case s.repeat > 0:
		return s.last.Add(s.repeat), true
	}
	return time.Time{}, false
}

// Due reports whether a message is due at now.
func (s *Scheduler) Due(now time.Time) bool {
	t, ok := s.Next()
	return ok && !now.Before(t)
}

// Published records that the state was published at now.
func (s *Scheduler) Published(now time.Time) {
	s.pending, s.last = false, now
}

// Logger is what the driver logs through (the node's logger).
type Logger interface {
	Infof(format string, args ...any)
	Warnf(format string, args ...any)
	Errorf(format string, args ...any)
}

// DefaultRetry is how often a missing device is looked for again, as
// joy_linux does.
const DefaultRetry = time.Second

// Driver runs one joystick: it opens the device, publishes its state as
// the Scheduler says, and when the device is missing or goes away (an
// unplugged pad) it says so once and tries again every Retry, starting
// from an empty state when the device is back, as joy_linux does.
type Driver struct {
	Config Config
	// Dev is the device path (parameter dev, /dev/input/js0).
	Dev string
	// DevName, when not empty, selects the first joystick under InputDir
	// whose name (JSIOCGNAME) contains it instead of Dev (dev_name).
	DevName string
	// InputDir is where joysticks js* are enumerated for DevName
	// (/dev/input when empty).
	InputDir string
	// Retry is the retry period for a missing device (DefaultRetry when 0).
	Retry time.Duration
	// Publish is called with each state to publish, on the Run goroutine.
	Publish func(State)
	Log     Logger

	// nameOf reads a device's joystick name; tests replace it.
	nameOf func(path string) (string, error)
}

// Run drives the joystick until ctx ends; it returns an error only for an
// unusable configuration.
func (d *Driver) Run(ctx context.Context) error {
	cfg, warnings, err := d.Config.Sanitize()
	if err != nil {
		return err
	}
	for _, w := range warnings {
		d.Log.Warnf("%s", w)
	}
	if d.Publish == nil {
		return errors.New("joy: driver has no Publish function")
	}
	dev, err := NewDevice(cfg)
	if err != nil {
		return err
	}
	retry := d.Retry
	if retry <= 0 {
		retry = DefaultRetry
	}
	sched := NewScheduler(cfg)
	reported := false // the current outage has been logged
	quickLosses := 0  // losses in a row of a device that ended at once
	wait := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = retry
		path, f, err := d.open()
		if err != nil {
			if !reported {
				d.Log.Errorf("Couldn't open joystick: %v. Will retry every %v.", err, retry)
				reported = true
			}
			continue
		}
		reported = false
		d.Log.Infof("Opened joystick: %s. deadzone: %g, autorepeat_rate: %g Hz, coalesce_interval: %g s.",
			path, cfg.Deadzone, cfg.AutorepeatRate, cfg.CoalesceInterval.Seconds())
		dev.Reset()
		dropped := dev.Dropped
		opened := time.Now()
		sched.Reset(opened)
		err = d.serve(ctx, f, dev, sched)
		f.Close()
		if ctx.Err() != nil {
			return nil
		}
		if n := dev.Dropped - dropped; n > 0 {
			d.Log.Warnf("%d malformed joystick events were dropped", n)
		}
		// As joy_linux: the first attempt after a loss is immediate. A
		// device that opens but ends at once (a FIFO whose writer left, a
		// plain file) would make that a busy loop flooding the log: once
		// a connection lasted less than the retry period, the next attempt
		// waits for it, and the repeats of the loss are not logged.
		if time.Since(opened) < retry {
			quickLosses++
			wait = retry
		} else {
			quickLosses = 0
			wait = 0
		}
		switch quickLosses {
		case 0, 1:
			d.Log.Errorf("Connection to joystick device %s lost unexpectedly (%v). Will reopen.", path, err)
		case 2:
			d.Log.Errorf("Joystick device %s keeps ending as soon as it is opened; reopening it every %v (not logged again).", path, retry)
		}
	}
}

// open finds and opens the device. It opens it twice, as joy_linux does:
// some drivers report the state of the previous close in the initial
// events of the first open.
func (d *Driver) open() (string, *os.File, error) {
	path := d.Dev
	if d.DevName != "" {
		p, found, err := d.findByName()
		if err != nil {
			return "", nil, err
		}
		if p == "" {
			return "", nil, fmt.Errorf("no joystick name contains %q (found: %s)", d.DevName, found)
		}
		path = p
	}
	if path == "" {
		return "", nil, errors.New("no device given (parameter dev is empty)")
	}
	// O_NONBLOCK: opening never blocks (a FIFO without a writer), and the
	// reads go through the runtime poller so Close interrupts them.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err == nil {
		f.Close()
		f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	}
	if err != nil {
		return "", nil, fmt.Errorf("%s: %v", path, unwrapPath(err))
	}
	return path, f, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// serve reads events from f and publishes until reading fails or ctx ends.
func (d *Driver) serve(ctx context.Context, f *os.File, dev *Device, sched *Scheduler) error {
	done := make(chan struct{})
	events := make(chan Event, 64)
	errc := make(chan error, 1)
	go func() {
		errc <- ReadEvents(f, func(e Event) {
			select {
			case events <- e:
			case <-done:
			}
		})
	}()
	stop := func() {
		close(done)
		f.Close() // wakes the reader
		<-errc
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	warned := false
	apply := func(e Event, now time.Time) {
		u := dev.Apply(e)
		if u == Ignore && !warned {
			d.Log.Warnf("joystick: ignoring event type 0x%02x number %d value %d (further ones are counted)", e.Type, e.Number, e.Value)
			warned = true
		}
		sched.Event(u, now)
	}
	for {
		var wake <-chan time.Time
		if next, ok := sched.Next(); ok {
			timer.Reset(time.Until(next))
			wake = timer.C
		}
		select {
		case <-ctx.Done():
			stop()
			return ctx.Err()
		case e := <-events:
			apply(e, time.Now())
		case err := <-errc:
			close(done)
			for len(events) > 0 {
				apply(<-events, time.Now())
			}
			if sched.pending {
				d.Publish(dev.State())
			}
			if errors.Is(err, io.EOF) {
				err = errors.New("end of file")
			}
			return err
		case <-wake:
		}
		if now := time.Now(); sched.Due(now) {
			d.Publish(dev.State())
			sched.Published(now)
		}
	}
}
