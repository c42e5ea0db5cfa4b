"""Virtual time: the one clock every part of a cluster reads.

See :mod:`fakekube.clock.virtual`. Nothing else in fakekube reads the system clock.
"""

from fakekube.clock.virtual import DEFAULT_EPOCH, VirtualClock, format_rfc3339

__all__ = ["DEFAULT_EPOCH", "VirtualClock", "format_rfc3339"]
