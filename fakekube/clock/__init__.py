"""Virtual time: the one clock every part of a cluster reads.

See :mod:`fakekube.clock.virtual`. Nothing else in fakekube reads the system clock.
"""

from fakekube.clock.virtual import DEFAULT_EPOCH, MAX_PENDING_TIMERS, Timer, VirtualClock, format_rfc3339

__all__ = ["DEFAULT_EPOCH", "MAX_PENDING_TIMERS", "Timer", "VirtualClock", "format_rfc3339"]
