"""Seeing the simulation: off-screen renders (stills, clips), the live viewer, fidelity colouring.

``colours`` holds the three level colours, ``scene_look`` the render copy of an engine's model
painted by level, ``offscreen`` the headless GL back-end and renderer, ``camera`` the framing,
``legend`` the key drawn into images, ``render`` stills and clips, ``viewer`` MuJoCo's passive
viewer on a running engine. Nothing here imports rclpy.
"""
