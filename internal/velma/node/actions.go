package node

// actions wires the trajectory action servers once the client library
// provides them (see docs/velma.md); until then the node serves topics and
// services only.
func (b *Bridge) actions() error { return nil }
