package ros

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/fsmnodes/fsmnodes/internal/dds"
)

// repeatSignalGrace is how long after a first SIGINT/SIGTERM further ones
// are taken as copies of it (ros2 launch forwards the terminal's Ctrl-C
// that its children got already) rather than as a request to exit at once.
const repeatSignalGrace = time.Second

// ErrClosed is returned by operations on a closed Context, Node or entity.
var ErrClosed = errors.New("ros: closed")

// ContextOptions configures NewContext. The zero value is valid: no
// command-line arguments, environment as found, signal handling on.
type ContextOptions struct {
	// (optional) Args is the command line without the program name
	// (usually os.Args[1:]); its --ros-args blocks are parsed. Default none.
	Args []string
	// (optional) DomainID overrides ROS_DOMAIN_ID when non-nil.
	DomainID *uint32
	// (optional) Distro overrides ROS_DISTRO ("humble" selects Humble's
	// 24-byte Gids and no type hashes; anything else is Jazzy). When both
	// are empty, the Context follows the dialect of its peers (see
	// Context.Distro).
	Distro string
	// (optional) LogOutput receives the console log lines of all nodes.
	// Default os.Stderr, or os.Stdout with RCUTILS_LOGGING_USE_STDOUT=1 (as
	// rcutils). Setting it also turns the per-process log file off unless
	// --enable-external-lib-logs is given, so tests and programs that
	// capture the output leave nothing in ~/.ros/log.
	LogOutput io.Writer
	// (optional) Getenv replaces os.Getenv for reading ROS_DOMAIN_ID,
	// ROS_DISTRO, ROS_LOCALHOST_ONLY, ROS_AUTOMATIC_DISCOVERY_RANGE,
	// ROS_STATIC_PEERS, CYCLONEDDS_URI, the RCUTILS_* console variables and
	// ROS_LOG_DIR, ROS_HOME and HOME for the log file (tests use it to stay
	// hermetic).
	Getenv func(string) string
	// (optional) NoSignals disables the SIGINT/SIGTERM handler that shuts
	// the Context down. With the handler, signals within a second of the
	// first are ignored (ros2 launch repeats the terminal's Ctrl-C); a later
	// one ends the process at once.
	NoSignals bool
	// (optional) KeepRunningOnPanic keeps the nodes running after a
	// callback panicked. A panic is always logged with its stack and
	// counted (Node.Panics); by default Spin then ends with a
	// *CallbackPanicError, as an uncaught exception ends rclcpp's spin, so
	// the process exits and a launcher's respawn or the user sees it.
	KeepRunningOnPanic bool
	// (optional) LeaseDuration, when positive, is the DDS participant lease
	// this process announces (Discovery/LeaseDuration), unless the Cyclone
	// configuration of CYCLONEDDS_URI sets one (the user's wins): how long
	// the other processes wait, hearing nothing from this one, before they
	// forget it and its endpoints. Cyclone's default is 10 s. Operator
	// tools that send goals to a robot set it short (the CLI: 2 s), so that
	// the robot's action servers notice a cut-off client within that
	// (action.ClientWatch) instead of 10 s; see docs/multihost.md.
	LeaseDuration time.Duration
	// (optional) NodeGoroutineCallbacks runs every callback on its node's
	// callback goroutine. By default the receive goroutine handles a
	// message or request that finds its node idle at once, instead of
	// waking the node's goroutine for it: a sixth to a quarter less
	// round-trip time (docs/client-library.md). A callback that runs
	// longer than dds.StallAfter there hands receiving over to another
	// goroutine, so it holds up nothing but its own node. The environment
	// variable FSMNODES_INLINE_CALLBACKS=0 sets this option too, for a node
	// one cannot rebuild.
	NodeGoroutineCallbacks bool

	// dialectWait, when set (tests in this package only), replaces both
	// waits of awaitDialect, so that a test of the start-up choice does not
	// depend on how fast discovery runs on a loaded machine.
	dialectWait time.Duration
}

