"""Virtual time: the one clock every part of a cluster reads, and its wire formats.

See :mod:`fakekube.clock.virtual` and :mod:`fakekube.clock.wire`. Nothing else in
fakekube reads the system clock.
"""

from fakekube.clock.virtual import DEFAULT_EPOCH, MAX_PENDING_TIMERS, Timer, VirtualClock
from fakekube.clock.wire import format_go_duration, format_micro_time, format_rfc3339, parse_time

__all__ = ["DEFAULT_EPOCH", "MAX_PENDING_TIMERS", "Timer", "VirtualClock", "format_go_duration", "format_micro_time",
           "format_rfc3339", "parse_time"]
