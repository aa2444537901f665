"""Geodetic (WGS-84 latitude, longitude, altitude) to and from a local ENU tangent plane.

The world frame of a field is ENU (x east, y north, z up, REP 103) with its origin at a known
geodetic point (an SDF world's ``<spherical_coordinates>``). The conversions go through pymap3d,
vectorised over numpy arrays; ``origin`` is anything with ``latitude``, ``longitude`` and
``altitude`` (degrees, degrees, metres above the ellipsoid), e.g.
:class:`sim_fidelity.ugv.course.GeoOrigin`.
"""
from __future__ import annotations

from typing import Protocol

import numpy as np
import pymap3d


class Origin(Protocol):
    latitude: float
    longitude: float
    altitude: float


def _check(origin: Origin) -> tuple[float, float, float]:
    lat, lon, alt = (float(origin.latitude), float(origin.longitude), float(origin.altitude))
    if not (np.isfinite([lat, lon, alt]).all() and -90.0 <= lat <= 90.0
            and -180.0 <= lon <= 180.0):
        raise ValueError(f"geodetic origin out of range: latitude {lat}, longitude {lon}, "
                         f"altitude {alt}")
    return lat, lon, alt


def geodetic_to_enu(lat, lon, alt, origin: Origin) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """East, north, up (m) of geodetic points (degrees, degrees, m) in ``origin``'s plane."""
    e, n, u = pymap3d.geodetic2enu(np.asarray(lat, float), np.asarray(lon, float),
                                   np.asarray(alt, float), *_check(origin))
    return np.asarray(e), np.asarray(n), np.asarray(u)


def enu_to_geodetic(e, n, u, origin: Origin) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Latitude, longitude (degrees) and altitude (m) of ENU points (m) in ``origin``'s plane."""
    lat, lon, alt = pymap3d.enu2geodetic(np.asarray(e, float), np.asarray(n, float),
                                         np.asarray(u, float), *_check(origin))
    return np.asarray(lat), np.asarray(lon), np.asarray(alt)
