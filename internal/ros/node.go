package ros

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/fsmnodes/fsmnodes/internal/dds"
	"github.com/fsmnodes/fsmnodes/internal/goid"
)

// entity is something a node owns and closes (publisher, subscription,
// service, client, timer).
type entity interface {
	close() error
	// gids returns the DDS readers and writers to list in
	// ros_discovery_info.
	gids() (readers, writers []dds.GUID)
}

// Node is a ROS 2 node: a name in the graph, a set of entities and one
// callback goroutine that runs their callbacks one at a time. Create it with
// Context.NewNode.
type Node struct {
	ctx                  *Context
	name, namespace, fqn string
	loggerName           string

	logger atomic.Pointer[zap.Logger]
	// logCore is the console core; extensions tee further cores onto it.
	logCore zapcore.Core

	// ext is the state of parameters, rosout and clock support (ext.go).
	ext extensions

	// counters are the node's fault counters (counters.go).
	counters counterSet

	// intro is the node-wide introspection switch, once
	// DeclareIntrospectionParameters declared it (introspection.go).
	intro atomic.Pointer[nodeIntrospection]

	runCtx    context.Context // cancelled when the node closes
	cancelRun context.CancelFunc

	mu       sync.Mutex
	entities []entity
	tasks    []func() // tasks[taskHead:] wait to run
	taskHead int
	// exec is held by whoever runs one of the node's callbacks: the
	// callback goroutine, or the receive goroutine running one at once
	// (inbox.tryInline); execG is the latter's goroutine id meanwhile.
	exec    sync.Mutex
	execG   atomic.Uint64
	started bool
	closed  bool
	// announced is set once the extensions are up; before that, entity
	// changes do not republish the graph info and the node is not listed.
	announced bool
	wake      chan struct{} // capacity 1
	loopDone  chan struct{}
	loopG     atomic.Uint64 // goroutine id of the callback goroutine
	panics    atomic.Uint64 // callbacks that panicked

	closeOnce sync.Once
	closeErr  error
}

// NewNode creates a node. The name and namespace are remapped by the
// context's --ros-args rules (__node, __ns) and validated; "" or "foo"
// namespaces become "/" and "/foo". Extensions (parameters, /rosout, clock)
// are set up before the node is announced in the graph.
func (c *Context) NewNode(name, namespace string) (_ *Node, err error) {
	name = remapNodeName(c.args.Remaps, name)
	if err := ValidateNodeName(name); err != nil {
		return nil, fmt.Errorf("ros: NewNode: %w", err)
	}
	namespace = NormalizeNamespace(remapNamespace(c.args.Remaps, name, NormalizeNamespace(namespace)))
	if err := ValidateNamespace(namespace); err != nil {
		return nil, fmt.Errorf("ros: NewNode %s: %w", name, err)
	}
	n := &Node{
		ctx:        c,
		name:       name,
		namespace:  namespace,
		fqn:        FullyQualifiedNodeName(namespace, name),
		loggerName: LoggerName(namespace, name),
		wake:       make(chan struct{}, 1),
		loopDone:   make(chan struct{}),
	}
	n.runCtx, n.cancelRun = context.WithCancel(context.Background())
	n.logCore = c.consoleCore(n.loggerName)
	n.logger.Store(newNodeLogger(n.logCore, n.loggerName))

	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		n.cancelRun()
		return nil, ErrClosed
	}
	for _, o := range c.nodes {
		if o.fqn == n.fqn {
			// rcl only warns; two nodes with one name confuse every tool.
			n.Logger().Warnf("a node named %s already exists in this process", n.fqn)
			break
		}
	}
	c.nodes = append(c.nodes, n)
	spinning := c.spinning
	c.mu.Unlock()
	go n.loop()
	defer func() {
		if err != nil {
			n.Close()
		}
	}()
	if err := n.initExtensions(); err != nil {
		return nil, nodeError(n.fqn, err)
	}
	n.mu.Lock()
	n.announced = true
	n.mu.Unlock()
	c.publishGraphInfo()
	if spinning {
		n.start()
	}
	return n, nil
}

