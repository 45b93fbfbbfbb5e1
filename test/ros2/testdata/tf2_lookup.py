#!/usr/bin/env python3
"""A real tf2 buffer (tf2_ros_py) looks up frames on one robot's TF topics.

    tf2_lookup.py NS STAMP_FROM TARGET:SOURCE [TARGET:SOURCE ...]

NS is the robot's namespace (/hexapod): the listener's /tf and /tf_static
are remapped to NS/tf and NS/tf_static, as RViz users do. STAMP_FROM names
the message whose stamp the lookups use, so that both sides compute the
same instant: "joint_states" (sensor_msgs/JointState on NS/joint_states) or
"odom" (nav_msgs/Odometry on NS/odom). The script also takes NS's latched
robot_description, and prints one JSON object on stdout:

    {"robot_description": "...", "stamp": [sec, nanosec],
     "joints": {name: position}, "odom": {"p": [x, y, z], "q": [x, y, z, w]},
     "lookups": [{"target": T, "source": S, "t": [x, y, z], "q": [x, y, z, w]}]}

Exits 1 with a message on stderr when something does not arrive in time.
"""
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
import tf2_ros

WAIT = 30.0  # seconds; a failure bound


def main():
    ns, stamp_from, pairs = sys.argv[1], sys.argv[2], [p.split(":", 1) for p in sys.argv[3:]]
    rclpy.init(args=["--ros-args", "-r", "/tf:=%s/tf" % ns, "-r", "/tf_static:=%s/tf_static" % ns])
    node = rclpy.create_node("tf2_lookup")
    got = {}
    ready = threading.Event()

    def keep(key):
        def cb(msg):
            got.setdefault(key, msg)
            if "desc" in got and stamp_from in got:
                ready.set()
        return cb

    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(String, ns + "/robot_description", keep("desc"), latched)
    if stamp_from == "joint_states":
        node.create_subscription(JointState, ns + "/joint_states", keep(stamp_from), 10)
    elif stamp_from == "odom":
        node.create_subscription(Odometry, ns + "/odom", keep(stamp_from), 10)
    else:
        sys.exit("tf2_lookup.py: STAMP_FROM must be joint_states or odom, not %r" % stamp_from)
    buf = tf2_ros.Buffer()
    # spin_thread: the listener spins the node (and so the subscriptions
    # above) in its own thread, so lookups can wait here.
    tf2_ros.TransformListener(buf, node, spin_thread=True)
    if not ready.wait(WAIT):
        sys.exit("tf2_lookup.py: no robot_description and %s on %s within %.0f s" % (stamp_from, ns, WAIT))
    msg = got[stamp_from]
    stamp = Time.from_msg(msg.header.stamp)
    out = {"robot_description": got["desc"].data,
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
