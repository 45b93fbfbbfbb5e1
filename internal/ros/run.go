package ros

import (
	"context"
	"errors"
	"sync"
)

// Run is the whole life of a single-node executable, the one template every
// node main of this project uses: it creates a Context from args (the
// command line without the program name; its --ros-args are parsed), a
// node with the default name (remappable with -r __node:=...), calls setup
// to create the node's entities, and spins until SIGINT or SIGTERM arrives,
// ctx ends, a callback panics or a background loop fails. Then it stops the
// background loops started with Context.Go, closes the Context and runs the
// hooks registered with Context.OnShutdown. An error from setup is returned
// as a NodeError (naming the node once: setup need not name it). A node
// main is then one call:
//
//	err := ros.Run(context.Background(), os.Args[1:], "talker", setupTalker)
func Run(ctx context.Context, args []string, name string, setup func(ctx context.Context, n *Node) error) (err error) {
	rc, err := NewContext(ContextOptions{Args: args})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := rc.Close(); cerr != nil && !errors.Is(cerr, ErrClosed) {
			err = errors.Join(err, cerr)
		}
		err = errors.Join(err, rc.runShutdownHooks())
	}()
	n, err := rc.NewNode(name, "")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rc.life.mu.Lock()
	rc.life.lifetime = ctx
	rc.life.mu.Unlock()
	if err := setup(ctx, n); err != nil {
		cancel()
		rc.waitLoops()
		return nodeError(n.fqn, err)
	}
	n.Logger().Infof("%s ready", n.FullyQualifiedName())
	spinErr := rc.Spin(ctx)
	cancel()
	if lerr := rc.waitLoops(); lerr != nil {
		err = errors.Join(err, lerr)
	}
	if spinErr != nil && !errors.Is(spinErr, context.Canceled) {
		err = errors.Join(err, spinErr)
	}
	return err
}

// lifecycle holds what Go and OnShutdown registered on a Context.
type lifecycle struct {
	mu       sync.Mutex
	lifetime context.Context // ended when the Context stops spinning (Run)
	loops    sync.WaitGroup
	loopErrs []error
	hooks    []func() error
}

// Go runs loop on its own goroutine for as long as the Context runs: loop
// gets a context that ends when Run stops spinning (or, outside Run, when
// the Context is shut down). A loop that returns an error other than
// context.Canceled shuts the Context down, and Run returns the error. Use
// it for a node's work that is not a callback, e.g. a control loop with its
// own clock.
func (c *Context) Go(loop func(ctx context.Context) error) {
	c.life.mu.Lock()
	parent := c.life.lifetime
	c.life.mu.Unlock()
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	c.life.loops.Add(1)
	go func() {
		defer c.life.loops.Done()
		defer cancel()
		go func() {
			select {
			case <-c.done:
				cancel()
			case <-ctx.Done():
			}
		}()
		if err := loop(ctx); err != nil && !errors.Is(err, context.Canceled) {
			c.life.mu.Lock()
			c.life.loopErrs = append(c.life.loopErrs, err)
			c.life.mu.Unlock()
			c.Shutdown()
		}
	}()
}

// OnShutdown registers f to run when Run ends, after the background loops
// have stopped and the Context (its nodes, so no callback runs any more)
// is closed; hooks run in reverse order of registration and their errors
// are returned by Run. Use it to release what is not a ROS entity (free the
// servos, close a serial port or a file).
func (c *Context) OnShutdown(f func() error) {
	c.life.mu.Lock()
	defer c.life.mu.Unlock()
	c.life.hooks = append(c.life.hooks, f)
}

// waitLoops waits for every loop started with Go and returns their errors.
func (c *Context) waitLoops() error {
	c.life.loops.Wait()
	c.life.mu.Lock()
	defer c.life.mu.Unlock()
	return errors.Join(c.life.loopErrs...)
}

// runShutdownHooks runs the OnShutdown hooks, last registered first, once.
func (c *Context) runShutdownHooks() error {
	c.life.mu.Lock()
	hooks := c.life.hooks
	c.life.hooks = nil
	c.life.mu.Unlock()
	var errs []error
	for i := len(hooks) - 1; i >= 0; i-- {
		errs = append(errs, hooks[i]())
	}
	return errors.Join(errs...)
}