// Name returns the node name (after remapping).
func (n *Node) Name() string { return n.name }

// Namespace returns the node namespace ("/" or "/a/b").
func (n *Node) Namespace() string { return n.namespace }

// FullyQualifiedName returns "/ns/name".
func (n *Node) FullyQualifiedName() string { return n.fqn }

// LoggerName returns the node's logger name ("ns.name").
func (n *Node) LoggerName() string { return n.loggerName }

// Context returns the node's Context.
func (n *Node) Context() *Context { return n.ctx }

// Args returns the parsed command line of the node's Context.
func (n *Node) Args() *Args { return n.ctx.args }

// Logger returns the node's logger. Lines look like rcutils console output:
// "[INFO] [1700000000.123456789] [ns.node]: message".
func (n *Node) Logger() *zap.SugaredLogger { return n.logger.Load().Sugar() }

// teeLogCore adds a further sink (such as /rosout) to the node's logger.
// Meant for extensions; call it from initExtensions.
func (n *Node) teeLogCore(c zapcore.Core) {
	n.logger.Store(newNodeLogger(zapcore.NewTee(n.logCore, c), n.loggerName))
}

// ResolveTopicName expands a topic name for this node (~, {node}, {ns},
// relative names) and applies the remap rules; the result is a fully
// qualified name.
func (n *Node) ResolveTopicName(name string) (string, error) {
	return n.resolveName(name, false)
}

// ResolveServiceName is ResolveTopicName for service names (rosservice://
// remap rules apply instead of rostopic:// ones).
func (n *Node) ResolveServiceName(name string) (string, error) {
	return n.resolveName(name, true)
}

func (n *Node) resolveName(name string, service bool) (string, error) {
	fqn, err := ExpandTopicName(name, n.name, n.namespace)
	if err != nil {
		return "", err
	}
	return remapName(n.ctx.args.Remaps, fqn, service, n.name, n.namespace)
}

// Post queues f to run on the node's callback goroutine, after the
// callbacks already queued. It never blocks; the queue is unbounded (every
// entity keeps at most one entry in it, so only Post itself can grow it).
// Returns ErrClosed once the node is closed.
func (n *Node) Post(f func()) error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return ErrClosed
	}
	if n.taskHead > 0 && len(n.tasks) == cap(n.tasks) {
		k := copy(n.tasks, n.tasks[n.taskHead:])
		clear(n.tasks[k:])
		n.tasks, n.taskHead = n.tasks[:k], 0
	}
	n.tasks = append(n.tasks, f)
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
		// The callback goroutine may have been asleep: if this runs on
		// the receive goroutine, let it run there next (dds.Yield).
		if n.ctx != nil {
			n.ctx.part.Yield()
		}
	default:
	}
	return nil
}

// start lets the callback goroutine run callbacks (called by Spin).
func (n *Node) start() {
	n.mu.Lock()
	n.started = true
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// OnCallbackGoroutine reports whether the caller runs one of this node's
// callbacks: on the node's callback goroutine, or on the receive goroutine
// that runs a callback of an idle node at once (see
// ContextOptions.NodeGoroutineCallbacks).
func (n *Node) OnCallbackGoroutine() bool {
	g := goid.Current()
	return n.loopG.Load() == g || n.execG.Load() == g
}

// loop is the node's callback goroutine.
func (n *Node) loop() {
	defer close(n.loopDone)
	n.loopG.Store(goid.Current())
	for {
		<-n.wake
		for {
			n.exec.Lock()
			n.mu.Lock()
			if n.closed {
				n.mu.Unlock()
				n.exec.Unlock()
				return
			}
			if !n.started || n.taskHead == len(n.tasks) {
				n.mu.Unlock()
				n.exec.Unlock()
				break
			}
			f := n.tasks[n.taskHead]
			n.tasks[n.taskHead] = nil
			n.taskHead++
			if n.taskHead == len(n.tasks) {
				// Start again at the front of the array: appending to
				// its exhausted tail would allocate per task.
				n.tasks, n.taskHead = n.tasks[:0], 0
			}
			n.mu.Unlock()
			n.runTask(f)
			n.exec.Unlock()
		}
	}
}

// idle reports whether the node has started and nothing waits in its
// task queue.
func (n *Node) idle() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.started && !n.closed && n.taskHead == len(n.tasks)
}