// Context is one ROS 2 context: one DDS participant (USER_DATA
// "enclave=/;"), the graph cache, the ros_discovery_info writer and reader,
// and the nodes created on it. Create it with NewContext and Close it when
// done; Close closes every node and entity.
type Context struct {
	args     *Args
	dialect  *dialect
	domainID uint32
	part     *dds.Participant
	graph    *graph
	logOut   *logOutputs // console and log file of all loggers
	log      *zap.Logger // context-level logger ("rclgo"-like name "ros")

	infoMu        sync.Mutex // serialises building and writing graph info
	infoWriter    *dds.Writer
	infoReader    *dds.Reader
	infoReady     chan struct{} // closed once infoReader is set
	infoPublished bool          // under infoMu: graph info was written
	// gateArmed: the participant's reader gate is armed until the dialect
	// is settled (dialect.go, first contact).
	gateArmed atomic.Bool

	secureDir string // the enclave directory when DDS Security is on

	hb heartbeats // action clients' heartbeats (heartbeat.go)

	csidCounter atomic.Uint32 // client/service id suffix
	seq         atomic.Int64  // request sequence numbers (first is 1)

	mu       sync.Mutex
	nodes    []*Node
	closed   bool
	spinning bool

	keepOnPanic bool
	noInline    bool       // ContextOptions.NodeGoroutineCallbacks or FSMNODES_INLINE_CALLBACKS=0
	panicked    chan error // the first callback panic, for Spin
	life        lifecycle  // Go loops and OnShutdown hooks

	shutdownOnce sync.Once
	done         chan struct{} // closed by Shutdown
	stopSignals  func()
	closeOnce    sync.Once
	closeErr     error
}

// inlineOff reports whether the value of FSMNODES_INLINE_CALLBACKS turns
// inline callbacks off: 0, false, no or off, in any case.
func inlineOff(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "false", "no", "off":
		return true
	}
	return false
}

// NewContext creates a Context: it parses opts.Args, reads ROS_DOMAIN_ID,
// ROS_DISTRO, ROS_LOCALHOST_ONLY, ROS_AUTOMATIC_DISCOVERY_RANGE,
// ROS_STATIC_PEERS, CYCLONEDDS_URI and the ROS_SECURITY_* variables (as rcl:
// see planSecurity; a *SecurityError when security cannot be set up),
// creates the participant and starts graph discovery. Unless opts.NoSignals, SIGINT and SIGTERM shut it down.
func NewContext(opts ContextOptions) (_ *Context, err error) {
	args, err := ParseArgs(opts.Args)
	if err != nil {
		return nil, err
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	env, err := readEnv(getenv, opts.Distro)
	if err != nil {
		return nil, fmt.Errorf("ros: NewContext: %w", err)
	}
	if opts.DomainID != nil {
		if *opts.DomainID > MaxDomainID {
			return nil, fmt.Errorf("ros: NewContext: domain id %d is above the maximum %d", *opts.DomainID, MaxDomainID)
		}
		env.DomainID = *opts.DomainID
	}
	c := &Context{
		args:      args,
		dialect:   newDialect(env.Distro, env.DistroSet, env.DomainID),
		domainID:  env.DomainID,
		done:      make(chan struct{}),
		infoReady: make(chan struct{}),

		keepOnPanic: opts.KeepRunningOnPanic,
		noInline:    opts.NodeGoroutineCallbacks || inlineOff(getenv("FSMNODES_INLINE_CALLBACKS")),
		panicked:    make(chan error, 1),
	}
	logWarnings := c.setUpLogging(getenv, opts.LogOutput)
	c.log = newNodeLogger(c.consoleCore("rmw_cyclonedds_cpp"), "rmw_cyclonedds_cpp")
	for _, w := range env.Warnings {
		c.log.Warn(w)
	}
	defer func() {
		if err != nil {
			c.logOut.close()
		}
	}()
	if len(logWarnings) > 0 {
		l := newNodeLogger(c.consoleCore("rcl"), "rcl")
		for _, w := range logWarnings {
			l.Warn(w)
		}
	}
	if err := c.newParticipant(env, args.Enclave, opts.LeaseDuration, getenv); err != nil {
		return nil, fmt.Errorf("ros: NewContext: %w", err)
	}
	defer func() {
		if err != nil {
			c.part.Close()
		}
	}()
	c.graph = newGraph(c.part.GUID())
	if err := c.part.WatchDiscovery(c.onDiscovery); err != nil {
		return nil, fmt.Errorf("ros: NewContext: discovery: %w", err)
	}
	if !env.DistroSet {
		// Until a peer decides the dialect (see dialect.go, first contact).
		if err := c.part.GateReaders(discoveryInfoTopic, true); err != nil {
			return nil, fmt.Errorf("ros: NewContext: discovery gate: %w", err)
		}
		c.gateArmed.Store(true)
	}
	if err := c.part.WatchMatches(c.graph.matchChanged); err != nil {
		return nil, fmt.Errorf("ros: NewContext: matches: %w", err)
	}
	if err := c.initDiscoveryInfo(); err != nil {
		return nil, err
	}
	wait, quiet := dialectWait, dialectQuiet
	if opts.dialectWait > 0 {
		wait, quiet = opts.dialectWait, opts.dialectWait
	}
	if !env.DistroSet && !c.awaitDialect(wait, quiet) {
		c.log.Debug(fmt.Sprintf("ROS_DISTRO is not set and no ROS 2 peer on domain %d shows its distro yet: "+
			"speaking %s until one does", c.domainID, dialectDesc(Jazzy)))
	}
	if !opts.NoSignals {
		c.handleSignals()
	}
	go c.drainDDSLog()
	return c, nil
}

// handleSignals shuts the Context down on SIGINT or SIGTERM; a repeat
// within repeatSignalGrace is swallowed (see below), a later one gets the
// default behaviour.
func (c *Context) handleSignals() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	stop := make(chan struct{})
	var signaled atomic.Bool
	go func() {
		select {
		case <-ch:
			signaled.Store(true)
			c.Shutdown()
		case <-stop:
			return
		}
		// Ctrl-C in a terminal reaches every process of the
		// foreground group, and `ros2 launch` forwards it to its
		// children as well: a repeat right after the first signal is
		// that copy, even when it comes after Close, while main is
		// returning. Later, a second signal gets the default
		// behaviour (exit), in case shutting down hangs.
		grace := time.NewTimer(repeatSignalGrace)
		defer grace.Stop()
		for {
			select {
			case <-ch:
			case <-grace.C:
				signal.Stop(ch)
				return
			}
		}
	}()
	c.stopSignals = func() {
		// After a signal, the grace period runs on past Close.
		if !signaled.Load() {
			signal.Stop(ch)
			close(stop)
		}
	}
}

