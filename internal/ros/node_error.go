package ros

import "errors"

// NodeError is an error of one node. The layer that knows the node (a
// Node method, NewNode, NewDeclarer, Run) wraps an error in it unless the
// error names that node already, so a message names the node once however
// many of these layers it passes through:
//
//	node /velma_core_ve_body: declare "period": wrong parameter type: ...
type NodeError struct {
	Node string // the node's fully qualified name
	Err  error
}

func (e *NodeError) Error() string { return "node " + e.Node + ": " + e.Err.Error() }

// Unwrap returns the node's error.
func (e *NodeError) Unwrap() error { return e.Err }

// nodeError wraps err (nil stays nil) in a NodeError of the node fqn
// unless a NodeError of that node is in its chain already.
func nodeError(fqn string, err error) error {
	if err == nil {
		return nil
	}
	var ne *NodeError
	if errors.As(err, &ne) && ne.Node == fqn {
		return err
	}
	return &NodeError{Node: fqn, Err: err}
}
