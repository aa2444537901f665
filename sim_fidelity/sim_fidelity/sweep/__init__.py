"""Sweeps (issue 19): one sweep function over a grid of parameters, run on Ray (a local instance
by default, a cluster with ``--address``), each run one row of a resumable JSON Lines table; and
the report over that table (``simfid sweep``, ``simfid sweep report``).

``spec`` parses the YAML and ``--grid`` flags, ``functions`` is the registry of sweep functions,
``runner`` drives Ray (imported only there), ``table`` reads and appends rows, ``report`` and
``plots`` summarise them.
"""