// newParticipant creates the DDS participant of the Context in its domain
// with env's configuration (a lease duration first when asked for and not
// configured otherwise) and, as rcl does, the security of enclave ("" is
// "/") when the ROS_SECURITY_* variables ask for it: a refusal is a
// *SecurityError.
func (c *Context) newParticipant(env envConfig, enclave string, lease time.Duration, getenv func(string) string) error {
	if enclave == "" {
		enclave = "/"
	}
	// Receive buffers the C heap reuses (see dds.ReceiveBufferConfig); a
	// process of rmw_cyclonedds_cpp gets the same from glibc's dynamic
	// mmap threshold. First, so that $CYCLONEDDS_URI may override it.
	config := dds.ReceiveBufferConfig + env.Config
	if lease > 0 && !strings.Contains(config, "LeaseDuration") && !uriSetsLease(getenv("CYCLONEDDS_URI")) {
		// First, so that every later fragment (the discovery settings,
		// $CYCLONEDDS_URI) overrides it.
		config = fmt.Sprintf("<CycloneDDS><Domain><Discovery><LeaseDuration>%dms</LeaseDuration></Discovery></Domain></CycloneDDS>,",
			lease.Milliseconds()) + config
	}
	sec := ReadSecuritySettings(getenv)
	plan, err := planSecurity(sec, enclave)
	if err != nil {
		return err
	}
	if plan.info != "" {
		newNodeLogger(c.consoleCore("rcl"), "rcl").Info(plan.info)
	}
	if plan.warn != "" {
		newNodeLogger(c.consoleCore("rcl"), "rcl").Warn(plan.warn)
	}
	c.secureDir = plan.dir
	c.part, err = dds.NewParticipantWithProperties(c.domainID, config, []byte("enclave="+enclave+";"), plan.props)
	if err != nil {
		if plan.props != nil {
			name := enclave
			if sec.Override != "" {
				name = sec.Override
			}
			var ce *dds.CreateError
			if errors.As(err, &ce) {
				err = fmt.Errorf("the DDS security plugins refused this enclave's files: %w", err)
			}
			err = &SecurityError{Enclave: name, Dir: plan.dir, Err: err}
		}
		return fmt.Errorf("domain %d: %w", c.domainID, err)
	}
	return nil
}

