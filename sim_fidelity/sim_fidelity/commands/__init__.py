"""The ``simfid`` sub-commands, one module each (listed in :mod:`sim_fidelity.cli`).

Every module has ``register(subparsers)``, which adds its sub-command with ``func`` set to the
handler ``func(args) -> exit code``. At import time a command module imports argparse and at most
the constants its options show; what a command runs (the engine, rclpy, rosbags, tqdm,
matplotlib) its handler imports, so ``simfid sim`` never loads the bag or ROS libraries.
"""
