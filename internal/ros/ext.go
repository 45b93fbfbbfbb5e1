package ros

// extensions holds the per-node state of parameters, rosout and clock
// support (the Node keeps it in its ext field).
type extensions struct{}

// Extension hooks filled in by parameters, rosout and clock support.
func (n *Node) initExtensions() error { return nil }
func (n *Node) closeExtensions()      {}
