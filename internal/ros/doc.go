// Package ros is fsmnodes' ROS 2 client library on Eclipse Cyclone DDS. It
// is wire-compatible with ROS 2's rmw_cyclonedds_cpp (Jazzy by default,
// Humble when ROS_DISTRO=humble): same topic and type names, CDR bytes,
// QoS, service request header and graph information (ros_discovery_info).
//
// A Context is one DDS participant (one per process is usual). It owns Nodes;
// a Node owns Publishers, Subscriptions, Services, Clients and Timers.
// Closing a parent closes its children.
//
// Concurrency: every Node has one callback goroutine. Subscription, timer
// and service callbacks of a node run on it one at a time, so behaviour code
// needs no locks. Client.Call may be used from inside such a callback: the
// responses are delivered on the Context's receive goroutine, not on the
// node's. Publish, Call and the graph queries are safe for concurrent use.
//
// See docs/client-library.md for a tour.
package ros
