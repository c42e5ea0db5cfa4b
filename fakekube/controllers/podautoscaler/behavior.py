"""Scaling behavior: stabilization windows and rate limits (upstream ``horizontal.go``'s
``normalizeDesiredReplicasWithBehaviors``, 1.33).

The defaults are the API's: scaling up at most ``max(4 pods, 100 %)`` per 15 s with no
stabilization; scaling down at most 100 % per 15 s, recommending the highest count of the
last 300 s. A recommendation and every scale change is remembered with its instant;
entries older than the longest window are dropped (the memory is bounded by the windows).
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any, Mapping, NamedTuple

Obj = dict[str, Any]

DEFAULT_SCALE_UP: Obj = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                         "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                                      {"type": "Percent", "value": 100, "periodSeconds": 15}]}
DEFAULT_SCALE_DOWN: Obj = {"stabilizationWindowSeconds": 300, "selectPolicy": "Max",
                           "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}
#: How far back a stored recommendation or scale event can matter (the API's maximum window
#: and period are an hour and 30 minutes).
MAX_MEMORY = timedelta(hours=1)


class Limited(NamedTuple):
    """The count to scale to, and why it differs from the recommendation (ScalingLimited)."""

    replicas: int
    reason: str
    message: str


class History:
    """One HPA's recent recommendations and scale changes."""

    __slots__ = ("recommendations", "events")

    def __init__(self) -> None:
        self.recommendations: list[tuple[datetime, int]] = []
        #: (when, replicas added: positive up, negative down).
        self.events: list[tuple[datetime, int]] = []

    def forget_before(self, cutoff: datetime) -> None:
        self.recommendations = [entry for entry in self.recommendations if entry[0] >= cutoff]
        self.events = [entry for entry in self.events if entry[0] >= cutoff]


def rules(behavior: Mapping[str, Any] | None, direction: str) -> Obj:
    """The direction's rules with the API's defaults filled in."""
    default = DEFAULT_SCALE_UP if direction == "scaleUp" else DEFAULT_SCALE_DOWN
    given = dict((behavior or {}).get(direction) or {})
    return {key: given.get(key, value) if given.get(key) is not None else value for key, value in default.items()}


def stabilized(history: History, behavior: Mapping[str, Any] | None, current: int, desired: int,
               now: datetime) -> tuple[int, str, str]:
    """``stabilizeRecommendationWithBehaviors``: the recommendation after the windows, and
    the AbleToScale reason and message when the windows changed it."""
    up_cutoff = now - timedelta(seconds=int(rules(behavior, "scaleUp")["stabilizationWindowSeconds"]))
    down_cutoff = now - timedelta(seconds=int(rules(behavior, "scaleDown")["stabilizationWindowSeconds"]))
    up, down = desired, desired
    for when, replicas in history.recommendations:
        if when > up_cutoff:
            up = min(up, replicas)
        if when > down_cutoff:
            down = max(down, replicas)
    history.recommendations.append((now, desired))
    history.forget_before(now - MAX_MEMORY)
    recommendation = min(max(current, up), down)
    if desired >= current:
        return recommendation, "ScaleUpStabilized", ("recent recommendations were lower than current one, "
                                                     "applying the lowest recent recommendation")
    return recommendation, "ScaleDownStabilized", ("recent recommendations were higher than current one, "
                                                   "applying the highest recent recommendation")


def rate_limited(history: History, behavior: Mapping[str, Any] | None, current: int, desired: int,
                 min_replicas: int, max_replicas: int, now: datetime) -> Limited:
    """``convertDesiredReplicasWithBehaviorRate``: the count after the policies and bounds."""
    if desired > current:
        limit = max(_up_limit(history, rules(behavior, "scaleUp"), current, now), current)
        if max_replicas > limit:
            allowed, why = limit, ("ScaleUpLimit", "the desired replica count is increasing faster than the "
                                                   "maximum scale rate")
        else:
            allowed, why = max_replicas, ("TooManyReplicas", "the desired replica count is more than the maximum "
                                                             "replica count")
        if desired > allowed:
            return Limited(allowed, *why)
    elif desired < current:
        limit = min(_down_limit(history, rules(behavior, "scaleDown"), current, now), current)
        if min_replicas < limit:
            allowed, why = limit, ("ScaleDownLimit", "the desired replica count is decreasing faster than the "
                                                     "maximum scale rate")
        else:
            allowed, why = min_replicas, ("TooFewReplicas", "the desired replica count is less than the minimum "
                                                            "replica count")
        if desired < allowed:
            return Limited(allowed, *why)
    return Limited(desired, "DesiredWithinRange", "the desired count is within the acceptable range")


def record_scale(history: History, previous: int, replicas: int, now: datetime) -> None:
    """Remember a scale change for the rate limits (``storeScaleEvent``)."""
    history.events.append((now, replicas - previous))
    history.forget_before(now - MAX_MEMORY)


def _up_limit(history: History, up: Mapping[str, Any], current: int, now: datetime) -> int:
    if up["selectPolicy"] == "Disabled":
        return current
    proposals = []
    for policy in up["policies"]:
        added = sum(change for when, change in history.events
                    if change > 0 and when > now - timedelta(seconds=int(policy["periodSeconds"])))
        start = current - added
        if policy["type"] == "Pods":
            proposals.append(start + int(policy["value"]))
        else:
            proposals.append(math.ceil(start * (1 + int(policy["value"]) / 100)))
    return max(proposals) if up["selectPolicy"] == "Max" else min(proposals)


def _down_limit(history: History, down: Mapping[str, Any], current: int, now: datetime) -> int:
    if down["selectPolicy"] == "Disabled":
        return current
    proposals = []
    for policy in down["policies"]:
        removed = -sum(change for when, change in history.events
                       if change < 0 and when > now - timedelta(seconds=int(policy["periodSeconds"])))
        start = current + removed
        if policy["type"] == "Pods":
            proposals.append(start - int(policy["value"]))
        else:
            proposals.append(int(start * (1 - int(policy["value"]) / 100)))  # Go's int32(): toward zero
    return min(proposals) if down["selectPolicy"] == "Max" else max(proposals)
