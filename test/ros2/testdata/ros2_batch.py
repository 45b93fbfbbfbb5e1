"""Runs several ros2 CLI calls in one Python process (test/ros2).

Reads a JSON list of {"argv": [...], "timeout": seconds} from stdin and, for
each in turn, runs ros2cli's main with that argv, its output captured. After
the timeout (default 60 s) the process sends itself SIGINT, as Ctrl-C would:
rclpy's handler wakes a spinning verb, which then stops as on Ctrl-C. Prints one JSON object per call: argv, rc (the return code, or the
error text a verb returns), stdout, stderr. Starting Python with rclpy and
ros2cli takes about a second, which batching pays once.
"""
import contextlib
import io
import json
import os
import signal
import sys
import threading

from rcl_interfaces.msg import Parameter as ParameterMsg
import rclpy
from rclpy import utilities
from ros2cli.cli import main

# Humble's `ros2 param set` assigns the parameter name to the class
# (Parameter.name = ...), replacing the property for every later use in the
# same process; it is put back after each call.
PARAMETER_NAME_PROPERTY = ParameterMsg.__dict__['name']


def reset_state():
    """Leave rclpy and the message classes as a fresh process has them.

    A verb that failed half-way may leave the default context initialized,
    and rclpy's SIGINT handler shuts it down without dropping it or the
    global executor bound to it; the next verb would reuse them.
    """
    ParameterMsg.name = PARAMETER_NAME_PROPERTY
    try:
        rclpy.try_shutdown()
    except Exception:
        pass
    if not utilities.get_default_context().ok():
        utilities.get_default_context(shutting_down=True)
    vars(rclpy)['__executor'] = None


def run(argv, timeout):
    out, err = io.StringIO(), io.StringIO()
    # A thread sends the signal: a Python handler of an alarm could not run
    # while the main thread waits inside rclpy.
    timer = threading.Timer(timeout, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    # Default buffering: main would otherwise patch print for good.
    argv_all = ['--use-python-default-buffering'] + argv
    # Command extensions whose add_arguments takes no argv parse sys.argv.
    sys.argv = ['ros2'] + argv_all
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(argv=argv_all)
    except SystemExit as e:
        rc = e.code
    except KeyboardInterrupt:
        rc = int(signal.SIGINT)
    except Exception as e:  # report, and go on with the next call
        rc = 'exception: %r' % (e,)
    finally:
        timer.cancel()
    reset_state()
    if isinstance(rc, signal.Signals):
        rc = int(rc)
    elif rc is not None and not isinstance(rc, (int, str)):
        rc = str(rc)
    return {'argv': argv, 'rc': rc, 'stdout': out.getvalue(), 'stderr': err.getvalue()}


def main_batch():
    for c in json.load(sys.stdin):
        print(json.dumps(run(c['argv'], c.get('timeout') or 60)), flush=True)


if __name__ == '__main__':
    main_batch()
