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
// and service callbacks of a node run one at a time and in order, so
// behaviour code needs no locks. A message or request that finds its node
// idle is handled at once on the Context's receive goroutine, which saves a
// goroutine wake-up (ContextOptions.NodeGoroutineCallbacks turns that off);
// a callback that blocks there is left to finish while another goroutine
// takes over receiving. Client.Call may be used from inside a callback: the
// responses are delivered on the receive goroutine. Publish, Call and the
// graph queries are safe for concurrent use.
//
// Time: every Node has a ROS clock (Node.Clock) that reads the system clock,
// or /clock while the node's use_sim_time parameter is true. Node.NewTimer
// makes a timer on that clock (rclcpp's create_timer): under sim time it
// stands still while the simulation is paused, fires once per period of sim
// time however fast /clock runs, and restarts its schedule when time jumps
// back past its last call. Node.NewWallTimer makes a timer on the monotonic
// wall clock (create_wall_timer) for what must run whatever the simulation
// does: heartbeats, watchdogs of other processes, device polling, and the
// simulators that publish /clock themselves. docs/sim-time.md has the rules.
//
// See docs/client-library.md for a tour.
package ros
