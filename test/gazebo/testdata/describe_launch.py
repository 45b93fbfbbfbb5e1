"""Prints what a Python launch file of fsmnodes would start, without starting it.

  describe_launch.py < runs    (one run a line: <launch file> [name:=value ...])

Loads each file as `ros2 launch` does (with the ROS 2 of the environment),
evaluates its arguments, includes, groups, conditions and OpaqueFunctions in
a launch context, and prints one JSON object per process it would start:
{"kind": "process", "cmd": [...]} for ExecuteProcess, {"kind": "node",
"package", "executable", "name", "arguments", "parameters", "remappings"}
for launch_ros Nodes (parameters: file paths, and dicts with their values
as text). Each object carries the number of its run ("run"); a run that fails prints
{"kind": "error", "message"}. Nothing is executed; test/gazebo reads the output to check the
launch files for each Gazebo generation, Harmonic included, which cannot
run here.
"""
import json
import sys

from launch import LaunchContext
from launch.actions import ExecuteProcess, LogInfo
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.utilities import perform_substitutions
from launch_ros.actions import Node


def text(ctx, v):
    if isinstance(v, (list, tuple)):
        return perform_substitutions(ctx, list(v))
    if hasattr(v, 'perform'):
        return v.perform(ctx)
    return str(v)


def value(ctx, v):
    if isinstance(v, (bool, int, float)):
        return v
    s = text(ctx, getattr(v, 'value', v))
    if s.endswith('\n...\n'):  # launch_ros keeps plain strings YAML-dumped
        s = s[:-len('\n...\n')]
    return s if len(s) < 200 else f'<{len(s)} characters>'


def params(ctx, ps):
    out = []
    for p in ps or []:
        if isinstance(p, dict):
            out.append({text(ctx, k): value(ctx, v) for k, v in p.items()})
        elif hasattr(p, 'param_file'):
            out.append(text(ctx, p.param_file))
        else:
            out.append(text(ctx, p))
    return out


def walk(entity, ctx, out):
    cond = getattr(entity, 'condition', None)
    if cond is not None and not cond.evaluate(ctx):
        return
    if isinstance(entity, Node):
        out.append({'kind': 'node', 'package': text(ctx, entity._Node__package),
                    'executable': text(ctx, entity._Node__node_executable),
                    'name': text(ctx, entity._Node__node_name) if entity._Node__node_name else '',
                    'namespace': ctx.launch_configurations.get('ros_namespace', ''),
                    'arguments': [text(ctx, a) for a in entity._Node__arguments or []],
                    'parameters': params(ctx, entity._Node__parameters),
                    'remappings': [[text(ctx, a), text(ctx, b)] for a, b in entity._Node__remappings or []]})
        return
    if isinstance(entity, ExecuteProcess):
        out.append({'kind': 'process', 'cmd': [text(ctx, c) for c in entity.cmd]})
        return
    if isinstance(entity, LogInfo):
        return
    for sub in entity.visit(ctx) or []:
        walk(sub, ctx, out)


def describe(path, args):
    ctx = LaunchContext()
    for a in args:
        k, v = a.split(':=', 1)
        ctx.launch_configurations[k] = v
    out = []
    walk(PythonLaunchDescriptionSource(path).get_launch_description(ctx), ctx, out)
    return out


def main():
    # One run per line of stdin: a launch file and its name:=value arguments.
    for run, line in enumerate(sys.stdin):
        words = line.split()
        if not words:
            continue
        try:
            for o in describe(words[0], words[1:]):
                o['run'] = run
                print(json.dumps(o))
        except Exception as e:  # noqa: B902 (reported to the test, which decides)
            print(json.dumps({'kind': 'error', 'run': run, 'message': f'{type(e).__name__}: {e}'}))
        sys.stdout.flush()


if __name__ == '__main__':
    main()
