"""An rclpy managed (lifecycle) node for test/ros2: our CLI drives it.

Usage: lifecycle_node.py NAME. Each transition callback prints a line
("configure", "activate", ...) and succeeds, except that a configure after
a cleanup fails, so that the test sees a failing transition.
"""
import sys

import rclpy
from rclpy.lifecycle import Node, TransitionCallbackReturn


class Managed(Node):

    def __init__(self, name):
        super().__init__(name)
        self.cleaned = False

    def say(self, what):
        print(what, flush=True)

    def on_configure(self, state):
        self.say('configure')
        if self.cleaned:
            return TransitionCallbackReturn.FAILURE
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state):
        self.say('activate')
        return super().on_activate(state)

    def on_deactivate(self, state):
        self.say('deactivate')
        return super().on_deactivate(state)

    def on_cleanup(self, state):
        self.say('cleanup')
        self.cleaned = True
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state):
        self.say('shutdown')
        return TransitionCallbackReturn.SUCCESS


def main():
    rclpy.init()
    node = Managed(sys.argv[1])
    node.say('ready')
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass


if __name__ == '__main__':
    main()
