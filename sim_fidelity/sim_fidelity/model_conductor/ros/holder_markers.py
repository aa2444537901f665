"""Which model holds each object, as RViz/Foxglove markers: a text above the object naming its
pose's holder, in the holder's colour.

The text is placed in the object's own TF frame (``sim_server`` publishes one per model on
``/tf``), so the display puts it on the object wherever the object is; no pose passes through
here. Colours are Okabe and Ito's, one per model in the ensemble's order.
"""
from __future__ import annotations

PALETTE = ((0.0, 0.447, 0.698), (0.902, 0.624, 0.0), (0.0, 0.620, 0.451), (0.800, 0.475, 0.655),
           (0.337, 0.706, 0.914), (0.835, 0.369, 0.0), (0.941, 0.894, 0.259))
HEIGHT = 0.3  # m above the object's frame
TEXT_SIZE = 0.12  # m


def holder_marker_array(holders: dict[str, str], models: list[str], stamp):
    """A ``visualization_msgs/MarkerArray`` with one text per object (namespace ``holders``, ids
    in the objects' sorted order); a DELETEALL first, so objects no one holds any more vanish."""
    from visualization_msgs.msg import Marker, MarkerArray

    out = MarkerArray(markers=[Marker(action=Marker.DELETEALL, ns="holders")])
    for i, (entity, model) in enumerate(sorted(holders.items())):
        m = Marker(ns="holders", id=i, type=Marker.TEXT_VIEW_FACING, action=Marker.ADD,
                   text=model)
        m.header.frame_id, m.header.stamp = entity, stamp
        m.pose.position.z, m.pose.orientation.w = HEIGHT, 1.0
        m.scale.z = TEXT_SIZE
        rgb = PALETTE[models.index(model) % len(PALETTE)] if model in models else (0.5, 0.5, 0.5)
        m.color.r, m.color.g, m.color.b, m.color.a = (*rgb, 1.0)
        out.markers.append(m)
    return out
