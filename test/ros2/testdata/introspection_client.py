"""introspection_client: an rclpy node whose std_srvs/srv/SetBool client of
the service named on the command line has service introspection switched
on with contents (Jazzy's rclpy Client.configure_introspection, the system
default QoS as in ROS 2's demos). It calls the service with data=True
every 200 ms, one call at a time, printing "called <n>" after each answer.
"""
import sys

import rclpy
from rclpy.node import Node
from rclpy.qos import qos_profile_system_default
from rclpy.service_introspection import ServiceIntrospectionState
from std_srvs.srv import SetBool


class Caller(Node):
    def __init__(self, service):
        super().__init__('introspection_client')
        self.client = self.create_client(SetBool, service)
        self.client.configure_introspection(
            self.get_clock(), qos_profile_system_default, ServiceIntrospectionState.CONTENTS)
        self.calls = 0
        self.pending = None
        self.timer = self.create_timer(0.2, self.tick)

    def tick(self):
        if self.pending is not None or not self.client.service_is_ready():
            return
        self.pending = self.client.call_async(SetBool.Request(data=True))
        self.pending.add_done_callback(self.done)

    def done(self, future):
        self.pending = None
        self.calls += 1
        print('called %d' % self.calls, flush=True)


def main():
    rclpy.init()
    node = Caller(sys.argv[1])
    print('ready', flush=True)
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass


if __name__ == '__main__':
    main()
