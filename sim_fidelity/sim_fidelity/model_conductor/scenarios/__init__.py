"""The conductor's scenarios of paper 003 (Sec. 4.2-4.4, Table 2): recorded grasp-and-drop and
insertion executions, the ensemble's models (in-hand model, grasp monitor, SPU connector), three
single-simulation baselines and the replays that compare them."""

# how a replay drives the robot's fingers (model_conductor/scenarios/drive.py); here, so that the
# command line can offer them without importing the simulator
FINGER_DRIVES = ("impedance", "effort", "position")
DEFAULT_FINGER_DRIVE = "impedance"
