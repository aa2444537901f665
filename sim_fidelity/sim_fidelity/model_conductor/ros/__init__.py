"""The model conductor over ROS 2: models in nodes of their own (``model_node``,
:class:`~.remote_model.RemoteModel`), a simulator model over a ``sim_server`` in another process
(:class:`~.simulator_model.RosSimulatorModel`) and the ``model_conductor`` node (:mod:`.node`)."""
