"""What the Gazebo launch files of fsmnodes share: which Gazebo runs.

Not a launch file. The *_gazebo.launch.py files next to it import it.

Two Gazebo generations are supported, each with its own files under
worlds/<name>/ (written by internal/gazebo):

  fortress  Gazebo Fortress (ignition-gazebo 6), ROS 2 Humble's:
            `ign gazebo`, ignition-gazebo-*-system plugins, the ogre engine
  harmonic  Gazebo Harmonic (gz-sim 8), ROS 2 Jazzy's:
            `gz sim`, gz-sim-*-system plugins, the ogre2 engine

The launch argument gz_version picks one: a name, the Gazebo Sim major
version as ros_gz_sim's gz_version takes it (6, 8; Garden's 7 uses
Harmonic's names), or auto (the default), which asks, in this order,
GZ_VERSION (the variable ros_gz is built with, e.g. fortress), ROS_DISTRO
(humble: fortress, any later: harmonic) and which of `gz`, `ign` is on the
PATH.
"""
import os
import shutil

GENERATIONS = {
    'fortress': {'major': 6, 'command': ['ign', 'gazebo']},
    'harmonic': {'major': 8, 'command': ['gz', 'sim']},
}

_ALIASES = {
    'fortress': 'fortress', 'ignition': 'fortress', '6': 'fortress',
    'garden': 'harmonic', '7': 'harmonic', 'harmonic': 'harmonic', '8': 'harmonic',
}

WORLD_NAME = 'fsmnodes_flat'


def generation(value, environ=None, which=shutil.which):
    """Returns 'fortress' or 'harmonic' for a gz_version launch argument.

    Raises ValueError with the accepted values for anything else.
    """
    env = os.environ if environ is None else environ
    v = str(value).strip().lower()
    how = 'gz_version:=' + v
    if v in ('', 'auto'):
        if env.get('GZ_VERSION') or env.get('IGNITION_VERSION'):
            v = (env.get('GZ_VERSION') or env.get('IGNITION_VERSION')).strip().lower()
            how = 'GZ_VERSION=' + v
        elif env.get('ROS_DISTRO'):
            v = 'fortress' if env['ROS_DISTRO'] == 'humble' else 'harmonic'
            how = 'ROS_DISTRO=' + env['ROS_DISTRO']
        elif which('gz'):
            v, how = 'harmonic', '`gz` on the PATH'
        elif which('ign'):
            v, how = 'fortress', '`ign` on the PATH'
        else:
            raise ValueError('gz_version:=auto found no Gazebo (no GZ_VERSION, ROS_DISTRO, gz or ign): '
                             'pass gz_version:=fortress or gz_version:=harmonic')
    if v not in _ALIASES:
        raise ValueError(f'{how}: unknown Gazebo; want fortress (6), harmonic (8; garden, 7 use its '
                         f'files) or auto')
    return _ALIASES[v]


def share_file(share, gen, name):
    """The path of worlds/<gen>/<name> in the installed package."""
    return os.path.join(share, 'worlds', gen, name)


def truthy(value):
    """A launch argument's boolean value, as launch's conditions read it."""
    v = str(value).strip().lower()
    if v in ('true', '1'):
        return True
    if v in ('false', '0'):
        return False
    raise ValueError(f'{value!r} is not a boolean (true, false, 1, 0)')
