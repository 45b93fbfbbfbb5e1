// Package msgyaml converts between YAML text and generated ROS 2 message
// structs, the way the ros2 command line tools do.
//
// Decode fills a message from the YAML a user types for `ros2 topic pub` or
// `ros2 service call` (flow style such as '{linear: {x: 0.5}}' or block
// style). Fields are matched by the `ros:"field_name"` struct tags of the
// generated bindings; unknown fields, values of the wrong type, out-of-range
// integers and fixed arrays of the wrong length are errors that name the
// field path and the message type. Fields not mentioned keep the values the
// message already holds (its defaults).
//
// Marshal renders a message as `ros2 topic echo` prints it (PyYAML block
// style with the field order of the definition, floats as Python prints
// them, strings quoted only where PyYAML would quote them). Repr renders a
// message as Python's repr of the rclpy message, which `ros2 service call`
// prints for requests and responses.
//
// The package uses reflection only; it knows nothing of DDS or nodes.
package msgyaml
