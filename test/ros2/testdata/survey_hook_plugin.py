"""survey_hook_plugin: an rclpy plugin state for fsmnodes' rsmNode that
answers its own hooks (rsm_msgs/srv/RunStateHook on <action>/hook).

RunState 'survey' shows "E: Survey" and runs until rsmNode cancels it.
survey/hook refuses the first exploration stop (the state stays), accepts
the second (next state Idle) and leaves every other hook to rsmNode's
common handling (handled=False).
"""
import threading
import time

import rclpy
from rclpy.action import ActionServer, CancelResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from rsm_msgs.action import RunState
from rsm_msgs.srv import RunStateHook


class SurveyPlugin(Node):
    def __init__(self):
        super().__init__('survey_plugin')
        self.stops = 0
        self.lock = threading.Lock()
        group = ReentrantCallbackGroup()
        self.server = ActionServer(self, RunState, 'survey', self.execute,
                                   cancel_callback=lambda _: CancelResponse.ACCEPT, callback_group=group)
        self.hook = self.create_service(RunStateHook, 'survey/hook', self.on_hook, callback_group=group)

    def execute(self, handle):
        feedback = RunState.Feedback()
        feedback.state_name = 'E: Survey'
        handle.publish_feedback(feedback)
        while not handle.is_cancel_requested:
            time.sleep(0.05)
        handle.canceled()
        result = RunState.Result()
        result.reason = 'canceled'
        return result

    def on_hook(self, request, response):
        if request.hook == RunStateHook.Request.EXPLORATION_STOP:
            with self.lock:
                self.stops += 1
                first = self.stops == 1
            response.handled = True
            if first:
                response.success, response.message = False, 'Survey: the first stop is refused (rclpy)'
            else:
                response.success, response.message = True, 'Survey stopped (rclpy)'
                response.next_state = RunState.Result.IDLE
        return response


def main():
    rclpy.init()
    node = SurveyPlugin()
    executor = MultiThreadedExecutor()
    executor.add_node(node)
    try:
        executor.spin()
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    main()
