package cli

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/fsmnodes/fsmnodes/internal/ros"
)

// session is the ROS context and node a DDS verb works with.
type session struct {
	rc   *ros.Context
	node *ros.Node
	stop context.CancelFunc
	spun chan struct{}
	once sync.Once
}

// open creates a ROS context (domain and discovery from the environment,
// as ros2 does) and a hidden node named like ros2cli's, and spins it.
func (a *App) open(ctx context.Context, base string) (*session, error) {
	return a.openNode(ctx, "_fsmnodes_"+base+"_"+strconv.Itoa(os.Getpid()))
}

// CLILease is the DDS participant lease the CLI announces (unless
// CYCLONEDDS_URI sets one): servers that watch a goal's client through the
// graph (action.ClientWatch) notice within it (plus their 0.5 s) that the
// client was cut off, instead of Cyclone's default 10 s. Servers that
// watch heartbeats (the CLI sends them while it sends a goal) notice
// within their ClientTimeout whatever the lease (docs/multihost.md).
const CLILease = 2 * time.Second

// openNode is open with the node's name given (topic pub -n).
func (a *App) openNode(ctx context.Context, name string) (*session, error) {
	return a.openNodeNS(ctx, name, "/")
}

// openNodeNS is openNode with the node's namespace given (bag play
// --node-name).
func (a *App) openNodeNS(ctx context.Context, name, namespace string) (*session, error) {
	rc, err := ros.NewContext(ros.ContextOptions{NoSignals: true, LogOutput: a.Stderr, LeaseDuration: CLILease})
	if err != nil {
		return nil, fmt.Errorf("start ROS: %w", err)
	}
	node, err := rc.NewNode(name, namespace)
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("create the CLI node: %w", err)
	}
	sctx, stop := context.WithCancel(ctx)
	s := &session{rc: rc, node: node, stop: stop, spun: make(chan struct{})}
	go func() {
		defer close(s.spun)
		_ = rc.Spin(sctx)
	}()
	return s, nil
}

// close stops spinning and closes the context (once; later calls do
// nothing).
func (s *session) close() {
	s.once.Do(func() {
		s.stop()
		<-s.spun
		s.rc.Close()
	})
}

// spinTimeFlag is the flag that bounds how long verbs that read the graph
// wait for discovery.
const spinTimeFlag = "--spin-time"

// settle waits for discovery: at least a short moment, then until the
// graph has been quiet for a while, at most max.
func (s *session) settle(ctx context.Context, max time.Duration) {
	const minWait, quiet = 300 * time.Millisecond, 250 * time.Millisecond
	deadline := time.NewTimer(max)
	defer deadline.Stop()
	start := time.Now()
	for {
		ch := s.rc.GraphChanged()
		wait := quiet
		if rest := minWait - time.Since(start); rest > wait {
			wait = rest
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-deadline.C:
			t.Stop()
			return
		case <-ch:
			t.Stop()
		case <-t.C:
			if time.Since(start) >= minWait {
				return
			}
		}
	}
}

// waitGraph waits, after settle, until cond holds or max has passed since
// the session was settled from (start): discovery on a loaded machine can
// pause longer than settle's quiet period between a participant and its
// endpoints, and a query about one name should not give up on it while
// its spin time lasts. It returns cond's last value.
func (s *session) waitGraph(ctx context.Context, start time.Time, max time.Duration, cond func() bool) bool {
	for {
		ch := s.rc.GraphChanged()
		if cond() {
			return true
		}
		rest := max - time.Since(start)
		if rest <= 0 {
			return false
		}
		t := time.NewTimer(rest)
		select {
		case <-ctx.Done():
			t.Stop()
			return cond()
		case <-t.C:
			return cond()
		case <-ch:
			t.Stop()
		}
	}
}

// spinTime reads --spin-time (seconds, default 2).
func spinTime(p *parsed) (time.Duration, error) {
	v := p.get("2", spinTimeFlag)
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 || f > 3600 {
		return 0, usagef("%s: %q is not a positive number of seconds", spinTimeFlag, v)
	}
	return time.Duration(f * float64(time.Second)), nil
}
