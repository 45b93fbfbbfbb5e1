#!/usr/bin/env python3
"""A real tf2 buffer (tf2_ros_py) looks up frames on one robot's TF topics.

    tf2_lookup.py NS STAMP_FROM TARGET:SOURCE [TARGET:SOURCE ...]

NS is the robot's namespace (/hexapod): the listener's /tf and /tf_static
are remapped to NS/tf and NS/tf_static, as RViz users do. STAMP_FROM names
the message whose stamp the lookups use, so that both sides compute the
same instant: "joint_states" (sensor_msgs/JointState on NS/joint_states) or
"odom" (nav_msgs/Odometry on NS/odom): the first message of that topic
whose stamp a transform on NS/tf carries (robot_state_publisher stamps the
transforms of a joint_states message with its stamp), so tf2 holds exactly
that instant and nothing is interpolated. The script also takes NS's
latched robot_description, and prints one JSON object on stdout:

    {"robot_description": "...", "stamp": [sec, nanosec],
     "joints": {name: position}, "odom": {"p": [x, y, z], "q": [x, y, z, w]},
     "lookups": [{"target": T, "source": S, "t": [x, y, z], "q": [x, y, z, w]}]}

Exits 1 with a message on stderr when something does not arrive in time.
"""
import collections
import json
import os
import sys
import threading
import time

import rclpy
from rclpy.duration import Duration
from rclpy.qos import DurabilityPolicy, QoSProfile
from rclpy.time import Time

from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
import tf2_ros

WAIT = 30.0  # seconds; a failure bound


def main():
    ns, stamp_from, pairs = sys.argv[1], sys.argv[2], [p.split(":", 1) for p in sys.argv[3:]]
    rclpy.init(args=["--ros-args", "-r", "/tf:=%s/tf" % ns, "-r", "/tf_static:=%s/tf_static" % ns])
    node = rclpy.create_node("tf2_lookup")
    lock = threading.Lock()
    desc = []
    msgs = collections.OrderedDict()  # (sec, nanosec) -> joint_states/odom message, the last 500
    chosen = []
    ready = threading.Event()

    def stamp_of(header):
        return (header.stamp.sec, header.stamp.nanosec)

    def on_desc(msg):
        with lock:
            desc.append(msg.data)

    def on_msg(msg):
        with lock:
            msgs[stamp_of(msg.header)] = msg
            while len(msgs) > 500:
                msgs.popitem(last=False)

    def on_tf(msg):
        # The stamp of a transform published for one of the messages kept
        # above (robot_state_publisher stamps a joint_states message's
        # transforms with its stamp; the simulator stamps odom and its
        # transform alike): tf2 holds exactly that instant.
        with lock:
            if chosen or not desc:
                return
            for t in msg.transforms:
                m = msgs.get(stamp_of(t.header))
                # tf2's own subscription may not have this message yet (it
                # may have matched later than this one): the next one then.
                if m is not None and buf.can_transform(pairs[0][0], pairs[0][1], Time.from_msg(t.header.stamp)):
                    chosen.append(m)
                    ready.set()
                    return

    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(String, ns + "/robot_description", on_desc, latched)
    if stamp_from == "joint_states":
        node.create_subscription(JointState, ns + "/joint_states", on_msg, 100)
    elif stamp_from == "odom":
        node.create_subscription(Odometry, ns + "/odom", on_msg, 100)
    else:
        sys.exit("tf2_lookup.py: STAMP_FROM must be joint_states or odom, not %r" % stamp_from)
    buf = tf2_ros.Buffer()
    # spin_thread: the listener spins the node (and so the subscriptions
    # here) in its own thread, so lookups can wait in this one.
    tf2_ros.TransformListener(buf, node, spin_thread=True)
    node.create_subscription(TFMessage, ns + "/tf", on_tf, 100)
    if not ready.wait(WAIT):
        sys.exit("tf2_lookup.py: no robot_description, or no %s/tf message stamped like a %s message, within %.0f s"
                 % (ns, stamp_from, WAIT))
    msg = chosen[0]
    stamp = Time.from_msg(msg.header.stamp)
    out = {"robot_description": desc[0],
           "stamp": [msg.header.stamp.sec, msg.header.stamp.nanosec], "lookups": []}
    if stamp_from == "joint_states":
        out["joints"] = dict(zip(msg.name, msg.position))
    else:
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        out["odom"] = {"p": [p.x, p.y, p.z], "q": [q.x, q.y, q.z, q.w]}
    for target, source in pairs:
        try:
            tf = buf.lookup_transform(target, source, stamp, timeout=Duration(seconds=WAIT))
        except Exception as e:  # tf2 raises several exception types
            sys.exit("tf2_lookup.py: %s -> %s at %s: %s" % (target, source, out["stamp"], e))
        t, r = tf.transform.translation, tf.transform.rotation
        out["lookups"].append({"target": target, "source": source,
                               "t": [t.x, t.y, t.z], "q": [r.x, r.y, r.z, r.w]})
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    t0 = time.monotonic()
    main()
    print("tf2_lookup.py: done in %.1f s" % (time.monotonic() - t0), file=sys.stderr, flush=True)
    # The listener's spin thread does not end by itself; nothing is left to
    # release that the exit does not.
    os._exit(0)