// initDiscoveryInfo creates the ros_discovery_info writer (reliable,
// transient-local, keep last 1) and reader (reliable, transient-local, keep
// all, ignore local) as rmw_cyclonedds does. A Context that follows its
// peers' dialect marks its writer with "dialect=auto;".
func (c *Context) initDiscoveryInfo() error {
	t, err := c.part.Topic(discoveryInfoTopic, discoveryInfoType)
	if err != nil {
		return fmt.Errorf("ros: %s topic: %w", discoveryInfoTopic, err)
	}
	ud := typeHashUserData(c.Distro(), discoveryInfoHash)
	if !c.dialect.explicit {
		ud += dialectAutoUserData
	}
	wq, err := QoSLatched.ddsQoS([]byte(ud), false)
	if err != nil {
		return err
	}
	if c.infoWriter, err = c.part.NewWriter(t, wq); err != nil {
		return fmt.Errorf("ros: %s writer: %w", discoveryInfoTopic, err)
	}
	rq, err := QoSLatched.KeepAll().ddsQoS([]byte(ud), true)
	if err != nil {
		return err
	}
	c.infoReader, err = c.part.NewReader(t, rq, c.onDiscoveryInfo)
	close(c.infoReady)
	if err != nil {
		return fmt.Errorf("ros: %s reader: %w", discoveryInfoTopic, err)
	}
	return nil
}

// onDiscoveryInfo takes ros_discovery_info samples (receive goroutine): it
// decodes each in the layout that fits, updates the graph, and lets the
// peers whose dialect is fixed decide or check ours.
func (c *Context) onDiscoveryInfo(batch []dds.Sample) {
	<-c.infoReady // the handler may run before NewReader has returned
	for _, s := range batch {
		// Only a sample whose writer is still matched can tell a peer's
		// dialect: its USER_DATA says whether the peer follows others, and
		// its participant must be the one the sample names.
		var writerPart dds.GUID
		known, auto := false, false
		if c.infoReader != nil {
			if ep, ok, err := c.infoReader.MatchedWriter(s.PublicationHandle); err == nil && ok {
				writerPart = ep.ParticipantKey
				known, auto = true, isAutoDialect(ep.UserData)
			}
		}
		info, peer, ok := sniffParticipantInfo(s.Data, c.Distro(), writerPart)
		if !ok {
			c.graph.malformedInfo.Add(1)
			continue
		}
		c.graph.setParticipantInfo(info)
		if !known || auto {
			continue
		}
		c.takeDialectEvent(c.dialect.observe(peer, info.GID), peer)
	}
}

// setUpLogging creates the console and log-file outputs of all loggers and
// returns warnings about the logging environment and the log file.
func (c *Context) setUpLogging(getenv func(string) string, out io.Writer) []string {
	var warn []string
	c.logOut, warn = newLogOutputs(c.args, getenv, out)
	return append(warn, c.logOut.setUpLogFile(c.args, getenv, out != nil, time.Now())...)
}

// Args returns the parsed command line (shared; do not modify).
func (c *Context) Args() *Args { return c.args }

// DomainID returns the DDS domain id in use.
func (c *Context) DomainID() uint32 { return c.domainID }

// SecureEnclaveDir returns the enclave directory whose files secure this
// Context's participant (DDS Security, as SROS2: ROS_SECURITY_ENABLE and
// the other ROS_SECURITY_* variables, docs/security.md), or "" when the
// participant is not secured.
func (c *Context) SecureEnclaveDir() string { return c.secureDir }

// Distro returns the wire dialect in use (Jazzy or Humble). It is fixed when
// ROS_DISTRO (or ContextOptions.Distro) is set. Otherwise it is the dialect
// of the ROS 2 peers found on the domain within NewContext, or Jazzy when
// none was found; then it switches once, to Humble, if a Humble peer
// appears later.
func (c *Context) Distro() Distro { return c.dialect.get() }

// GUID returns the participant's GUID (the participant gid in
// ros_discovery_info).
func (c *Context) GUID() dds.GUID { return c.part.GUID() }

// Participant returns the underlying DDS participant, for tools that need
// raw DDS access.
func (c *Context) Participant() *dds.Participant { return c.part }

// Done returns a channel closed when the Context is shut down (signal,
// Shutdown or Close).
func (c *Context) Done() <-chan struct{} { return c.done }

