"""Launch actions shared by the launch files: the Gazebo servers their ``backend`` argument
starts (for ``embedded`` each launch file starts its own ``sim_server`` Node).

* ``gz``: ros_gz_sim's ``gz_server.launch.py`` with ``world_sdf_file`` (gz-sim serves
  ``simulation_interfaces``; Kilted or newer);
* ``classic``: gazebo_ros' ``gzserver.launch.py`` with ``world`` (Gazebo 11 on Humble; the world
  must load the ``gazebo_ros_state`` and ``gazebo_ros_properties`` world plugins for the state
  and property services, see docs/gazebo_classic.md).

Used only by launch files: ``launch`` and ``launch_ros`` are imported when a function runs (they
are not installed on this machine).
"""
from __future__ import annotations

from typing import Any


def is_backend(name: str) -> Any:
    """A condition: the ``backend`` launch argument is ``name``."""
    from launch.conditions import IfCondition
    from launch.substitutions import LaunchConfiguration, PythonExpression
    return IfCondition(PythonExpression(["'", LaunchConfiguration("backend"), f"' == '{name}'"]))


STATIC_COPY_SIGTERM_S = 120  # the manager's restore of static copies (delete + spawn per tree)


def manager_sigterm_timeout() -> Any:
    """The fidelity manager's ``sigterm_timeout``: launch's 5 s for ``embedded`` (levers restore
    in one call), STATIC_COPY_SIGTERM_S for ``gz`` and ``classic``, whose static copies are given
    back one delete and spawn at a time (``restore_per_static_copy`` of the manager)."""
    from launch.substitutions import LaunchConfiguration, PythonExpression
    return PythonExpression(["'5' if '", LaunchConfiguration("backend"),
                             f"' == 'embedded' else '{STATIC_COPY_SIGTERM_S}'"])


def gazebo_servers(world: Any) -> list:
    """gz-sim's server for ``backend:=gz`` and gzserver for ``backend:=classic``, on ``world``
    (a path or a substitution)."""
    from launch.actions import IncludeLaunchDescription
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    from launch.substitutions import PathJoinSubstitution
    from launch_ros.substitutions import FindPackageShare

    def included(package: str, launch_file: str, arguments: dict, backend: str):
        return IncludeLaunchDescription(
            PythonLaunchDescriptionSource(PathJoinSubstitution(
                [FindPackageShare(package), "launch", launch_file])),
            launch_arguments=arguments.items(), condition=is_backend(backend))
    return [included("ros_gz_sim", "gz_server.launch.py", {"world_sdf_file": world}, "gz"),
            included("gazebo_ros", "gzserver.launch.py", {"world": world}, "classic")]
