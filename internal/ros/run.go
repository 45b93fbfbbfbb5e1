package ros

import (
	"context"
	"errors"
	"fmt"
)

// Run is the whole life of a single-node executable: it creates a Context
// from args (the command line without the program name; its --ros-args
// are parsed), a node with the default name (remappable with
// -r __node:=...), calls setup to create the node's entities, and spins
// until SIGINT or SIGTERM arrives or ctx ends. An error from setup is
// returned with the node's fully qualified name. A node main is then one
// call:
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
	}()
	n, err := rc.NewNode(name, "")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := setup(ctx, n); err != nil {
		return fmt.Errorf("%s: %w", n.FullyQualifiedName(), err)
	}
	n.Logger().Infof("%s ready", n.FullyQualifiedName())
	if err := rc.Spin(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
