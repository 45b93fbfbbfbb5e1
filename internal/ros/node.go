package ros

// Node is a ROS 2 node.
type Node struct {
	name, namespace string
	ext             extensions
}
