// Velocity commands as the receiving node takes them: geometry_msgs/Twist,
// or geometry_msgs/TwistStamped when the node's enable_stamped_cmd_vel
// parameter is true (Jazzy's diff_drive_controller convention; see
// docs/rsm.md#stamped-velocity-commands-jazzy). No DOM here, so the node
// tests can import it.

export const TWIST = 'geometry_msgs/msg/Twist';
export const TWIST_STAMPED = 'geometry_msgs/msg/TwistStamped';

/** The message type of a velocity command. */
export function cmdVelType(stamped) {
  return stamped ? TWIST_STAMPED : TWIST;
}

/**
 * The message to publish for twist: the twist itself, or, stamped, the twist
 * with a header stamped nowMs (milliseconds since the Unix epoch, as
 * Date.now() gives) in frame.
 */
export function cmdVelMessage(twist, stamped, nowMs, frame = 'base_link') {
  if (!stamped) return twist;
  const ms = Math.max(0, Math.floor(nowMs));
  const sec = Math.floor(ms / 1000);
  return { header: { stamp: { sec, nanosec: (ms - sec * 1000) * 1e6 }, frame_id: frame }, twist };
}
