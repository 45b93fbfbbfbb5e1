package rsmnode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
	"github.com/fsmnodes/fsmnodes/internal/ros/param"
	"github.com/fsmnodes/fsmnodes/internal/rsm"
)

// CallTimeout bounds every service call a node makes from its callbacks, so
// a hung server cannot stall the state machine.
const CallTimeout = 2 * time.Second

// Namespace of every RSM topic and service, relative to the node
// namespace (the original's NodeHandle("rsm")).
const Namespace = "rsm/"

// call calls a service with CallTimeout. A service without a server gives
// an error wrapping rsm.ErrUnavailable at once (no waiting).
func call[Req, Resp any](ctx context.Context, c *ros.Client[Req, Resp], req *Req) (*Resp, error) {
	if !c.ServiceIsReady() {
		return nil, fmt.Errorf("service %s: %w", c.Name(), rsm.ErrUnavailable)
	}
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	resp, err := c.Call(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("service %s: %w", c.Name(), err)
	}
	return resp, nil
}

// burst logs the first failure of a series once, with a hint, and says
// when the series ends.
type burst struct{ failing bool }

func (b *burst) fail(log rsm.Logger, format string, args ...any) {
	if !b.failing {
		b.failing = true
		log.Errorf(format, args...)
	}
}

func (b *burst) ok(log rsm.Logger, format string, args ...any) {
	if b.failing {
		b.failing = false
		log.Infof(format, args...)
	}
}

// refusals counts the requests a node answers with success=false because
// they were invalid (the node's requests_rejected counter on /diagnostics)
// and logs them, at most one line a second: a flood of bad requests costs a
// counter, not the log.
type refusals struct {
	ctr *ros.Counter
	log rsm.Logger

	mu   sync.Mutex
	last time.Time
	held uint64
}

func newRefusals(n *ros.Node) *refusals {
	return &refusals{ctr: n.Counter(ros.CounterRequestsRejected), log: n.Logger()}
}

// check counts and logs rep if it is a refusal, and returns it.
func (r *refusals) check(service string, rep rsm.Reply) rsm.Reply {
	if rep.Success {
		return rep
	}
	r.ctr.Inc()
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.last.IsZero() && now.Sub(r.last) < time.Second && !now.Before(r.last) {
		r.held++
		return rep
	}
	if r.held > 0 {
		r.log.Warnf("%s refused: %s (%d more refusals since the last report)", service, rep.Message, r.held)
	} else {
		r.log.Warnf("%s refused: %s", service, rep.Message)
	}
	r.last, r.held = now, 0
	return rep
}

// declareRate declares update_frequency (Hz), a live parameter: tickAt
// restarts the node's cycle timer at a new rate.
func declareRate(d *param.Declarer) *param.Live[float64] {
	return param.DeclareLive(d, "update_frequency", 20.0, param.Descriptor{
		Description: "Hz of the node's cycle (live: the next cycle runs at the new rate)",
		FloatRange:  param.Floats(0, 1000)}, param.Frequency)
}

// nonEmpty checks a topic, frame or action name parameter.
func nonEmpty(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("must not be empty")
	}
	return nil
}

// positiveDuration checks a duration parameter that 0 would make useless.
func positiveDuration(d time.Duration) error {
	if d <= 0 {
		return errors.New("must be above 0 s")
	}
	return nil
}

// hzPeriod converts a rate checked by declareRate to a timer period.
func hzPeriod(hz float64) time.Duration { return param.Period(hz) }

// tickAt calls cb on n's callback goroutine at hz Hz. When hz changes, the
// tick that sees the change replaces the timer by one at the new rate, so
// the next cycle runs at it.
func tickAt(n *ros.Node, hz *param.Live[float64], cb func()) error {
	var seen uint64
	var t *ros.Timer
	var tick func()
	tick = func() {
		cb()
		f, changed := hz.Changed(&seen)
		if !changed {
			return
		}
		nt, err := n.NewTimer(hzPeriod(f), tick)
		if err != nil {
			n.Logger().Errorf("update_frequency %g Hz: %v; keeping %v", f, err, t.Period())
			return
		}
		_ = t.Close()
		t = nt
		n.Logger().Infof("update_frequency now %g Hz", f)
	}
	var err error
	t, err = n.NewTimer(hzPeriod(hz.Get()), tick)
	return err
}

// ExpandPath resolves a file parameter: a leading "$ROS_HOME" or
// "${ROS_HOME}" becomes the ROS home directory (ROS_HOME, default ~/.ros, as
// ROS 2 resolves it for logs), then a leading "~" or "~/" becomes the user's
// home directory. getenv reads the environment (os.Getenv).
func ExpandPath(path string, getenv func(string) string) (string, error) {
	for _, v := range []string{"${ROS_HOME}", "$ROS_HOME"} {
		if rest, ok := strings.CutPrefix(path, v); ok && (rest == "" || rest[0] == '/') {
			home := getenv("ROS_HOME")
			if home == "" {
				home = "~/.ros"
			}
			path = home + rest
			break
		}
	}
	if path != "~" && !strings.HasPrefix(path, "~/") {
		return path, nil
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("expand %q: %w", path, err)
		}
	}
	return filepath.Join(home, strings.TrimPrefix(path, "~")), nil
}
