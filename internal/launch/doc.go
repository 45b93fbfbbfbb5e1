// Package launch reads launch files in ROS 2's XML launch format and runs
// the processes they describe.
//
// Load parses a file and evaluates it (arguments, substitutions, groups,
// includes, conditions) into a Description: a list of Process values, each
// with the exact command line `ros2 launch` would use for it
// (`exe [args] --ros-args -r __node:=n -r __ns:=/ns --params-file f -r from:=to`).
// Inline <param> values are written to a temporary YAML file per node,
// keyed by the node's fully qualified name (or /** when the name or
// namespace is not fully given), as launch_ros does.
//
// Run starts every process in its own process group, prefixes each output
// line with the process label ("[talker-1] ..."), restarts processes marked
// respawn, and on cancellation stops everything: SIGINT, then SIGTERM after
// the process's sigterm timeout, then SIGKILL. It returns only when no
// process it started is left.
//
// Only the subset of the XML front-end that fsmnodes needs is implemented;
// every other tag or attribute is an error naming the file and line, so a
// file that loads here uses nothing `ros2 launch` lacks.
package launch
