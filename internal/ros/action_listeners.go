package ros

// ActionListeners returns how many subscriptions in the graph listen to
// the feedback and status topics of action (a name relative to n, as
// given to NewActionServer). Every action client subscribes to both, so an
// action server uses it with action.ClientWatch to notice that the client
// of a running goal has gone.
func (n *Node) ActionListeners(action string) (int, error) {
	base, err := n.ResolveServiceName(action)
	if err != nil {
		return 0, err
	}
	c := n.Context()
	return c.CountSubscribers(base+"/_action/feedback") + c.CountSubscribers(base+"/_action/status"), nil
}