// Shutdown stops Spin; it does not close anything. It is idempotent and safe
// to call from callbacks.
func (c *Context) Shutdown() {
	c.shutdownOnce.Do(func() { close(c.done) })
}

// Spin starts the callback goroutines of all nodes (nodes created later
// start at once) and blocks until the Context is shut down (SIGINT,
// SIGTERM, Shutdown, Close: returns nil) or ctx is done (returns ctx.Err()).
// Callbacks do not run before Spin is called.
func (c *Context) Spin(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.spinning = true
	nodes := append([]*Node(nil), c.nodes...)
	c.mu.Unlock()
	for _, n := range nodes {
		n.start()
	}
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case err := <-c.panicked:
		return err
	}
}

// CallbackPanicError is what Spin returns when a callback of one of the
// Context's nodes panicked (unless ContextOptions.KeepRunningOnPanic).
type CallbackPanicError struct {
	Node  string // fully qualified name of the node
	Value any    // the value passed to panic
	Stack []byte // the panicking goroutine's stack
}

func (e *CallbackPanicError) Error() string {
	return fmt.Sprintf("%s: callback panicked: %v", e.Node, e.Value)
}

// callbackPanicked hands the first panic to Spin unless the Context keeps
// running on panics.
func (c *Context) callbackPanicked(err *CallbackPanicError) {
	if c.keepOnPanic {
		return
	}
	select {
	case c.panicked <- err:
	default:
	}
}

// Close shuts the Context down and closes every node (and their entities),
// the discovery endpoints and the participant. It is idempotent.
func (c *Context) Close() error {
	c.closeOnce.Do(func() {
		c.Shutdown()
		if c.stopSignals != nil {
			c.stopSignals()
		}
		c.mu.Lock()
		c.closed = true
		nodes := append([]*Node(nil), c.nodes...)
		c.mu.Unlock()
		var errs []error
		for i := len(nodes) - 1; i >= 0; i-- {
			if err := nodes[i].Close(); err != nil && !errors.Is(err, ErrClosed) {
				errs = append(errs, err)
			}
		}
		c.graph.close()
		if err := c.part.Close(); err != nil {
			errs = append(errs, err)
		}
		if err := c.logOut.close(); err != nil {
			errs = append(errs, err)
		}
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}

// publishGraphInfo publishes this participant's complete
// ParticipantEntitiesInfo (called after every node/entity change) and
// updates the local graph cache with it.
func (c *Context) publishGraphInfo() {
	c.infoMu.Lock()
	defer c.infoMu.Unlock()
	c.mu.Lock()
	info := participantInfo{GID: c.part.GUID()}
	for _, n := range c.nodes {
		if ne, ok := n.entitiesInfo(); ok {
			info.Nodes = append(info.Nodes, ne)
		}
	}
	c.mu.Unlock()
	c.graph.setParticipantInfo(info)
	c.infoPublished = true
	if err := c.infoWriter.Write(encodeParticipantInfo(info, c.Distro())); err != nil && !errors.Is(err, dds.ErrClosed) {
		c.log.Warn("publishing ros_discovery_info failed", zap.Error(err))
	}
}

// republishGraphInfo writes the graph info again (after a dialect switch)
// if it was written before, and reports whether it was.
func (c *Context) republishGraphInfo() bool {
	c.infoMu.Lock()
	published := c.infoPublished
	c.infoMu.Unlock()
	if published {
		c.publishGraphInfo()
	}
	return published
}

// removeNode forgets a closed node and republishes the graph info.
func (c *Context) removeNode(n *Node) {
	c.mu.Lock()
	for i, x := range c.nodes {
		if x == n {
			c.nodes = append(c.nodes[:i], c.nodes[i+1:]...)
			break
		}
	}
	c.mu.Unlock()
	c.publishGraphInfo()
}

// nextCSID returns a new client/service id of this participant.
func (c *Context) nextCSID() csid {
	return newCSID(c.part.GUID(), c.csidCounter.Add(1))
}

// beforeWait is called by the library's blocking calls (Client.Call,
// WaitForService, WaitForGraph, the action client's waits) before they
// wait: in a callback that runs on the receive goroutine, it lets another
// goroutine receive meanwhile, since what the call waits for comes through
// the receive goroutine (dds.Participant.HandOffNow).
func (c *Context) beforeWait() { c.part.HandOffNow() }