// runTask runs one callback. A panic is logged with its stack and counted;
// unless the Context keeps running on panics, Spin then returns it.
func (n *Node) runTask(f func()) {
	defer func() {
		if r := recover(); r != nil {
			n.recordPanic("callback", r)
		}
	}()
	f()
}

// recordPanic logs and counts a recovered panic of a callback (what says
// which kind) and reports it to the Context.
func (n *Node) recordPanic(what string, r any) {
	stack := debug.Stack()
	n.panics.Add(1)
	n.Counter(CounterCallbackPanics).Inc()
	n.Logger().Errorf("%s panicked: %v\n%s", what, r, stack)
	n.ctx.callbackPanicked(&CallbackPanicError{Node: n.FullyQualifiedName(), Value: r, Stack: stack})
}

// Panics returns how many callbacks of the node have panicked.
func (n *Node) Panics() uint64 { return n.panics.Load() }

// addEntity registers an entity and republishes the graph info.
func (n *Node) addEntity(e entity) error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		e.close()
		return ErrClosed
	}
	n.entities = append(n.entities, e)
	announced := n.announced
	n.mu.Unlock()
	if announced {
		n.ctx.publishGraphInfo()
	}
	return nil
}

// removeEntity forgets a closed entity and republishes the graph info.
func (n *Node) removeEntity(e entity) {
	n.mu.Lock()
	found := false
	for i, x := range n.entities {
		if x == e {
			n.entities = append(n.entities[:i], n.entities[i+1:]...)
			found = true
			break
		}
	}
	republish := !n.closed && n.announced
	n.mu.Unlock()
	if found && republish {
		n.ctx.publishGraphInfo()
	}
}

// entitiesInfo returns the node's NodeEntitiesInfo; ok is false while the
// node is not announced yet.
func (n *Node) entitiesInfo() (_ nodeEntities, ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.announced {
		return nodeEntities{}, false
	}
	ne := nodeEntities{Namespace: n.namespace, Name: n.name}
	for _, e := range n.entities {
		r, w := e.gids()
		ne.Readers = append(ne.Readers, r...)
		ne.Writers = append(ne.Writers, w...)
	}
	return ne, true
}

// Close stops the callback goroutine (waiting for a running callback unless
// called from one), closes the extensions and every entity, and removes the
// node from the graph. It is idempotent.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		n.cancelRun()
		n.mu.Lock()
		n.closed = true
		n.tasks, n.taskHead = nil, 0
		n.mu.Unlock()
		select {
		case n.wake <- struct{}{}:
		default:
		}
		if !n.OnCallbackGoroutine() {
			<-n.loopDone
		}
		n.closeExtensions()
		n.mu.Lock()
		ents := n.entities
		n.entities = nil
		n.mu.Unlock()
		var errs []error
		for i := len(ents) - 1; i >= 0; i-- {
			if err := ents[i].close(); err != nil && !errors.Is(err, ErrClosed) && !errors.Is(err, dds.ErrClosed) {
				errs = append(errs, err)
			}
		}
		n.ctx.removeNode(n)
		n.closeErr = errors.Join(errs...)
	})
	return n.closeErr
}

// closed reports whether Close has started.
func (n *Node) isClosed() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.closed
}
