"""The Ackermann waypoint course of paper 001 (sections V-VI): a Traxxas-class UGV on two fields.

* :mod:`.course`: the course facts in one place (waypoints, GPS origin, deadline, goal radius,
  model name, world files, topic names);
* :mod:`.vehicle`: :class:`~.vehicle.UgvSim`, the vehicle on a field in process, without ROS,
  for fast missions (the same sensors and actuation ``sim_server`` serves).

The vehicle and the fields are described in ``docs/ackermann.md``.
"""
