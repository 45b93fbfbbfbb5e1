package rsmnode

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
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

// rate declares update_frequency (Hz) and returns the timer period.
func rate(n *ros.Node) (time.Duration, error) {
	hz, err := ros.DeclareParam(n, "update_frequency", 20.0,
		ros.ParamDescriptor{Description: "Hz of the node's cycle", ReadOnly: true})
	if err != nil {
		return 0, err
	}
	if math.IsNaN(hz) || math.IsInf(hz, 0) || hz <= 0 || hz > 10000 {
		return 0, fmt.Errorf("parameter update_frequency = %v: must be in (0, 10000] Hz", hz)
	}
	return time.Duration(float64(time.Second) / hz), nil
}

// seconds declares a duration parameter given in seconds (double).
func seconds(n *ros.Node, name string, def float64, desc string) (time.Duration, error) {
	s, err := ros.DeclareParam(n, name, def, ros.ParamDescriptor{Description: desc, ReadOnly: true})
	if err != nil {
		return 0, err
	}
	if math.IsNaN(s) || math.IsInf(s, 0) || s < 0 || s > 1e6 {
		return 0, fmt.Errorf("parameter %s = %v: must be a finite number of seconds ≥ 0", name, s)
	}
	return time.Duration(s * float64(time.Second)), nil
}

// str declares a read-only string parameter.
func str(n *ros.Node, name, def, desc string) (string, error) {
	return ros.DeclareParam(n, name, def, ros.ParamDescriptor{Description: desc, ReadOnly: true})
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
