"""Generators of SDF worlds (each writes a file under the repository's ``worlds/``)."""
