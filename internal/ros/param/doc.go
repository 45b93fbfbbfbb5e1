// Package param implements ROS 2 node parameters without any middleware:
// typed values (the nine rcl_interfaces parameter types), descriptors with
// read-only flags, dynamic typing and integer/floating point ranges, a Store
// with rclcpp's declare/get/set/set-atomically/undeclare/list/describe
// semantics and validators that can reject a change with a reason, and the
// override sources of a ROS 2 command line: --params-file YAML files (read
// through viper) and -p name:=value rules.
//
// Package ros adapts a Store to the six parameter services and to
// /parameter_events; this package knows nothing of DDS.
//
// Precedence of values, lowest first: the declared default, parameter files
// (wildcard node keys such as /** before exact node names; later files
// win), -p rules (global, then node-targeted). See Overrides.
//
// YAML typing follows rcl_yaml_param_parser: quoted scalars are strings;
// plain scalars are bools (true/false/yes/no/on/off in the usual cases),
// canonical integers ([-+]?[0-9]+), canonical floats (1.5, -2., .5, 1e3,
// 1.0e-3, .inf) or else strings (so 0x10 is the string "0x10"); lists
// must be homogeneous; nested maps under ros__parameters give dotted names.
// NaN is rejected everywhere; infinities are allowed. An empty list "[]"
// takes the array type of the parameter it overrides.
package param
