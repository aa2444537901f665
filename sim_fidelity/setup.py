"""ament_python package sim_fidelity."""
import os

from setuptools import find_packages, setup

PACKAGE = "sim_fidelity"


def tree(folder: str) -> list[tuple[str, list[str]]]:
    """data_files entries installing every file below ``folder`` under share/<package>/."""
    entries = []
    for root, _dirs, files in os.walk(folder):
        paths = [os.path.join(root, f) for f in files if not f.endswith((".pyc",))]
        if paths:
            entries.append((os.path.join("share", PACKAGE, root), paths))
    return entries


setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(include=[PACKAGE, PACKAGE + ".*"]),
    package_data={PACKAGE: ["py.typed"]},
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + PACKAGE]),
        ("share/" + PACKAGE, ["package.xml"]),
        *tree("launch"), *tree("config"), *tree("worlds"), *tree("models"),
    ],
    # What the code imports from PyPI; package.xml names the same through rosdep keys.
    install_requires=["numpy", "pyyaml", "mujoco>=3.3", "rosbags", "tqdm", "matplotlib",
                      "pymap3d", "pillow", "imageio[ffmpeg]", "scikit-learn", "numba"],
    extras_require={"test": ["pytest"], "sweep": ["ray"]},
    zip_safe=True,
    maintainer="sim_fidelity developers",
    maintainer_email="dev@sim-fidelity.invalid",
    description="Fidelity manager, reality-gap kernels, model conductor and an embedded MuJoCo "
                "simulator serving simulation_interfaces.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "simfid = sim_fidelity.cli:main",
            "sim_server = sim_fidelity.node_entry:sim_server",
            "fidelity_manager = sim_fidelity.node_entry:fidelity_manager",
            "kernel_manager = sim_fidelity.node_entry:kernel_manager",
            "unloading_controller = sim_fidelity.node_entry:unloading_controller",
            "model_conductor = sim_fidelity.node_entry:model_conductor",
            "model_node = sim_fidelity.node_entry:model_node",
            "ugv_mission = sim_fidelity.ugv.node:main",
        ],
        "sim_fidelity.signalers": [
            "packet = sim_fidelity.fidelity_manager.signalers.packet:PacketSignaler",
            "action = sim_fidelity.fidelity_manager.signalers.action:ActionSignaler",
            "distance = sim_fidelity.fidelity_manager.signalers.distance:DistanceSignaler",
            "joint_command = sim_fidelity.fidelity_manager.signalers.joint_command:"
            "JointCommandSignaler",
            "manual = sim_fidelity.fidelity_manager.signalers.manual:ManualSignaler",
            "schedule = sim_fidelity.fidelity_manager.signalers.schedule:ScheduleSignaler",
        ],
        # SDF <plugin filename="..."> -> script class (simulator/scripts.py)
        "sim_fidelity.scripts": [
            "sim_fidelity_suction = sim_fidelity.truck.suction:Suction",
            "sim_fidelity_conveyor = sim_fidelity.truck.conveyor:Conveyor",
        ],
        # model conductor: evaluators of trigger preconditions (model_conductor/evaluators.py)
        "sim_fidelity.evaluators": [
            "nearest_object = sim_fidelity.model_conductor.evaluators:nearest_object",
            "distance = sim_fidelity.model_conductor.evaluators:distance",
            "holder = sim_fidelity.model_conductor.evaluators:holder",
            "is_free = sim_fidelity.model_conductor.evaluators:is_free",
        ],
        # model conductor: model types of the ensemble config (model_conductor/config.py)
        "sim_fidelity.models": [
            "simulator = sim_fidelity.model_conductor.simulation_model:SimulatorModel",
            "remote = sim_fidelity.model_conductor.ros.remote_model:RemoteModel",
            "ros_simulator = sim_fidelity.model_conductor.ros.simulator_model:RosSimulatorModel",
        ],
    },
)
